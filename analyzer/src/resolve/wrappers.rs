//! Wrappers: programs that run another program named in their arguments.
//! Most are handled by their catalog option spec alone; the ones with
//! semantics of their own (xargs, find, env -S, watch...) are below.

use std::borrow::Cow;

use crate::catalog::{Entry, Special};
use crate::rules::Rule;
use crate::span::Span;
use crate::verdict::Verdict;
use crate::word::Value;

use super::options::{self, Mode};
use super::shells::Syntax;
use super::{Feed, Frame, Resolver};
use crate::args::{Arg, Carries};

impl<'c> Resolver<'c> {
    /// Unwraps a wrapper; returns the wrapper's own verdict (its inner
    /// programs record their own).
    pub(super) fn wrapper(
        &mut self,
        canon: &str,
        entry: &Entry,
        args: &[Arg],
        frame: &Frame,
        feed: &Feed,
        wrappers: usize,
    ) -> Verdict {
        let rest = &args[1..];
        let name_span = args[0].span;
        let inner = frame.with_via(canon.to_string());
        match entry.special {
            Some(Special::Eval) => self.eval(rest, name_span, frame, feed),
            Some(Special::Trap) => self.trap(rest, frame),
            Some(Special::Source) => {
                if let Some(a) = rest.first() {
                    self.note_code_file(a, frame);
                }
                let file = rest.first().and_then(Arg::text).unwrap_or("a file");
                self.add(
                    frame,
                    Rule::ScriptFile,
                    name_span,
                    format!("`{canon}` runs the script `{file}`"),
                )
            }
            Some(Special::Xargs) => self.xargs(entry, rest, name_span, &inner, feed, wrappers),
            Some(Special::Find) => self.find(entry, rest, &inner, wrappers),
            Some(Special::Busybox) => match rest.first().map(|a| &a.value) {
                None => Verdict::Safe,
                Some(Value::Static(s)) if s.starts_with('-') => Verdict::Safe,
                Some(_) => {
                    self.invoke(rest, &inner, feed, wrappers + 1);
                    Verdict::Safe
                }
            },
            Some(Special::Parallel) => self.parallel(rest, name_span, &inner),
            Some(Special::Coproc) => {
                // tree-sitter reads `coproc NAME { cmd args; }` as a simple
                // command; the program follows the `{` (or `(`).
                let start = match (
                    rest.first().and_then(Arg::text),
                    rest.get(1).and_then(Arg::text),
                ) {
                    (Some("{" | "("), _) => 1,
                    (Some(_), Some("{" | "(")) => 2,
                    _ => 0,
                };
                if start < rest.len() {
                    self.invoke(&rest[start..], &inner, feed, wrappers + 1);
                }
                Verdict::Safe
            }
            special => {
                let mode = match special {
                    Some(Special::Su) | Some(Special::Script) => Mode::Permute,
                    _ => Mode::Command,
                };
                let parsed = match options::parse(entry, rest, mode) {
                    Ok(p) => p,
                    Err(why) => {
                        return self.add(
                            frame,
                            Rule::WrapperOperand,
                            name_span,
                            format!("cannot tell what `{canon}` runs: {why}"),
                        )
                    }
                };
                let mut verdict = Verdict::Safe;
                // The wrapper's own options (before its command) can be
                // escape hatches too: `strace -o '|sh'`.
                let end = parsed.command.unwrap_or(rest.len()).min(rest.len());
                if !entry.escapes.is_empty() {
                    verdict = verdict.max(self.check_args(canon, entry, &rest[..end], frame));
                } else {
                    // What it writes itself: `time -o FILE`, `script FILE`.
                    let mut written: Vec<&Arg> = parsed
                        .values
                        .iter()
                        .filter(|(option, _)| entry.output_options.contains(option))
                        .map(|(_, value)| value)
                        .collect();
                    if entry.writes.is_some() {
                        written.extend(
                            parsed
                                .operands
                                .iter()
                                .filter(|&&i| i < end)
                                .map(|&i| &rest[i]),
                        );
                    }
                    for a in written {
                        verdict = verdict.max(self.judge_write(canon, &a.shape, a, false, frame));
                    }
                }
                for (name, a) in &parsed.assignments {
                    // In the environment of what the wrapper runs.
                    self.env.push((name.clone(), frame.map.map(a.span)));
                    let value = a.text().and_then(|t| t.split_once('=')).map(|(_, v)| v);
                    if self.catalog.is_dangerous_assignment(name, value) {
                        verdict = verdict.max(self.add(
                            frame,
                            Rule::DangerousAssignment,
                            a.span,
                            format!("`{canon}` sets {name}, which changes which code runs"),
                        ));
                    }
                }
                // `env -C DIR`: the program runs in DIR, and its relative
                // names are DIR's.
                for (opt, dir) in &parsed.values {
                    if !entry.chdir_options.contains(opt) {
                        continue;
                    }
                    // Its relative writes are judged against DIR too.
                    self.changes_directory(dir.text(), dir.span, frame);
                }
                for script in &parsed.scripts {
                    verdict = verdict.max(self.shell_string(
                        script,
                        frame,
                        feed,
                        &format!("{canon} -c"),
                        Syntax::Posix,
                    ));
                }
                // Borrowed: a chain of wrappers must not copy the words
                // after each one (only `env -S` makes new ones).
                let mut command: Cow<[Arg]> = parsed
                    .command
                    .map(|i| Cow::Borrowed(&rest[i..]))
                    .unwrap_or_default();
                match special {
                    Some(Special::Env) => {
                        // -S splits one string into more of env's own
                        // arguments (options, assignments, the program and
                        // its first arguments): read again as env reads
                        // them (`env -S 'PATH=/x' git reset --hard`).
                        for (opt, v) in parsed.values.iter().rev() {
                            if opt == "-S" || opt == "--split-string" {
                                match split_string(v) {
                                    Some(words) => {
                                        let mut again = vec![args[0].clone()];
                                        again.extend(words);
                                        again.extend(command.iter().cloned());
                                        if wrappers >= self.limits.max_wrappers {
                                            return verdict.max(self.add(
                                                frame,
                                                Rule::LimitExceeded,
                                                v.span,
                                                "`env -S` strings nested too deep",
                                            ));
                                        }
                                        return verdict.max(self.wrapper(
                                            canon,
                                            entry,
                                            &again,
                                            frame,
                                            feed,
                                            wrappers + 1,
                                        ));
                                    }
                                    None => {
                                        return verdict.max(self.add(
                                            frame,
                                            Rule::WrapperOperand,
                                            v.span,
                                            "`env -S` string uses quoting or variables the analyzer does not expand",
                                        ))
                                    }
                                }
                            }
                        }
                    }
                    Some(Special::Su) => {
                        // `runuser -u USER -- program args`.
                        if parsed.saw(&["-u".into(), "--user".into()]) {
                            command = parsed
                                .operands
                                .first()
                                .map(|&i| Cow::Borrowed(&rest[i..]))
                                .unwrap_or_default();
                        } else if parsed.scripts.is_empty() {
                            return verdict.max(self.add(
                                frame,
                                Rule::ShellReadsStdin,
                                name_span,
                                format!("`{canon}` without -c starts a shell that reads its commands from input"),
                            ));
                        }
                    }
                    Some(Special::Script) if parsed.scripts.is_empty() => {
                        return verdict.max(self.add(
                            frame,
                            Rule::ShellReadsStdin,
                            name_span,
                            "`script` without -c starts an interactive shell",
                        ));
                    }
                    Some(Special::Flock) => {
                        // The lock file is created when missing: a write.
                        if let Some(&at) = parsed.operands.first() {
                            let lock = &rest[at];
                            verdict = verdict.max(self.judge_write(
                                canon,
                                &lock.shape.clone(),
                                lock,
                                false,
                                frame,
                            ));
                        }
                        // `flock FILE -c CMD` puts -c after the lock file.
                        if let Some(first) = command.first() {
                            if matches!(first.text(), Some("-c") | Some("--command")) {
                                let Some(script) = command.get(1).cloned() else {
                                    return verdict.max(self.add(
                                        frame,
                                        Rule::WrapperOperand,
                                        name_span,
                                        "`flock -c` has no command",
                                    ));
                                };
                                verdict = verdict.max(self.shell_string(
                                    &script,
                                    frame,
                                    feed,
                                    "flock -c",
                                    Syntax::Posix,
                                ));
                                command = Cow::Borrowed(&[]);
                            }
                        }
                    }
                    // watch joins its arguments and runs them with sh -c.
                    Some(Special::Watch)
                        if !command.is_empty() && !parsed.saw(&["-x".into(), "--exec".into()]) =>
                    {
                        return verdict.max(self.joined_script(&command, frame, "watch"));
                    }
                    _ => {}
                }
                if !entry.no_command_options.is_empty() && parsed.saw(&entry.no_command_options) {
                    // `command -v x`, `sudo -l`, `taskset -p`: nothing is run.
                } else if !command.is_empty() {
                    self.invoke(&command, &inner, feed, wrappers + 1);
                } else if !entry.shell_options.is_empty() && parsed.saw(&entry.shell_options) {
                    verdict = verdict.max(self.add(
                        frame,
                        Rule::ShellReadsStdin,
                        name_span,
                        format!("`{canon}` starts an interactive shell"),
                    ));
                } else if parsed.command.is_none()
                    && !entry.command_optional
                    && parsed.scripts.is_empty()
                    && !parsed.saw(&entry.no_command_options)
                    && !matches!(
                        special,
                        Some(Special::Flock) | Some(Special::Su) | Some(Special::Sudo)
                    )
                {
                    verdict = verdict.max(self.add(
                        frame,
                        Rule::WrapperOperand,
                        name_span,
                        format!("cannot find the program `{canon}` runs"),
                    ));
                }
                verdict
            }
        }
    }

    fn eval(&mut self, rest: &[Arg], name_span: Span, frame: &Frame, feed: &Feed) -> Verdict {
        let rest: Vec<&Arg> = match rest.first().and_then(Arg::text) {
            Some("--") => rest[1..].iter().collect(),
            _ => rest.iter().collect(),
        };
        if rest.is_empty() {
            return Verdict::Safe;
        }
        let texts: Option<Vec<&str>> = rest.iter().map(|a| a.text()).collect();
        let Some(texts) = texts else {
            return self.add(
                frame,
                Rule::DynamicScript,
                name_span,
                "`eval` runs text that is only known at run time",
            );
        };
        let script = texts.join(" ");
        let origin = if rest.len() == 1 {
            rest[0].origin
        } else {
            None
        };
        let span = rest.iter().fold(rest[0].span, |s, a| s.cover(a.span));
        self.embed(&script, origin, span, frame, feed, "eval");
        Verdict::Safe
    }

    fn trap(&mut self, rest: &[Arg], frame: &Frame) -> Verdict {
        let mut rest = rest;
        match rest.first().map(Arg::text) {
            None => return Verdict::Safe,
            Some(Some("-l" | "-p" | "-P")) => return Verdict::Safe,
            Some(Some("--")) => rest = &rest[1..],
            _ => {}
        }
        // One operand alone is a signal to reset, not an action.
        if rest.len() < 2 {
            return Verdict::Safe;
        }
        let action = &rest[0];
        match action.text() {
            Some("") | Some("-") => Verdict::Safe,
            Some(text) => {
                let text = text.to_string();
                self.embed(
                    &text,
                    action.origin,
                    action.span,
                    frame,
                    &Feed::Inherited,
                    "trap",
                );
                Verdict::Safe
            }
            None => self.add(
                frame,
                Rule::DynamicScript,
                action.span,
                "`trap` action is only known at run time",
            ),
        }
    }

    /// `watch` and `parallel`: arguments joined with spaces, run by sh -c.
    fn joined_script(&mut self, words: &[Arg], frame: &Frame, label: &str) -> Verdict {
        let span = words.iter().fold(words[0].span, |s, a| s.cover(a.span));
        let texts: Option<Vec<&str>> = words.iter().map(Arg::text).collect();
        let Some(texts) = texts else {
            return self.add(
                frame,
                Rule::DynamicScript,
                span,
                format!("`{label}` runs a command only known at run time"),
            );
        };
        let script = texts.join(" ");
        let origin = if words.len() == 1 {
            words[0].origin
        } else {
            None
        };
        self.embed(&script, origin, span, frame, &Feed::Inherited, label);
        self.check_syntax(&script, Syntax::Posix, frame, span, label)
    }

    fn xargs(
        &mut self,
        entry: &Entry,
        rest: &[Arg],
        name_span: Span,
        inner: &Frame,
        feed: &Feed,
        wrappers: usize,
    ) -> Verdict {
        // Options with optional values (-i[R], -e[EOF], -l[N], --replace[=R],
        // --eof[=E], --max-lines[=N]) are not expressible in the option spec.
        let mut replace: Option<String> = None;
        let mut i = 0;
        let mut normalized: Vec<Arg> = Vec::new();
        while i < rest.len() {
            let Some(s) = rest[i].text() else { break };
            if s == "--" || !s.starts_with('-') || s == "-" {
                break;
            }
            let span = rest[i].span;
            if let Some(long) = s.strip_prefix("--") {
                if let Some(r) = long.strip_prefix("replace") {
                    replace = Some(r.strip_prefix('=').unwrap_or("{}").to_string());
                } else if !(long.starts_with("eof") || long.starts_with("max-lines")) {
                    normalized.push(rest[i].clone());
                    let takes_value =
                        !s.contains('=') && entry.options_with_value.iter().any(|o| o == s);
                    if takes_value {
                        i += 1;
                        normalized.extend(rest.get(i).cloned());
                    }
                }
                i += 1;
                continue;
            }
            // A cluster: flags, options with a value (the rest of the
            // cluster or the next word), and -i/-e/-l whose value is
            // optional and attached.
            let body = &s[1..];
            for (j, c) in body.char_indices() {
                let rest_of = &body[j + c.len_utf8()..];
                let key = format!("-{c}");
                if matches!(c, 'i' | 'e' | 'l') {
                    if c == 'i' {
                        replace = Some(if rest_of.is_empty() {
                            "{}".into()
                        } else {
                            rest_of.to_string()
                        });
                    }
                    break;
                }
                if entry.options_with_value.contains(&key) {
                    let value = if rest_of.is_empty() {
                        i += 1;
                        rest.get(i).cloned()
                    } else {
                        Some(Arg::literal(rest_of, span))
                    };
                    let Some(value) = value else {
                        return self.add(
                            inner,
                            Rule::WrapperOperand,
                            name_span,
                            format!("`xargs {key}` needs a value"),
                        );
                    };
                    if c == 'I' {
                        match value.text() {
                            Some(r) => replace = Some(r.to_string()),
                            None => {
                                return self.add(
                                    inner,
                                    Rule::WrapperOperand,
                                    name_span,
                                    "`xargs -I` replacement is not static",
                                )
                            }
                        }
                    }
                    normalized.push(Arg::literal(&key, span));
                    normalized.push(value);
                    break;
                }
                normalized.push(Arg::literal(&key, span));
            }
            i += 1;
        }
        // The options as xargs reads them, then at most its next two words
        // (`--` and the program): enough to find the program without
        // copying every word after it, which a chain of xargs would repeat.
        let head = normalized.len();
        normalized.extend(rest[i..].iter().take(2).cloned());
        let parsed = match options::parse(entry, &normalized, Mode::Command) {
            Ok(p) => p,
            Err(why) => {
                return self.add(
                    inner,
                    Rule::WrapperOperand,
                    name_span,
                    format!("cannot tell what `xargs` runs: {why}"),
                )
            }
        };
        let mut command: Vec<Arg> = match parsed.command {
            Some(c) if c >= head => rest[i + (c - head)..].to_vec(),
            Some(c) => normalized[c..head]
                .iter()
                .chain(&rest[i..])
                .cloned()
                .collect(),
            // Without a program xargs runs echo.
            None => vec![Arg::literal("echo", name_span)],
        };
        // The arguments xargs adds are its input: network output when that
        // is what is piped in.
        let input = |span| {
            let mut a = Arg::dynamic(span);
            if let Feed::Pipe { network, decoded } = feed {
                a.carries = Carries {
                    network: *network,
                    decoded: *decoded,
                };
            }
            a
        };
        match &replace {
            Some(r) if !r.is_empty() => {
                for a in command.iter_mut() {
                    if a.text().is_some_and(|t| t.contains(r.as_str())) {
                        *a = input(a.span);
                    }
                }
            }
            _ => command.push(input(name_span)),
        }
        self.invoke(
            &command,
            &inner.with_via("input"),
            &Feed::Inherited,
            wrappers + 1,
        );
        Verdict::Safe
    }

    fn find(&mut self, entry: &Entry, rest: &[Arg], inner: &Frame, wrappers: usize) -> Verdict {
        // A run-time value that cannot split is one word: it can become one
        // primary, but `-exec` needs its program and a `;` or `+` after it
        // (with one after it, check_args calls it opaque).
        let checked: Vec<Arg> = rest
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let terminator_after = rest[i + 1..]
                    .iter()
                    .any(|b| matches!(b.text(), Some(";") | Some("+")));
                if a.value == Value::Dynamic && !a.splits && !terminator_after {
                    Arg::literal("path", a.span)
                } else {
                    a.clone()
                }
            })
            .collect();
        let mut verdict = self.check_args("find", entry, &checked, inner);
        // Without one, where find reads a primary it can still be one that
        // acts alone: `-fprint` (`-fprint0`, `-fls`, `-fprintf`) writing
        // the file the next word names; `-delete` is in find_removes.
        for i in crate::effects::find_run_time_primaries(rest) {
            if let Some(target) = rest.get(i + 1) {
                verdict = verdict.max(self.judge_write(
                    "find",
                    &target.shape.clone(),
                    target,
                    false,
                    inner,
                ));
            }
        }
        // A glob that can expand to -exec and kin hides the program it runs.
        const ACTIONS: [&str; 4] = ["-exec", "-execdir", "-ok", "-okdir"];
        if let Some(a) = rest.iter().find(|a| match &a.value {
            Value::Glob(p) => ACTIONS.iter().any(|w| crate::glob::glob_match(p, w)),
            _ => false,
        }) {
            verdict = verdict.max(self.add(
                inner,
                Rule::OpaqueArgument,
                a.span,
                "this glob could expand to `-exec`, which would run a program",
            ));
        }
        let start_prefix = find_start_prefix(rest);
        let mut i = 0;
        while i < rest.len() {
            let action = rest[i].text().unwrap_or("");
            if matches!(action, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let start = i + 1;
                let end =
                    (start..rest.len()).find(|&j| matches!(rest[j].text(), Some(";") | Some("+")));
                let Some(end) = end else {
                    return verdict.max(self.add(
                        inner,
                        Rule::WrapperOperand,
                        rest[i].span,
                        format!("`find {action}` has no terminating `;` or `+`"),
                    ));
                };
                if end == start {
                    return verdict.max(self.add(
                        inner,
                        Rule::WrapperOperand,
                        rest[i].span,
                        format!("`find {action}` names no program"),
                    ));
                }
                // find replaces `{}` anywhere in an argument with a path;
                // the path begins with a start point, so it is a glob over
                // that prefix (it cannot become an option when the prefix
                // is static and does not begin with `-`).
                let path = if action.ends_with("dir") {
                    // The program runs in each found file's directory.
                    self.changes_directory(None, rest[i].span, inner);
                    "./".to_string()
                } else {
                    start_prefix.clone()
                };
                let command: Vec<Arg> = rest[start..end]
                    .iter()
                    .map(|a| match a.text() {
                        // `**`: any path below, hidden names included.
                        Some("{}") if !path.is_empty() && !path.starts_with('-') => {
                            Arg::new(Value::Glob(format!("{path}**")), a.span, None)
                        }
                        Some(t) if t.contains("{}") => Arg::dynamic(a.span),
                        _ => a.clone(),
                    })
                    .collect();
                self.invoke(
                    &command,
                    &inner.with_via(action.to_string()),
                    &Feed::Inherited,
                    wrappers + 1,
                );
                i = end + 1;
            } else {
                i += 1;
            }
        }
        verdict
    }

    /// GNU parallel: options, a command template, then `:::` inputs.
    fn parallel(&mut self, rest: &[Arg], name_span: Span, inner: &Frame) -> Verdict {
        const FLAGS: &[&str] = &[
            "-k",
            "--keep-order",
            "-v",
            "--verbose",
            "--will-cite",
            "--bar",
            "--progress",
            "--eta",
            "-X",
            "-m",
            "-0",
            "--null",
            "--tag",
            "--dry-run",
            "--lb",
            "--line-buffer",
            "-u",
            "--ungroup",
            "--group",
            "-q",
            "--quote",
            "--no-notice",
            "--citation",
            "-t",
            "--halt-on-error",
        ];
        const WITH_VALUE: &[&str] = &[
            "-j",
            "--jobs",
            "-n",
            "--max-args",
            "-N",
            "--halt",
            "-d",
            "--delimiter",
            "--colsep",
            "-C",
            "-I",
            "--timeout",
            "--joblog",
            "--results",
            "--delay",
            "--memfree",
            "--load",
            "-L",
            "--max-lines",
        ];
        const REMOTE: &[&str] = &[
            "-S",
            "--sshlogin",
            "--slf",
            "--sshloginfile",
            "--transfer",
            "--trc",
            "--return",
            "--basefile",
            "--bf",
        ];
        let mut i = 0;
        // `-q`: each word of the command is quoted, so the words keep
        // their bounds; otherwise they are joined with spaces for a shell
        // (`parallel bash -c 'rm -rf {}'` runs `bash -c rm -rf X`).
        let mut quote = false;
        while i < rest.len() {
            let Some(s) = rest[i].text() else { break };
            let key = s.split('=').next().unwrap_or(s);
            quote |= key == "-q" || key == "--quote";
            if REMOTE.contains(&key) {
                return self.add(
                    inner,
                    Rule::NetworkOption,
                    rest[i].span,
                    "`parallel` runs jobs on remote hosts over ssh",
                );
            }
            let attached = WITH_VALUE
                .iter()
                .any(|o| o.len() == 2 && s.len() > 2 && s.starts_with(o) && !s.starts_with("--"));
            if FLAGS.contains(&key) || attached {
                i += 1;
            } else if WITH_VALUE.contains(&key) {
                i += if s.contains('=') { 1 } else { 2 };
            } else if s.starts_with('-') && s != "-" {
                return self.add(
                    inner,
                    Rule::WrapperOperand,
                    rest[i].span,
                    format!("cannot tell what `parallel` runs: unknown option `{s}`"),
                );
            } else {
                break;
            }
        }
        let end = (i..rest.len()).find(|&j| {
            matches!(
                rest[j].text(),
                Some(":::") | Some("::::") | Some(":::+") | Some("::::+")
            )
        });
        let template = &rest[i..end.unwrap_or(rest.len())];
        if template.is_empty() {
            return self.add(
                inner,
                Rule::DynamicScript,
                name_span,
                "`parallel` without a command runs its input lines as commands",
            );
        }
        // The inputs, when they are a few words on the line (`::: a b`):
        // each is a run of the command, read with it. Otherwise (stdin, a
        // file, several sources) an input is known only at run time.
        let inputs: Option<Vec<String>> =
            end.filter(|&e| rest[e].text() == Some(":::"))
                .and_then(|e| {
                    let values = &rest[e + 1..];
                    let marker =
                        |a: &Arg| matches!(a.text(), Some(":::" | "::::" | ":::+" | "::::+"));
                    if values.is_empty() || values.len() > 16 || values.iter().any(marker) {
                        return None;
                    }
                    values
                        .iter()
                        .map(|v| match &v.value {
                            Value::Static(s) => Some(quote_word(s)),
                            // A glob stays one: its names are what bash gives.
                            Value::Glob(g) => Some(g.clone()),
                            Value::Dynamic => None,
                        })
                        .collect()
                });
        let runs: Vec<Option<&str>> = match &inputs {
            Some(v) => v.iter().map(|s| Some(s.as_str())).collect(),
            None => vec![None],
        };
        let mut verdict = Verdict::Safe;
        for input in runs {
            // Replacement strings become quoted input: data, like an
            // argument. Without one, parallel appends the input as the
            // last argument.
            let mut words = Vec::new();
            let mut replaced = false;
            for a in template {
                match a.text() {
                    Some(t) => {
                        let known = PARALLEL_FIELDS
                            .iter()
                            .fold(t.to_string(), |s, f| s.replace(f, ""));
                        if known.contains('{') {
                            return self.add(inner, Rule::DynamicScript, a.span, "`parallel` command uses replacement strings the analyzer does not expand");
                        }
                        let r = replace_parallel_fields(t, input);
                        replaced |= r != t;
                        let r = if quote { quote_word(&r) } else { r };
                        words.push(Arg::new(Value::Static(r), a.span, None));
                    }
                    None => words.push(a.clone()),
                }
            }
            if !replaced {
                let span = words.last().map_or(name_span, |w: &Arg| w.span);
                words.push(Arg::new(Value::Static(input_word(input)), span, None));
            }
            verdict = verdict.max(self.joined_script(&words, inner, "parallel"));
        }
        verdict
    }
}

/// What every path find produces begins with: the common prefix of its
/// start points (`.` when none are given), or nothing when a start point is
/// not static.
fn find_start_prefix(rest: &[Arg]) -> String {
    // Leading options -H -L -P -D opts -O level, then start points until the
    // expression begins (`-name`, `(`, `!`...).
    let mut i = 0;
    while let Some(t) = rest.get(i).and_then(Arg::text) {
        match t {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut starts: Vec<&str> = Vec::new();
    for a in &rest[i.min(rest.len())..] {
        match a.text() {
            Some(t) if t.starts_with('-') || t == "(" || t == "!" || t == "," => break,
            Some(t) => starts.push(t),
            None => return String::new(),
        }
    }
    if starts.is_empty() {
        return ".".into();
    }
    let mut prefix = starts[0].to_string();
    for s in &starts[1..] {
        let common = prefix
            .chars()
            .zip(s.chars())
            .take_while(|(a, b)| a == b)
            .count();
        prefix = prefix.chars().take(common).collect();
    }
    // Different start points share no prefix; what matters is that none of
    // them can read as an option, so any one of them stands for all.
    if prefix.is_empty()
        && starts
            .iter()
            .all(|s| !s.is_empty() && !s.starts_with(['-', '+']))
    {
        prefix = starts[0].to_string();
    }
    prefix
}

/// One shell word whose value is `s`: parallel quotes its inputs (data,
/// never code).
fn quote_word(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The word an input becomes: as written when it is known (quoted, or a
/// glob), else a quoted expansion known only at run time (`parallel rm -rf
/// {} ::: ~/a` deletes outside the tree either way).
fn input_word(input: Option<&str>) -> String {
    input.map_or_else(|| "\"$PARALLEL_INPUT\"".into(), str::to_string)
}

/// The replacement strings the analyzer reads.
const PARALLEL_FIELDS: [&str; 7] = ["{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}"];

/// Each replacement string becomes the input's word; the forms that
/// change it (`{.}` drops the extension...) are known only at run time.
fn replace_parallel_fields(t: &str, input: Option<&str>) -> String {
    let mut s = t.replace("{}", &input_word(input));
    for f in &PARALLEL_FIELDS[1..] {
        s = s.replace(f, &input_word(None));
    }
    s
}

/// `env -S`: split on whitespace when no quoting or expansion is involved.
fn split_string(v: &Arg) -> Option<Vec<Arg>> {
    let text = v.text()?;
    if text.contains(['\\', '\'', '"', '$', '#']) {
        return None;
    }
    Some(
        text.split_whitespace()
            .map(|w| Arg::literal(w, v.span))
            .collect(),
    )
}
