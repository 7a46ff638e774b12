//! Every write a command makes, judged by place ([`crate::places`]): a
//! redirect, an output option, a written operand, a target directory, a
//! link, a script's `w` command. Absolute and home paths are judged where
//! they are found. A relative path is judged at the end of the command,
//! against every working directory the command may have moved to (`cd`,
//! `pushd`, `env -C`), since a loop or a function can run a write after a
//! `cd` that comes later in the text.

use super::{Frame, Resolver};
use crate::args::Arg;
use crate::places::{Known, Outside, Place};
use crate::rules::Rule;
use crate::span::Span;
use crate::verdict::Verdict;
use crate::word::Value;

/// A relative write, judged in [`Resolver::finish`].
#[derive(Debug, Clone)]
pub(super) struct RelativeWrite {
    who: String,
    path: String,
    known: KnownAs,
    /// Mapped onto the analyzed text.
    span: Span,
    via: Vec<String>,
}

/// How much of a written name is known, before dotglob is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KnownAs {
    Fully,
    Glob,
    RunTime,
}

/// Where the command may run its later commands from, as far as its text
/// shows: every directory named to `cd`, `pushd` or `env -C`, in any order
/// (a branch may skip one, a loop may repeat it).
#[derive(Debug, Default)]
pub(super) struct WorkingDirs {
    /// Directories changed to, as written.
    pub targets: Vec<String>,
    /// Where a change went somewhere no argument shows (`cd "$d"`, `cd -`,
    /// `popd`, `find -execdir`).
    pub unknown: Option<Span>,
}

impl KnownAs {
    fn of(value: &Value) -> KnownAs {
        match value {
            Value::Static(_) => KnownAs::Fully,
            Value::Glob(_) => KnownAs::Glob,
            Value::Dynamic => KnownAs::RunTime,
        }
    }

    fn with(self, dotglob: bool) -> Known {
        match self {
            KnownAs::Fully => Known::Fully,
            KnownAs::Glob => Known::Glob { dotglob },
            KnownAs::RunTime => Known::RunTime,
        }
    }
}

/// `who` as shown: a program's name in backquotes (a redirect's operator
/// comes quoted already).
fn quoted(who: &str) -> String {
    if who.starts_with('`') {
        who.to_string()
    } else {
        format!("`{who}`")
    }
}

/// Whether `path` is resolved against the working directory.
fn relative(path: &str) -> bool {
    !path.starts_with('/') && !path.starts_with('~')
}

impl Resolver<'_> {
    /// One written path, from argument `arg` of `who` (a program's name or
    /// a redirect operator). `name_prefix`: the program writes names that
    /// start with `path` (split's PREFIX, csplit's `-f`).
    pub(super) fn judge_write(
        &mut self,
        who: &str,
        path: &str,
        arg: &Arg,
        name_prefix: bool,
        frame: &Frame,
    ) -> Verdict {
        let mut known = KnownAs::of(&arg.value);
        let mut path = path.to_string();
        if name_prefix {
            // Any name that starts with the prefix: one component, unless
            // the prefix is only known at run time.
            path.push('*');
            if known == KnownAs::Fully {
                known = KnownAs::Glob;
            }
        }
        self.judge_place(who, &path, known, arg.span, frame)
    }

    /// A written path whose argument is a whole word (a redirect target).
    pub(super) fn judge_written_word(
        &mut self,
        who: &str,
        path: &str,
        value: &Value,
        span: Span,
        frame: &Frame,
    ) -> Verdict {
        self.judge_place(who, path, KnownAs::of(value), span, frame)
    }

    fn judge_place(
        &mut self,
        who: &str,
        path: &str,
        known: KnownAs,
        span: Span,
        frame: &Frame,
    ) -> Verdict {
        if relative(path) && !(known == KnownAs::RunTime && path.starts_with('*')) {
            self.relative_writes.push(RelativeWrite {
                who: who.to_string(),
                path: path.to_string(),
                known,
                span: frame.map.map(span),
                via: frame.via.clone(),
            });
            return Verdict::Safe;
        }
        let place = self.catalog.places.place(path, known.with(self.dotglob));
        match self.why_not(who, path, &place) {
            Some(why) => self.add(frame, Rule::WritesOutsideWork, span, why),
            None => Verdict::Safe,
        }
    }

    /// Why a write to `place` is not proven, or `None` when it is.
    fn why_not(&self, who: &str, path: &str, place: &Place) -> Option<String> {
        let who = quoted(who);
        // What the known places add: `~/.bashrc` runs in every shell.
        let runs = || {
            self.catalog
                .persistence_target(path)
                .map(|hit| format!("; {hit} decides what later commands run"))
                .unwrap_or_default()
        };
        let why = match place {
            Place::Work | Place::Scratch => return None,
            Place::Control { name, kind } => format!(
                "{who} writes `{path}`, a control place ({name}: {}) that decides what runs next, not the project's ordinary files",
                kind.describe()
            ),
            Place::Outside(Outside::Home) => format!(
                "{who} writes `{path}` in the home directory, outside the working tree and the scratch places{}",
                runs()
            ),
            Place::Outside(Outside::Absolute) => format!(
                "{who} writes `{path}`, outside the working tree and the scratch places (/tmp, /var/tmp, /dev/shm){}",
                runs()
            ),
            Place::Outside(Outside::Parent) => format!(
                "{who} writes `{path}`, and `..` can leave the working tree"
            ),
            Place::Outside(Outside::AnyBelow) => format!(
                "{who} writes `{path}`: a path found at run time anywhere below its start, .git and hidden names included"
            ),
            Place::Outside(Outside::RunTime) => format!(
                "{who} writes `{path}`, a name only known at run time that could be anywhere, .git/hooks and ~/.bashrc included"
            ),
        };
        Some(why)
    }

    /// A change of working directory to `dir` as written, or to one no
    /// argument shows (`None`).
    pub(super) fn changes_directory(&mut self, dir: Option<&str>, span: Span, frame: &Frame) {
        match dir {
            Some(d) => self.working_dirs.targets.push(d.to_string()),
            None => {
                self.working_dirs.unknown.get_or_insert(frame.map.map(span));
            }
        }
    }

    /// Judges the relative writes against every working directory the
    /// command may have moved to.
    pub(super) fn relative_writes(&mut self) {
        let writes = std::mem::take(&mut self.relative_writes);
        let targets = std::mem::take(&mut self.working_dirs.targets);
        for w in writes {
            let why = if w.known == KnownAs::RunTime && w.path.contains('*') {
                Some(format!(
                    "{} writes `{}`, a name only known at run time that could be anywhere, .git/hooks and ~/.bashrc included",
                    quoted(&w.who),
                    w.path
                ))
            } else if self.working_dirs.unknown.is_some() {
                Some(format!(
                    "{} writes `{}` relative to a working directory only known at run time, which could be anywhere (.git/hooks, ~/.local/bin)",
                    quoted(&w.who),
                    w.path
                ))
            } else {
                let known = w.known.with(self.dotglob);
                std::iter::once(w.path.clone())
                    .chain(
                        targets
                            .iter()
                            .map(|d| format!("{}/{}", d.trim_end_matches('/'), w.path)),
                    )
                    .find_map(|full| {
                        let place = self.catalog.places.place(&full, known);
                        let why = self.why_not(&w.who, &full, &place)?;
                        Some(if full == w.path {
                            why
                        } else {
                            format!("{why} (after the command changes directory)")
                        })
                    })
            };
            if let Some(why) = why {
                self.add_via(Rule::WritesOutsideWork, w.span, why, &w.via);
                // The invocation the write belongs to (the innermost one
                // around it) is no longer safe either.
                let owner = self
                    .invocations
                    .iter_mut()
                    .filter(|i| i.span.start <= w.span.start && w.span.end <= i.span.end)
                    .min_by_key(|i| i.span.end - i.span.start);
                if let Some(inv) = owner {
                    inv.verdict = inv.verdict.max(Rule::WritesOutsideWork.verdict());
                }
            }
        }
        self.working_dirs.targets = targets;
    }
}
