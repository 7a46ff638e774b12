//! How one shell command is to run, as the hook decided it, left for the
//! client's shell wrapper (`bashgate-shell`).
//!
//! A client's own permission rules judge the text of the command the agent
//! wrote, so the hook must not change that text to fence a command. Where
//! the client runs every shell command through a wrapper of the person's
//! choosing (the client table's `shell_prefix_env`), the hook leaves a
//! ticket instead: keyed by the session and the command's exact text, it
//! says whether the command runs as it is or fenced, and how. The wrapper
//! takes it when the client, its own rules satisfied, runs that text.
//!
//! Tickets live in the person's state directory, which a fenced command
//! cannot write.
//!
//! A ticket to run a command as it is must not outlive the call it was
//! made for: the client may run a different text than its hook was shown
//! (one client rewrites `>nul` to `>/dev/null` after the hook), and a
//! ticket for a command the person declined would then let another
//! command's text through unfenced. So a session holds one such ticket at
//! most, and every new call's hook removes it ([`Tickets::supersede`]).
//! A ticket to fence is kept per text: taken by the wrong command, it only
//! fences that one.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::rewrite::FencingSpec;
use crate::taint::{hex, Store};

/// What the hook decided for one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "run", rename_all = "lowercase")]
pub enum HowToRun {
    /// As it is: the gate let it through unfenced, or the person was asked.
    Plain,
    /// Under `bashgate run`, as the hook anchored it.
    Fenced(FencingSpec),
}

#[derive(Serialize, Deserialize)]
struct Ticket {
    /// The exact text, checked on taking (the file name is its hash).
    command: String,
    #[serde(flatten)]
    how: HowToRun,
}

/// The tickets under a state directory.
pub struct Tickets {
    dir: PathBuf,
}

/// The one ticket of a session to run a command as it is.
const AS_IT_IS: &str = "as-it-is";

/// The mark of a session whose decisions a daemon makes: its taint is not
/// here, so a command the hook left no ticket for is not judged here.
const ELSEWHERE: &str = "decided-elsewhere";

impl Tickets {
    pub fn new(state_dir: &Path) -> Tickets {
        Tickets {
            dir: state_dir.join("runs"),
        }
    }

    fn session_dir(&self, session: &str) -> PathBuf {
        self.dir.join(Store::stem(session))
    }

    fn path(&self, session: &str, command: &str) -> PathBuf {
        let h = Sha256::digest(command.as_bytes());
        self.session_dir(session).join(hex(&h[..16]))
    }

    /// Where the ticket for `command` would be, by what it says.
    fn slot(&self, session: &str, command: &str, how: &HowToRun) -> PathBuf {
        match how {
            HowToRun::Plain => self.session_dir(session).join(AS_IT_IS),
            HowToRun::Fenced(_) => self.path(session, command),
        }
    }

    /// Leaves the decision for `command` in `session`, replacing any
    /// earlier one for the same text (and, to run as it is, any other).
    pub fn leave(&self, session: &str, command: &str, how: &HowToRun) -> io::Result<()> {
        let dir = self.session_dir(session);
        crate::private::create_dir(&dir)?;
        let ticket = Ticket {
            command: command.to_string(),
            how: how.clone(),
        };
        let bytes = serde_json::to_vec(&ticket).map_err(io::Error::other)?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(&dir)?;
        tmp.write_all(&bytes)?;
        tmp.persist(self.slot(session, command, how))
            .map_err(|e| e.error)?;
        Ok(())
    }

    /// Removes the session's ticket to run a command as it is: a new call
    /// has begun, so the call it was for is over (run, or refused).
    pub fn supersede(&self, session: &str) -> io::Result<()> {
        let slot = self.session_dir(session).join(AS_IT_IS);
        match fs::remove_file(&slot) {
            Ok(()) => Ok(()),
            // What cannot be there (no such file, or a state directory
            // that is not one) need not be removed.
            Err(e) => match fs::symlink_metadata(&slot) {
                Err(m)
                    if matches!(
                        m.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    Ok(())
                }
                _ => Err(e),
            },
        }
    }

    /// The ticket at `path` when it is for exactly `command`.
    fn read(path: &Path, command: &str) -> io::Result<Option<HowToRun>> {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let ticket: Ticket = serde_json::from_slice(&bytes).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a decision bashgate wrote ({e})", path.display()),
            )
        })?;
        Ok((ticket.command == command).then_some(ticket.how))
    }

    /// Takes the decision left for `command` in `session`: `None` when
    /// there is none; an error when one is there and cannot be read (the
    /// caller must not run the command then).
    pub fn take(&self, session: &str, command: &str) -> io::Result<Option<HowToRun>> {
        for path in [
            self.path(session, command),
            self.session_dir(session).join(AS_IT_IS),
        ] {
            if let Some(how) = Tickets::read(&path, command)? {
                // Read once. Two calls of the same text at once may both
                // read it: the hook decided the same for both.
                match fs::remove_file(&path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => return Ok(Some(how)),
                }
            }
        }
        Ok(None)
    }

    /// The decision left for `command` in `session`, without taking it.
    pub fn peek(&self, session: &str, command: &str) -> io::Result<Option<HowToRun>> {
        match Tickets::read(&self.path(session, command), command)? {
            Some(how) => Ok(Some(how)),
            None => Tickets::read(&self.session_dir(session).join(AS_IT_IS), command),
        }
    }

    /// Marks that this session's decisions are a daemon's (see
    /// [`Tickets::decided_elsewhere`]).
    pub fn mark_decided_elsewhere(&self, session: &str) -> io::Result<()> {
        let dir = self.session_dir(session);
        let mark = dir.join(ELSEWHERE);
        if mark.exists() {
            return Ok(());
        }
        crate::private::create_dir(&dir)?;
        fs::write(mark, b"")
    }

    pub fn decided_elsewhere(&self, session: &str) -> bool {
        self.session_dir(session).join(ELSEWHERE).exists()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_is_for_its_session_and_exact_text_and_is_read_once() {
        let d = tempfile::tempdir().unwrap();
        let t = Tickets::new(d.path());
        let fenced = HowToRun::Fenced(FencingSpec {
            profile: "default".into(),
            tree: Some("/p".into()),
            state_dir: d.path().to_path_buf(),
            config: None,
        });
        t.leave("s1", "make test", &fenced).unwrap();
        t.leave("s1", "git push", &HowToRun::Plain).unwrap();
        assert_eq!(t.take("s2", "make test").unwrap(), None);
        assert_eq!(t.take("s1", "make test ").unwrap(), None);
        assert_eq!(t.peek("s1", "make test").unwrap(), Some(fenced.clone()));
        assert_eq!(t.take("s1", "make test").unwrap(), Some(fenced.clone()));
        assert_eq!(t.peek("s1", "make test").unwrap(), None);
        assert_eq!(t.take("s1", "make test").unwrap(), None);
        assert_eq!(t.take("s1", "git push").unwrap(), Some(HowToRun::Plain));
        // A later decision replaces an earlier one.
        t.leave("s1", "x", &fenced).unwrap();
        assert_eq!(t.take("s1", "x").unwrap(), Some(fenced.clone()));
        // A session holds one ticket to run as it is, and the next call's
        // hook removes it; a ticket to fence stays for its text.
        t.leave("s1", "a", &HowToRun::Plain).unwrap();
        t.leave("s1", "b", &HowToRun::Plain).unwrap();
        t.leave("s1", "c", &fenced).unwrap();
        assert_eq!(t.peek("s1", "a").unwrap(), None);
        assert_eq!(t.peek("s1", "b").unwrap(), Some(HowToRun::Plain));
        t.supersede("s1").unwrap();
        t.supersede("s1").unwrap();
        // A state directory that cannot hold one holds none.
        let file = d.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        Tickets::new(&file).supersede("s1").unwrap();
        assert_eq!(t.take("s1", "b").unwrap(), None);
        assert_eq!(t.take("s1", "c").unwrap(), Some(fenced));
        // A ticket that is not one is an error, not a missing ticket.
        std::fs::write(t.path("s1", "y"), b"{").unwrap();
        assert!(t.take("s1", "y").is_err());
        assert!(!t.decided_elsewhere("s1"));
        t.mark_decided_elsewhere("s1").unwrap();
        assert!(t.decided_elsewhere("s1") && !t.decided_elsewhere("s2"));
    }
}
