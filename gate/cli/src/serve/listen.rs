//! The daemon's sockets. The admin socket is created mode 0600 in a
//! directory only its owner can write, and accepts connections only from
//! processes of the same user. The container socket (mode 0666, so
//! containers running as other users can connect; every request still needs
//! a session token) or loopback TCP port is the one handed to containers.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::serve::Listener;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, UnixListener, UnixStream};
use tokio::sync::Semaphore;

use bashgate::endpoint::Target;

/// This process's user id (the owner of a file it creates).
fn my_uid() -> Result<u32, String> {
    let f = tempfile::tempfile().map_err(|e| format!("cannot create a temporary file: {e}"))?;
    f.metadata()
        .map(|m| m.uid())
        .map_err(|e| format!("cannot read a temporary file's owner: {e}"))
}

/// Removes a socket left by a daemon that did not stop cleanly; refuses to
/// replace a live socket or anything that is not a socket.
fn clear_stale(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot inspect {}: {e}", path.display())),
        Ok(m) if m.file_type().is_socket() => {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(format!(
                    "another process is listening on {}; stop the other `bashgate serve` first",
                    path.display()
                ));
            }
            std::fs::remove_file(path)
                .map_err(|e| format!("cannot remove the stale socket {}: {e}", path.display()))
        }
        Ok(_) => Err(format!(
            "{} exists and is not a socket; move it away or choose another path",
            path.display()
        )),
    }
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot set the mode of {}: {e}", path.display()))
}

/// Accepts only connections from processes of the socket owner's user.
pub struct AdminListener {
    inner: UnixListener,
    uid: u32,
}

impl Listener for AdminListener {
    type Io = UnixStream;
    type Addr = tokio::net::unix::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, addr) = Listener::accept(&mut self.inner).await;
            match stream.peer_cred() {
                Ok(c) if c.uid() == self.uid => return (stream, addr),
                Ok(c) => eprintln!(
                    "bashgate serve: refused an admin connection from uid {} (only uid {} may use the admin socket)",
                    c.uid(),
                    self.uid
                ),
                Err(e) => eprintln!(
                    "bashgate serve: refused an admin connection whose peer is unknown: {e}"
                ),
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// Binds the admin socket. Its directory is created 0700 if missing; an
/// existing directory must belong to this user and not be writable by
/// group or others (or anyone could replace the socket).
pub fn admin(path: &Path) -> Result<AdminListener, String> {
    let uid = my_uid()?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let m = std::fs::metadata(dir).map_err(|e| format!("cannot inspect {}: {e}", dir.display()))?;
    if m.uid() != uid {
        return Err(format!(
            "the admin socket's directory {} belongs to uid {}, not to this user (uid {uid}); choose a directory you own (serve.admin_socket)",
            dir.display(),
            m.uid()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!(
            "the admin socket's directory {} is writable by group or others (mode {:o}); run `chmod go-w {}` or choose another directory (serve.admin_socket)",
            dir.display(),
            m.mode() & 0o7777,
            dir.display()
        ));
    }
    clear_stale(path)?;
    let inner = UnixListener::bind(path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    set_mode(path, 0o600)?;
    Ok(AdminListener { inner, uid })
}

/// The container API's listener.
pub enum ContainerListener {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

pub async fn container(target: &Target) -> Result<ContainerListener, String> {
    match target {
        Target::Tcp(addr) => {
            let l = TcpListener::bind(addr.as_str())
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            if let Ok(a) = l.local_addr() {
                if !a.ip().is_loopback() {
                    eprintln!(
                        "bashgate serve: warning: the container API listens on {a}, which is not loopback; \
                         tokens travel unencrypted, so prefer a unix socket mounted into the containers"
                    );
                }
            }
            Ok(ContainerListener::Tcp(l))
        }
        Target::Unix(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            clear_stale(path)?;
            let l = UnixListener::bind(path)
                .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
            set_mode(path, 0o666)?;
            Ok(ContainerListener::Unix(l, path.clone()))
        }
    }
}

impl ContainerListener {
    /// The URL a client uses.
    pub fn describe(&self) -> String {
        match self {
            ContainerListener::Tcp(l) => match l.local_addr() {
                Ok(a) => format!("http://{a}"),
                Err(_) => "tcp (address unknown)".into(),
            },
            ContainerListener::Unix(_, p) => format!("unix:{}", p.display()),
        }
    }

    pub fn socket_path(&self) -> Option<PathBuf> {
        match self {
            ContainerListener::Unix(_, p) => Some(p.clone()),
            ContainerListener::Tcp(_) => None,
        }
    }

    pub async fn serve(self, router: Router) {
        match self {
            ContainerListener::Tcp(l) => {
                use axum::serve::ListenerExt;
                let l = l.tap_io(|s| {
                    let _ = s.set_nodelay(true);
                });
                serve(l, router).await
            }
            ContainerListener::Unix(l, _) => serve(PerPeer::new(l), router).await,
        }
    }
}

/// At most this many connections from one process (a unix socket's peer)
/// are open at once; more are closed as soon as they are accepted, so one
/// process cannot take every slot.
pub const PER_PEER: usize = 64;
/// At most this many from all the processes of one user together: many
/// processes of one container (one user) cannot take every slot either,
/// and containers running as other users keep theirs.
pub const PER_USER: usize = MAX_CONNECTIONS / 4;

/// Open connections by peer process and by peer user.
#[derive(Default)]
pub struct Caps {
    by_pid: HashMap<i32, usize>,
    by_uid: HashMap<u32, usize>,
}

impl Caps {
    /// Counts a connection from `pid` of user `uid`, unless either is at its
    /// cap.
    fn admit(&mut self, pid: i32, uid: u32) -> bool {
        let (p, u) = (
            self.by_pid.get(&pid).copied().unwrap_or(0),
            self.by_uid.get(&uid).copied().unwrap_or(0),
        );
        if p >= PER_PEER || u >= PER_USER {
            return false;
        }
        self.by_pid.insert(pid, p + 1);
        self.by_uid.insert(uid, u + 1);
        true
    }

    fn release(&mut self, pid: i32, uid: u32) {
        if let Some(n) = self.by_pid.get_mut(&pid) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_pid.remove(&pid);
            }
        }
        if let Some(n) = self.by_uid.get_mut(&uid) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_uid.remove(&uid);
            }
        }
    }
}

/// A unix listener that caps the connections each peer process, and each
/// peer user, holds.
pub struct PerPeer {
    inner: UnixListener,
    open: Arc<Mutex<Caps>>,
}

impl PerPeer {
    fn new(inner: UnixListener) -> PerPeer {
        PerPeer {
            inner,
            open: Arc::default(),
        }
    }
}

/// A connection counted against its peer until it is dropped.
pub struct Counted {
    stream: UnixStream,
    peer: (i32, u32),
    open: Arc<Mutex<Caps>>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.release(self.peer.0, self.peer.1);
    }
}

impl tokio::io::AsyncRead for Counted {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Counted {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl Listener for PerPeer {
    type Io = Counted;
    type Addr = tokio::net::unix::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, addr) = Listener::accept(&mut self.inner).await;
            // A peer whose process (or user) is unknown counts as one peer.
            let cred = stream.peer_cred().ok();
            let peer = (
                cred.and_then(|c| c.pid()).unwrap_or(-1),
                cred.map_or(u32::MAX, |c| c.uid()),
            );
            if !self
                .open
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .admit(peer.0, peer.1)
            {
                continue;
            }
            let open = self.open.clone();
            return (Counted { stream, peer, open }, addr);
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// At most this many connections are served at once per listener; more
/// wait to be accepted.
pub const MAX_CONNECTIONS: usize = 1024;
/// A client must send a request's headers within this time.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves HTTP/1.1 on every accepted connection, bounded: a connection cap,
/// and a deadline for request headers, so a client that connects and says
/// nothing (or trickles) cannot hold the daemon's descriptors forever.
pub async fn serve<L: Listener>(mut listener: L, router: Router) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let (io, _) = listener.accept().await;
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT);
            let _ = http.serve_connection(TokioIo::new(io), service).await;
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_processes_of_one_user_cannot_take_every_slot() {
        let mut caps = Caps::default();
        // One container (uid 0) with twenty processes, each at its cap.
        let mut admitted = 0;
        for pid in 1..=20 {
            for _ in 0..PER_PEER {
                admitted += usize::from(caps.admit(pid, 0));
            }
        }
        assert_eq!(admitted, PER_USER);
        assert!(admitted < MAX_CONNECTIONS);
        // Another container (another user) is still let in, up to its own
        // caps.
        assert!(caps.admit(100, 1000));
        // One released, one more of the first user's.
        caps.release(1, 0);
        assert!(caps.admit(21, 0));
        assert!(!caps.admit(22, 0));
    }
}
