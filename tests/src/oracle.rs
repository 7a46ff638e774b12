//! The differential oracle's harness: runs commands under real bash, in a
//! fresh network namespace, with `PATH` holding only logging shims, and
//! reports every program bash started.
//!
//! Each shim appends its name and argv to a log and exits 0; the shims of
//! shells, wrappers and a few text tools then run the real program (by
//! absolute path), so embedded scripts and wrapped programs really start
//! and are logged in turn. A `command_not_found_handle` exported into every
//! bash records names that had no shim. Commands run from a bash driver
//! script, one `bash -c` each, under `timeout`, in a scratch directory of
//! their own, several drivers in parallel.
//!
//! Programs that write files (`cp`, `tee`, `sed`, `tar`...) run for real, and
//! each scratch directory (the command's `$HOME` too) starts with the same
//! files ([`fixtures`]): afterwards every file or directory whose change
//! time is later than the start of the run was created or changed by the
//! command ([`Run::written`], less fixtures that are still as they were). As root the commands run as `nobody`, with
//! no way to gain privileges, so the only places they can write are their
//! scratch directory and `/tmp` (`/var/tmp`, `/run/lock` and `/dev/shm` are
//! read-only in their mount namespace).

use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use crate::gen_programs::{all_names, real_path};

/// A program bash (or a program it ran) started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exec {
    pub program: String,
    pub args: Vec<String>,
    /// No shim had that name: bash looked it up and found nothing.
    pub not_found: bool,
}

/// What happened when one command ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub command: String,
    pub execs: Vec<Exec>,
    pub stderr: String,
    /// Exit status of the timeout-wrapped bash (124 or 137: timed out).
    pub status: Option<i32>,
    /// `$HOME` (and the starting directory) of the command.
    pub home: String,
    /// Processes it left behind had to be killed after it ended.
    pub reaped: bool,
    /// Files and directories under `home` the command created or changed,
    /// relative to `home`, sorted, then what it left in [`SYSTEM_DIRS`]
    /// (absolute paths): new entries (written, renamed, linked,
    /// made), and the harness's own fixtures whose type or contents changed
    /// or whose mode gained execute, setuid or group or others' write. A
    /// new directory is listed, a fixture directory only for its mode; a
    /// fixture whose times alone changed is not.
    pub written: Vec<String>,
}

impl Run {
    pub fn timed_out(&self) -> bool {
        matches!(self.status, Some(124) | Some(137))
    }

    /// bash tried to open a `/dev/tcp` or `/dev/udp` socket (the namespace
    /// has no usable network, so every attempt fails with this message).
    pub fn opened_socket(&self) -> bool {
        self.stderr.contains("connect: ")
    }
}

/// Settings of one oracle run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Parallel drivers.
    pub workers: usize,
    /// Time limit per command.
    pub per_command: Duration,
    /// Keep the scratch directory for inspection.
    pub keep: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            workers: 2,
            per_command: Duration::from_secs(5),
            keep: false,
        }
    }
}

/// How to enter a new network namespace on this machine.
/// The user commands run as when the harness is root: with root's
/// privileges a generated `sed -i ... /dev/null` replaced the machine's
/// /dev/null with a file. `nobody` can write only the scratch directory
/// (and /tmp).
const UNPRIVILEGED: &str = "65534";

/// World-writable directories besides /tmp, made read-only for the commands.
pub const READ_ONLY_DIRS: &str = "/var/tmp /run/lock /dev/shm";

/// System directories where a write plants code that runs later (OpenSSL's
/// configuration, Python's `.pth` files). As root, each gets an empty file
/// system every command may write in its mount namespace, so such a write
/// succeeds and is seen (`Run::written` lists it by its absolute path);
/// the machine's own directories are never touched.
pub const SYSTEM_DIRS: &str = "/etc/ssl /usr/lib/python3/dist-packages /usr/local/lib";

/// Whether this process runs as root.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// The command prefix that puts a driver in a fresh network namespace,
/// without root's privileges over the machine's files: as root, a network
/// namespace and then `setpriv` to `nobody`; otherwise an unprivileged user
/// namespace, where the user's own files are all it can touch.
pub fn unshare_prefix() -> Result<Vec<String>, String> {
    let mut errors = String::new();
    let mut candidates: Vec<Vec<String>> = Vec::new();
    if is_root() {
        let setpriv = locate("setpriv")?;
        let mount = locate("mount")?;
        // In a mount namespace of its own, the world-writable directories
        // other than /tmp get an empty read-only file system: a write
        // there would be one the oracle cannot see.
        let script = format!(
            "for d in {READ_ONLY_DIRS}; do \
               if [ -d \"$d\" ] && [ ! -L \"$d\" ]; then \
                 {mount} -t tmpfs -o ro,size=4k,mode=0755 bashgate-ro \"$d\" || exit 97; \
               fi; \
             done; \
             for d in {SYSTEM_DIRS}; do \
               if [ -d \"$d\" ] && [ ! -L \"$d\" ]; then \
                 {mount} -t tmpfs -o size=1m,mode=1777 bashgate-sys \"$d\" || exit 97; \
               fi; \
             done; exec \"$@\"",
            mount = mount.display()
        );
        candidates.push(
            [
                "unshare",
                "--net",
                "--mount",
                "--propagation",
                "private",
                "--",
                // bash, not dash: dash drops the exported function
                // (`BASH_FUNC_...%%`) from the environment.
                "/bin/bash",
                "--norc",
                "--noprofile",
                "-c",
                &script,
                "bash",
                &setpriv.display().to_string(),
                &format!("--reuid={UNPRIVILEGED}"),
                &format!("--regid={UNPRIVILEGED}"),
                "--clear-groups",
                "--no-new-privs",
                "--",
            ]
            .map(String::from)
            .to_vec(),
        );
    } else {
        candidates.push(
            ["unshare", "--user", "--map-root-user", "--net", "--"]
                .map(String::from)
                .to_vec(),
        );
    }
    for prefix in candidates {
        let out = Command::new(&prefix[0])
            .args(&prefix[1..])
            .args(["/bin/cat", "/proc/self/net/dev"])
            .output();
        match out {
            Ok(o) if o.status.success() => {
                let text = String::from_utf8_lossy(&o.stdout);
                let ifaces = interfaces(&text);
                if ifaces == ["lo"] {
                    return Ok(prefix);
                }
                let _ = writeln!(
                    errors,
                    "{prefix:?}: interfaces {ifaces:?}, expected only lo"
                );
            }
            Ok(o) => {
                let _ = writeln!(
                    errors,
                    "{prefix:?}: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
            }
            Err(e) => {
                let _ = writeln!(errors, "{prefix:?}: {e}");
            }
        }
    }
    Err(format!(
        "cannot create a network namespace; the oracle refuses to run commands \
         without one (run as root, or enable unprivileged user namespaces):\n{errors}"
    ))
}

/// Opens a scratch path to the unprivileged user commands run as.
fn share(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Interface names in `/proc/net/dev`.
fn interfaces(dev: &str) -> Vec<String> {
    dev.lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// Checks that a network namespace can be made here; the error says why not.
pub fn check_namespace() -> Result<(), String> {
    unshare_prefix().map(|_| ())
}

/// A scratch directory with the shims and the driver.
pub struct Sandbox {
    root: PathBuf,
    shims: PathBuf,
    keep: bool,
    fixtures: Vec<Fixture>,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

/// The function bash calls for a name it cannot find, exported as
/// `BASH_FUNC_command_not_found_handle%%`.
const NOT_FOUND_HANDLER: &str = r#"() {  printf '%s\0' "?$1" "$(($# - 1))" "${@:2}" >> "${BG_ORACLE_LOG:-/nonexistent}/nf.$BASHPID"; return 127
}"#;

impl Sandbox {
    pub fn new(keep: bool) -> std::io::Result<Sandbox> {
        static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("bashgate-oracle-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let shims = root.join("shims");
        fs::create_dir_all(&shims)?;
        fs::create_dir_all(root.join("lost"))?;
        share(&root.join("lost"), 0o777).map_err(std::io::Error::other)?;
        let sandbox = Sandbox {
            root,
            shims,
            keep,
            fixtures: fixtures(),
        };
        for name in all_names() {
            sandbox.write_shim(name, real_path(name))?;
        }
        Ok(sandbox)
    }

    /// A sandbox whose shims of `real` run the given programs for real
    /// (the script oracle runs busybox's sed and awk, and the one true awk
    /// as `nawk`); every other shim is as [`Sandbox::new`] makes it.
    pub fn with_real(keep: bool, real: &[(&str, &str)]) -> std::io::Result<Sandbox> {
        let sandbox = Sandbox::new(keep)?;
        for (name, path) in real {
            sandbox.write_shim(name, Some(path))?;
        }
        Ok(sandbox)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn write_shim(&self, name: &str, real: Option<&str>) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let lost = self.root.join("lost");
        let mut text = format!(
            "#!/bin/sh\nprintf '%s\\0' '{name}' \"$#\" \"$@\" >> \"${{BG_ORACLE_LOG:-{}}}/$$\"\n",
            lost.display()
        );
        match real {
            Some(real) => {
                let _ = writeln!(text, "exec {real} \"$@\"");
            }
            None => text.push_str("exit 0\n"),
        }
        let path = self.shims.join(name);
        fs::write(&path, text)?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
    }

    /// The driver: runs each NUL-separated command of `$1` in its own
    /// directory `$3/INDEX` (from `$2` on) and leaves there the log
    /// directory, stderr and exit status. Fd 9 stays open in everything it
    /// starts, so the caller sees EOF only when the last straggler exits.
    ///
    /// `timeout` kills its process group, but a command can leave it
    /// (`setsid`, process substitutions of a killed shell). Everything a
    /// command starts also holds `$d/alive` open on fd 8; what still holds
    /// it once the command is over gets 2 s to finish, then SIGKILL, and
    /// the command's directory gets a `reaped` file.
    fn driver(&self, per_command: Duration) -> String {
        format!(
            r#"set -u
exec 9>&1 >/dev/null
if /bin/grep -v -e '^Inter' -e '^ face' -e '^ *lo:' /proc/self/net/dev | /bin/grep -q .; then exit 98; fi
stragglers() {{
  local p
  for p in /proc/[0-9]*; do
    [[ $p/fd/8 -ef $1 ]] && printf '%s ' "${{p#/proc/}}"
  done
}}
reap() {{
  local s t
  for t in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    s=$(stragglers "$1")
    [ -z "$s" ] && return
    if [ "$t" -gt 10 ]; then
      kill -9 $s 2>/dev/null
      : >"${{1%/alive}}/reaped"
    fi
    /usr/bin/sleep 0.2
  done
}}
i=$2
while IFS= read -r -d '' cmd; do
  d="$3/$i"
  cd "$d/{PROJECT}" || exit 99
  HOME="$d" BG_ORACLE_LOG="$d/log" /usr/bin/timeout -k 1 {secs} /bin/bash -c "$cmd" </dev/null >/dev/null 2>"$d/stderr" 8>"$d/alive"
  echo $? >"$d/status"
  reap "$d/alive"
  # What it left in the system directories (writable only as root's
  # harness makes them), then cleared for the next command.
  for s in {SYSTEM_DIRS}; do
    [ -d "$s" ] && [ -w "$s" ] && /usr/bin/find "$s" -mindepth 1 -maxdepth 3 >>"$d/system" 2>/dev/null
    [ -d "$s" ] && [ -w "$s" ] && /usr/bin/find "$s" -mindepth 1 -delete 2>/dev/null
  done
  i=$((i + 1))
done <"$1"
"#,
            secs = per_command.as_secs_f64(),
        )
    }

    /// Runs every command; the result at index `i` is for `commands[i]`.
    pub fn run(&self, commands: &[String], opts: &Options) -> Result<Vec<Run>, String> {
        let prefix = unshare_prefix()?;
        let root = is_root();
        let work = self.root.join("work");
        let _ = fs::remove_dir_all(&work);
        fs::create_dir_all(&work).map_err(|e| e.to_string())?;
        for (i, c) in commands.iter().enumerate() {
            if c.contains('\0') {
                return Err(format!("command {i} contains a NUL byte"));
            }
            furnish(&work.join(i.to_string()), &self.fixtures, root)?;
        }
        // Commands may enter `work` but not list it.
        share(&work, 0o711)?;
        // Everything the commands create or change gets a change time
        // after `since`. File times come from a clock that can lag the
        // system's by a tick: the wait keeps the commands' later than it.
        let since = SystemTime::now();
        std::thread::sleep(Duration::from_millis(50));
        let driver = self.root.join("driver.sh");
        fs::write(&driver, self.driver(opts.per_command)).map_err(|e| e.to_string())?;
        let workers = opts.workers.max(1);
        let chunk = commands.len().div_ceil(workers).max(1);
        let deadline = opts.per_command.as_secs_f64() * 2.0 * chunk as f64 + 60.0;
        let (tx, rx) = mpsc::channel();
        let mut children = Vec::new();
        for (w, part) in commands.chunks(chunk).enumerate() {
            let jobs = self.root.join(format!("jobs.{w}"));
            fs::write(&jobs, part.join("\0") + "\0").map_err(|e| e.to_string())?;
            let first = w * chunk;
            let mut child = spawn_driver(&prefix, &driver, &jobs, first, &work, &self.shims)?;
            let mut out = child.stdout.take().expect("piped");
            let pid = child.id();
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut sink = Vec::new();
                let _ = out.read_to_end(&mut sink);
                let status = child.wait();
                let _ = tx.send((w, status.map(|s| s.code())));
            });
            children.push(pid);
        }
        drop(tx);
        let started = Instant::now();
        for _ in 0..children.len() {
            let left = Duration::from_secs_f64(deadline).saturating_sub(started.elapsed());
            match rx.recv_timeout(left) {
                Ok((_, Ok(Some(0)))) => {}
                Ok((w, code)) => {
                    kill_groups(&children);
                    return Err(format!(
                        "oracle driver {w} failed: {code:?} (98: not in an empty network namespace)"
                    ));
                }
                Err(_) => {
                    kill_groups(&children);
                    return Err(format!(
                        "oracle drivers still running after {deadline:.0} s"
                    ));
                }
            }
        }
        let lost = fs::read_dir(self.root.join("lost"))
            .map_err(|e| e.to_string())?
            .count();
        if lost > 0 {
            return Err(format!(
                "{lost} shim logs had no BG_ORACLE_LOG to write to: a command cleared the environment"
            ));
        }
        commands
            .iter()
            .enumerate()
            .map(|(i, c)| read_run(&work.join(i.to_string()), c, since, &self.fixtures))
            .collect()
    }
}

/// Where a program is on the harness's own `PATH`.
fn locate(program: &str) -> Result<PathBuf, String> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("`{program}` is not on PATH"))
}

/// Starts one driver in its namespace. Its environment, inherited by every
/// command, is all the commands get: `PATH` holds only the shims.
fn spawn_driver(
    prefix: &[String],
    driver: &Path,
    jobs: &Path,
    first: usize,
    work: &Path,
    shims: &Path,
) -> Result<std::process::Child, String> {
    use std::os::unix::process::CommandExt;
    Command::new(locate(&prefix[0])?)
        .args(&prefix[1..])
        .arg("/bin/bash")
        .arg(driver)
        .arg(jobs)
        .arg(first.to_string())
        .arg(work)
        .env_clear()
        .env("PATH", shims)
        .env("LC_ALL", "C")
        .env("SHELL", "/bin/bash")
        .env("FUNCNEST", "64")
        .env("BASH_FUNC_command_not_found_handle%%", NOT_FOUND_HANDLER)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the oracle driver: {e}"))
}

fn kill_groups(pids: &[u32]) {
    for pid in pids {
        let _ = Command::new("/bin/kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .status();
    }
}

/// A file or directory the harness puts in every scratch directory.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// Relative to the scratch directory; parents come first in the list.
    pub path: &'static str,
    /// `None` for a directory.
    pub contents: Option<Vec<u8>>,
    pub mode: u32,
}

/// What each scratch directory starts with: the files generated commands
/// read (`a.txt`, `lines.txt`), directories to write into (`build`,
/// `out`), protected places that exist in real homes and repositories
/// (`.git/hooks`, `.git/config`), and sources whose names or contents
/// decide what a copy or an extraction writes: `dotfiles/.bashrc`,
/// `src/.git/hooks/pre-commit` (for `cp -r src/. .`), `name.txt` (which
/// holds `.bashrc`), `pack.tar` (holding `.bashrc` and
/// `.git/hooks/pre-commit`) and `n.gz` (whose stored name is `.bashrc`).
pub fn fixtures() -> Vec<Fixture> {
    fn dir(path: &'static str) -> Fixture {
        Fixture {
            path,
            contents: None,
            mode: 0o755,
        }
    }
    fn file(path: &'static str, contents: impl Into<Vec<u8>>, mode: u32) -> Fixture {
        Fixture {
            path,
            contents: Some(contents.into()),
            mode,
        }
    }
    const SCRIPT: &str = "#!/bin/sh\necho hook\n";
    vec![
        dir("log"),
        file(".bashrc", "# the home's own\n", 0o644),
        dir("proj"),
        dir("proj/sub"),
        file("proj/a.txt", "a\nb\n", 0o644),
        file("proj/b.txt", "x\n", 0o644),
        file("proj/lines.txt", "1\n2\n3\n4\n5\n", 0o644),
        file("proj/name.txt", ".bashrc\n", 0o644),
        file("proj/hex.txt", "610a\n", 0o644),
        dir("proj/build"),
        dir("proj/out"),
        dir("proj/dotfiles"),
        file("proj/dotfiles/.bashrc", "alias ls=true\n", 0o644),
        file("proj/dotfiles/.profile", "PATH=.:$PATH\n", 0o644),
        file("proj/dotfiles/.bash_aliases", "alias cd=true\n", 0o644),
        dir("proj/tools"),
        file("proj/tools/ls", SCRIPT, 0o755),
        dir("proj/src"),
        file("proj/src/.envrc", "export A=1\n", 0o644),
        dir("proj/src/.git"),
        dir("proj/src/.git/hooks"),
        file("proj/src/.git/hooks/pre-commit", SCRIPT, 0o755),
        dir("proj/.git"),
        file("proj/.git/config", "[core]\n\tbare = false\n", 0o644),
        dir("proj/.git/hooks"),
        file("proj/.git/hooks/pre-commit.sample", SCRIPT, 0o755),
        file(
            "proj/pack.tar",
            tar(&[
                (".bashrc", b"alias ls=true\n", 0o644),
                (".git/hooks/pre-commit", SCRIPT.as_bytes(), 0o755),
            ]),
            0o644,
        ),
        file("proj/n.gz", gzip(".bashrc", b"alias ls=true\n"), 0o644),
    ]
}

/// Creates a scratch directory and its fixtures, owned by `nobody` when
/// the commands run as `nobody` (otherwise by the user the commands run as
/// in their user namespace).
fn furnish(d: &Path, fixtures: &[Fixture], as_root: bool) -> Result<(), String> {
    let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    fs::create_dir(d).map_err(|e| err(d, e))?;
    let give = |p: &Path| -> Result<(), String> {
        if as_root {
            let id: u32 = UNPRIVILEGED.parse().expect("a uid");
            std::os::unix::fs::lchown(p, Some(id), Some(id)).map_err(|e| err(p, e))?;
        }
        Ok(())
    };
    share(d, 0o755)?;
    give(d)?;
    for f in fixtures {
        let p = d.join(f.path);
        match &f.contents {
            None => fs::create_dir(&p),
            Some(bytes) => fs::write(&p, bytes),
        }
        .map_err(|e| err(&p, e))?;
        share(&p, f.mode)?;
        give(&p)?;
    }
    Ok(())
}

/// A ustar archive of regular files (no directory entries: tar creates
/// the parents of what it extracts).
fn tar(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    fn put(field: &mut [u8], text: &str) {
        field[..text.len()].copy_from_slice(text.as_bytes());
    }
    let mut out = Vec::new();
    for (name, data, mode) in files {
        let mut h = [0u8; 512];
        put(&mut h[..100], name);
        put(&mut h[100..108], &format!("{mode:07o}"));
        put(&mut h[108..116], "0001750");
        put(&mut h[116..124], "0001750");
        put(&mut h[124..136], &format!("{:011o}", data.len()));
        put(&mut h[136..148], &format!("{:011o}", 1_700_000_000u32));
        h[148..156].fill(b' ');
        h[156] = b'0';
        put(&mut h[257..265], "ustar\x0000");
        let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
        put(&mut h[148..156], &format!("{sum:06o}\x00 "));
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().next_multiple_of(512), 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// A gzip file holding `data` (one stored block) under the name `name`,
/// which `gunzip -N` restores.
fn gzip(name: &str, data: &[u8]) -> Vec<u8> {
    let len = u16::try_from(data.len()).expect("a small file");
    let mut out = vec![0x1f, 0x8b, 8, 0x08, 0, 0, 0, 0, 0, 3];
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    out.push(1);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    out.extend_from_slice(&(!crc).to_le_bytes());
    out.extend_from_slice(&u32::from(len).to_le_bytes());
    out
}

/// The directory each command starts in, below its `$HOME`: the project,
/// whose ordinary files are where a `safe` command may write.
pub const PROJECT: &str = "proj";

/// What the driver itself leaves in a scratch directory.
const HARNESS_FILES: &[&str] = &["log", "stderr", "status", "alive", "reaped", "system"];

/// The files and directories under `dir` (not following symbolic links)
/// whose status changed after `since`, relative to `dir`. Creating,
/// writing, renaming, linking a file and changing its mode all set its
/// change time, which no unprivileged program can set back.
pub fn changed_since(dir: &Path, since: SystemTime) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let since = since
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let since = (since.as_secs() as i64, i64::from(since.subsec_nanos()));
    let mut out = Vec::new();
    // (directory, its path relative to `dir`, depth)
    let mut todo = vec![(dir.to_path_buf(), String::new(), 0usize)];
    let mut seen = 0usize;
    while let Some((path, rel, depth)) = todo.pop() {
        let Ok(entries) = fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if depth == 0 && HARNESS_FILES.contains(&name.as_str()) {
                continue;
            }
            seen += 1;
            if seen > 10_000 {
                out.push(format!("{rel}... (too many files to list)"));
                todo.clear();
                break;
            }
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            let sub = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if (meta.ctime(), meta.ctime_nsec()) > since {
                out.push(sub.clone());
            }
            if meta.is_dir() && depth < 16 {
                todo.push((entry.path(), sub, depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// Whether a fixture is still what the harness made, as far as what later
/// commands run goes: the same type and contents, and no permission it did
/// not have (execute, setuid or setgid, write for group or others). New
/// times (`touch`) and a mode that only takes bits away leave it unchanged.
fn unchanged(path: &Path, fixture: &Fixture) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = path.symlink_metadata() else {
        return false;
    };
    if meta.permissions().mode() & !fixture.mode & 0o6133 != 0 {
        return false;
    }
    match &fixture.contents {
        None => meta.is_dir(),
        Some(bytes) => meta.is_file() && fs::read(path).is_ok_and(|b| b == *bytes),
    }
}

/// Reads what one command left in its directory.
fn read_run(
    dir: &Path,
    command: &str,
    since: SystemTime,
    fixtures: &[Fixture],
) -> Result<Run, String> {
    let mut execs = Vec::new();
    let mut logs: Vec<_> = fs::read_dir(dir.join("log"))
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    logs.sort();
    for log in logs {
        let bytes = fs::read(&log).map_err(|e| e.to_string())?;
        execs.extend(parse_log(&bytes).map_err(|e| format!("{}: {e}", log.display()))?);
    }
    let stderr = fs::read(dir.join("stderr"))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let status = fs::read_to_string(dir.join("status"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    Ok(Run {
        command: command.to_string(),
        execs,
        stderr,
        status,
        home: dir.display().to_string(),
        reaped: dir.join("reaped").exists(),
        written: changed_since(dir, since)
            .into_iter()
            .filter(|w| {
                fixtures
                    .iter()
                    .find(|f| f.path == w)
                    .is_none_or(|f| !unchanged(&dir.join(w), f))
            })
            .chain({
                let mut system: Vec<String> = fs::read_to_string(dir.join("system"))
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_string)
                    .collect();
                system.sort();
                system
            })
            .collect(),
    })
}

/// Records of `NAME \0 ARGC \0 ARG... \0`; a `?` before the name marks a
/// name bash could not find.
pub fn parse_log(bytes: &[u8]) -> Result<Vec<Exec>, String> {
    let text = String::from_utf8_lossy(bytes);
    let mut fields = text.split('\0');
    let mut out = Vec::new();
    while let Some(name) = fields.next() {
        if name.is_empty() {
            break;
        }
        let argc: usize = fields
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("record for `{name}` has no argument count"))?;
        let mut args = Vec::with_capacity(argc);
        for _ in 0..argc {
            args.push(
                fields
                    .next()
                    .ok_or_else(|| format!("record for `{name}` is cut short"))?
                    .to_string(),
            );
        }
        let (program, not_found) = match name.strip_prefix('?') {
            Some(n) => (n.to_string(), true),
            None => (name.to_string(), false),
        };
        out.push(Exec {
            program,
            args,
            not_found,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_parse() {
        let log = b"curl\x002\x00-d\x00@-\x00?frob\x000\x00ls\x000\x00";
        assert_eq!(
            parse_log(log).unwrap(),
            vec![
                Exec {
                    program: "curl".into(),
                    args: vec!["-d".into(), "@-".into()],
                    not_found: false
                },
                Exec {
                    program: "frob".into(),
                    args: vec![],
                    not_found: true
                },
                Exec {
                    program: "ls".into(),
                    args: vec![],
                    not_found: false
                },
            ]
        );
        assert!(parse_log(b"curl\x003\x00a\x00").is_err());
    }

    #[test]
    fn interfaces_are_read() {
        let dev = "Inter-|   Receive\n face |bytes\n    lo:  0 0\n  eth0: 1 2\n";
        assert_eq!(interfaces(dev), vec!["lo", "eth0"]);
    }
}
