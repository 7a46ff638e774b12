//! One invocation: from a program name and its arguments to findings.
//! Wrappers and shells hand their inner programs back to [`Resolver::invoke`].

use crate::analysis::Invocation;
use crate::catalog::{Catalog, Class, Entry, Escape, EscapeVerdict, Special};
use crate::glob::glob_match;
use crate::option_table::has_any_option;
use crate::rules::Rule;
use crate::scripts;
use crate::span::Span;
use crate::verdict::Verdict;
use crate::word::is_identifier;
use crate::word::Value;

use super::{Feed, Frame, Output, Resolver};
use crate::args::{Arg, Carries};

/// Builtins that set shell variables from their input or arguments.
const SETS_VARIABLES: &[&str] = &[
    "read",
    "mapfile",
    "readarray",
    "printf",
    "declare",
    "typeset",
    "export",
    "local",
    "readonly",
    "let",
];

/// Whether a program runs its arguments (or files they name) as code: a
/// shell, a language runtime, a program with a script language of its own,
/// or a builtin or wrapper that runs a string (`eval`, `source`, `su -c`).
pub(super) fn runs_code(entry: &Entry) -> bool {
    matches!(entry.class, Class::Shell | Class::Interpreter)
        || entry.script.is_some()
        || matches!(
            entry.special,
            Some(
                Special::Eval
                    | Special::Source
                    | Special::Trap
                    | Special::Su
                    | Special::Flock
                    | Special::Watch
                    | Special::Script
                    | Special::Parallel
            )
        )
}
use crate::word::runs_subscript;

impl<'c> Resolver<'c> {
    /// Resolves `args[0]` with arguments `args[1..]`. `wrappers` counts the
    /// wrappers already unwrapped around it.
    pub(super) fn invoke(&mut self, args: &[Arg], frame: &Frame, feed: &Feed, wrappers: usize) {
        // A wrapper's `env NAME=v` reaches what it runs, and no further.
        let mark = self.env.len();
        self.invoke_program(args, frame, feed, wrappers);
        self.env.truncate(mark);
    }

    fn invoke_program(&mut self, args: &[Arg], frame: &Frame, feed: &Feed, wrappers: usize) {
        let Some(name_arg) = args.first() else { return };
        let span = args.iter().fold(name_arg.span, |s, a| s.cover(a.span));
        // Each path below records one invocation; its words are copied then.
        let leaf = |program: Option<String>, verdict: Verdict| Invocation {
            program,
            args: args[1..].iter().map(Arg::shown).collect(),
            shapes: args[1..].iter().map(|a| a.shape.clone()).collect(),
            span: frame.map.map(span),
            via: frame.via.clone(),
            verdict,
            writes: Vec::new(),
            removes: Vec::new(),
            stdin: match feed {
                Feed::Doc { text, .. } => text.clone(),
                _ => None,
            },
        };
        if wrappers > self.limits.max_wrappers {
            let v = self.add(
                frame,
                Rule::LimitExceeded,
                name_arg.span,
                format!(
                    "more than {} wrappers around one program",
                    self.limits.max_wrappers
                ),
            );
            self.record(leaf(None, v), Output::default());
            return;
        }
        let name = match &name_arg.value {
            Value::Static(s) => s.clone(),
            Value::Glob(_) | Value::Dynamic if name_arg.carries.any() => {
                let v = self.code_from_output("the shell", name_arg, frame);
                self.record(leaf(None, v), Output::default());
                return;
            }
            Value::Glob(_) | Value::Dynamic => {
                let v = self.add(
                    frame,
                    Rule::DynamicCommandName,
                    name_arg.span,
                    "the program name is only known at run time",
                );
                self.record(leaf(None, v), Output::default());
                return;
            }
        };
        if name.is_empty() {
            let v = self.add(
                frame,
                Rule::UnknownProgram,
                name_arg.span,
                "the program name is empty",
            );
            self.record(leaf(Some(name), v), Output::default());
            return;
        }
        let program = if name.contains('/') {
            match self.catalog.system_program(&name) {
                Some(base) => base.to_string(),
                None => {
                    self.note_code_file(name_arg, frame);
                    let mut v = self.add(
                        frame,
                        Rule::PathQualified,
                        name_arg.span,
                        format!(
                            "`{name}` runs whatever file is at that path, not a known system tool"
                        ),
                    );
                    // A copy of a network tool is still a network tool.
                    let base = name.rsplit('/').next().unwrap_or("");
                    if let Some((canon, entry)) = self.catalog.lookup(base) {
                        if matches!(
                            entry.class,
                            Class::Network | Class::Interpreter | Class::Package
                        ) {
                            v = v.max(self.add(
                                frame,
                                Rule::NetworkProgram,
                                name_arg.span,
                                format!(
                                    "`{name}` is named like `{canon}`, which reaches the network"
                                ),
                            ));
                        }
                    }
                    self.record(
                        leaf(Some(name), v),
                        Output {
                            network: v == Verdict::Network,
                            decoded: false,
                        },
                    );
                    return;
                }
            }
        } else {
            name
        };
        let Some((canon, entry)) = self.catalog.lookup(&program) else {
            let v = self.add(
                frame,
                Rule::UnknownProgram,
                name_arg.span,
                format!("`{program}` is not in the catalog of known local programs"),
            );
            self.record(leaf(Some(program), v), Output::default());
            return;
        };
        let canon = canon.to_string();
        self.check_environment(&canon, entry, frame);
        self.check_protected_mentions(&canon, entry, &args[1..], frame);
        if SETS_VARIABLES.contains(&canon.as_str()) {
            let fed = match feed {
                Feed::Pipe { network, decoded } => Carries {
                    network: *network,
                    decoded: *decoded,
                },
                _ => Carries::default(),
            };
            let carried = args[1..].iter().fold(fed, |c, a| c.or(a.carries));
            self.variables_carry = self.variables_carry.or(carried);
        }
        let code_from_output = if runs_code(entry) {
            args[1..]
                .iter()
                .find(|a| a.carries.any())
                .map(|a| self.code_from_output(&format!("`{canon}`"), a, frame))
        } else {
            None
        };
        if let Some(v) = code_from_output {
            self.record(leaf(Some(program), v), Output::default());
            return;
        }
        match entry.class {
            Class::Wrapper => {
                let before = self.invocations.len();
                let mut v = self.wrapper(&canon, entry, args, frame, feed, wrappers);
                // Only when something runs: `sudo -l` just lists.
                if entry.privileged && (self.invocations.len() > before || v > Verdict::Safe) {
                    v = v.max(self.add(
                        frame,
                        Rule::Privilege,
                        name_arg.span,
                        format!("`{canon}` runs a program with elevated privileges"),
                    ));
                }
                let mut inv = leaf(Some(program), v);
                if entry.special == Some(Special::Find) {
                    inv.removes = crate::effects::find_removes(&args[1..]);
                }
                self.record(inv, Output::default());
            }
            Class::Shell => {
                let v = self.shell(&canon, entry, args, frame, feed);
                // A shell's output is whatever its script printed.
                self.record(
                    leaf(Some(program), v),
                    Output {
                        network: v == Verdict::Network,
                        decoded: false,
                    },
                );
            }
            _ => {
                let mut v = self.classify(&canon, entry, args, frame);
                if entry.class == Class::Interpreter && reads_program_from_stdin(&args[1..]) {
                    v = v.max(self.program_on_stdin(&canon, name_arg.span, frame, feed));
                }
                let out = Output {
                    network: v == Verdict::Network,
                    decoded: is_decoding(entry, &args[1..]),
                };
                let effects = crate::effects::file_effects(entry, &args[1..]);
                let mut inv = leaf(Some(program), v);
                inv.writes = effects.writes.into_iter().map(|(_, p)| p).collect();
                inv.removes = effects.removes;
                self.record(inv, out);
            }
        }
    }

    /// A program that runs code given code made from network output or
    /// decoded data: remote (or obfuscated) code, as if it were piped in.
    fn code_from_output(&mut self, who: &str, arg: &Arg, frame: &Frame) -> Verdict {
        if arg.carries.network {
            self.add(
                frame,
                Rule::RemoteCodePipe,
                arg.span,
                format!(
                    "{who} runs code made from the output of a program that reaches the network"
                ),
            )
        } else {
            self.add(
                frame,
                Rule::DecodedCodePipe,
                arg.span,
                format!("{who} runs code made from decoded data"),
            )
        }
    }

    /// An interpreter running the program piped into it: remote code when
    /// the pipe carries network output, obfuscated code when it was decoded.
    fn program_on_stdin(
        &mut self,
        canon: &str,
        span: crate::span::Span,
        frame: &Frame,
        feed: &Feed,
    ) -> Verdict {
        match feed {
            Feed::Pipe { network: true, .. } => self.add(
                frame,
                Rule::RemoteCodePipe,
                span,
                format!("`{canon}` runs a program piped from something that reaches the network"),
            ),
            Feed::Pipe { decoded: true, .. } => self.add(
                frame,
                Rule::DecodedCodePipe,
                span,
                format!("`{canon}` runs decoded data as a program"),
            ),
            _ => Verdict::Safe,
        }
    }

    /// A program that is not a wrapper or shell: its class, refined by its
    /// subcommand, plus the escape rules on its arguments.
    fn classify(&mut self, canon: &str, entry: &Entry, args: &[Arg], frame: &Frame) -> Verdict {
        let name_span = args[0].span;
        let rest = &args[1..];
        let mut verdict = Verdict::Safe;
        let (class, sub) = match subcommand(entry, rest) {
            Some((s, c)) => (c, Some(s)),
            None if rest.is_empty() && entry.bare.is_some() => {
                (entry.bare.unwrap_or(entry.class), None)
            }
            None if has_any_option(entry, rest, &entry.local_with) => (Class::Local, None),
            None => (entry.class, None),
        };
        let what = match &sub {
            Some(s) => format!("`{canon} {s}`"),
            None => format!("`{canon}`"),
        };
        let reason = entry
            .reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        let v = match class {
            Class::Local => Verdict::Safe,
            Class::Network if sub.is_some() => self.add(
                frame,
                Rule::NetworkSubcommand,
                name_span,
                format!("{what} talks to a remote"),
            ),
            Class::Network => self.add(
                frame,
                Rule::NetworkProgram,
                name_span,
                format!("{what} reaches the network"),
            ),
            Class::Package => self.add(
                frame,
                Rule::PackageInstall,
                name_span,
                format!("{what} downloads and installs packages"),
            ),
            Class::Interpreter => {
                // Its first operand is usually the program it runs.
                if let Some((_, a)) = crate::effects::operands(entry, rest).first() {
                    self.note_code_file(a, frame);
                }
                self.add(
                    frame,
                    Rule::Interpreter,
                    name_span,
                    format!("{what} is a language runtime that can reach the network{reason}"),
                )
            }
            Class::RunsCode => self.add(
                frame,
                Rule::RunsProjectCode,
                name_span,
                format!("{what} runs code from the project or its configuration{reason}"),
            ),
            Class::Unknown | Class::Wrapper | Class::Shell => self.add(
                frame,
                Rule::UnknownProgram,
                name_span,
                format!("{what} is not known to be local{reason}"),
            ),
        };
        verdict = verdict.max(v);
        self.track_variables(canon, rest, frame);
        self.check_variable_targets(canon, rest, frame);
        verdict.max(self.check_args(canon, entry, rest, frame))
    }

    /// Builtins that give variables run-time values or evaluate names
    /// arithmetically, for [`Resolver::finish`].
    fn track_variables(&mut self, canon: &str, rest: &[Arg], frame: &Frame) {
        // Builtins that store what they read or were given, by the one
        // model of what builtins assign; with no name, bash picks its own.
        let implicit = match canon {
            "read" => Some("REPLY"),
            "mapfile" | "readarray" => Some("MAPFILE"),
            "getopts" => Some("OPTARG"),
            _ => None,
        };
        if implicit.is_some() || matches!(canon, "printf" | "wait") {
            let sets = super::setvars::sets(canon, rest);
            let named = sets
                .targets
                .iter()
                .filter(|t| t.assigns)
                .filter_map(|t| Some((t.name.clone()?, t.arg.span)));
            let at = rest.first().map_or(Span::new(0, 0), |a| a.span);
            let implicit = implicit.map(|name| (name.to_string(), at));
            for (name, span) in named.chain(implicit) {
                let name = name.split('[').next().unwrap_or_default().to_string();
                self.runtime_vars.entry(name).or_insert(frame.map.map(span));
            }
        }
        self.track_shell_state(canon, rest, frame);
    }

    /// Whether a builtin is given any of `options`, as the one reader
    /// reads its arguments with the builtin's reviewed table.
    pub(super) fn builtin_gives(&self, canon: &str, rest: &[Arg], options: &[&str]) -> bool {
        self.catalog
            .lookup(canon)
            .is_some_and(|(_, e)| has_any_option(e, rest, options))
    }

    /// `unset`, `set` and `shopt`: what they change in the shell itself.
    fn track_shell_state(&mut self, canon: &str, rest: &[Arg], frame: &Frame) {
        match canon {
            "unset" if !self.builtin_gives(canon, rest, &["-f"]) => {
                for a in rest {
                    if let Some(name) = a.text().filter(|t| self.catalog.is_dangerous_variable(t)) {
                        self.add(
                            frame,
                            Rule::DangerousAssignment,
                            a.span,
                            format!("unsetting {name} changes which code runs (no PATH means the working directory is searched)"),
                        );
                    }
                }
            }
            "set" | "shopt" => {
                for (span, option) in shell_options_on(canon, rest) {
                    match option.as_deref() {
                        Some("allexport") => {
                            if self.allexport.is_none() {
                                self.allexport = Some((frame.map.map(span), frame.via.clone()));
                            }
                        }
                        Some("keyword") => {
                            self.add(
                                frame,
                                Rule::DangerousAssignment,
                                span,
                                "`set -k` turns assignment-shaped arguments into environment variables (LD_PRELOAD=... included)",
                            );
                        }
                        Some("histexpand") => {
                            self.add(
                                frame,
                                Rule::EscapeOption,
                                span,
                                "history expansion (`set -H`) rewrites later lines with `!` references into commands the text does not show",
                            );
                        }
                        Some("cdable_vars") => self.changes_directory(None, span, frame),
                        Some("dotglob") => self.dotglob = true,
                        None => {
                            self.add(
                                frame,
                                Rule::DangerousAssignment,
                                span,
                                format!("`{canon}` turns on a shell option whose name is only known at run time (keyword, allexport...)"),
                            );
                        }
                        Some(_) => {}
                    }
                }
            }
            "cd" | "pushd" | "popd" => {
                match cd_target(canon, rest, self.catalog.lookup(canon).map(|(_, e)| e)) {
                    CdTarget::Stays => {}
                    CdTarget::To(dir) => self.changes_directory(Some(&dir), Span::default(), frame),
                    CdTarget::Unknown(span) => self.changes_directory(None, span, frame),
                }
            }
            "let" => {
                for a in rest {
                    if let Some(t) = a.text() {
                        for name in t
                            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .filter(|w| is_identifier(w))
                        {
                            self.arith_refs.push((
                                name.to_string(),
                                frame.map.map(a.span),
                                frame.via.clone(),
                            ));
                        }
                    }
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                let integer = self.builtin_gives(canon, rest, &["-i"]);
                if integer && self.integer_attribute.is_none() {
                    self.integer_attribute = Some((frame.map.map(rest[0].span), frame.via.clone()));
                }
            }
            _ => {}
        }
    }

    /// The environment this command gives a program that could otherwise
    /// be local: each variable must be harmless globally or by the
    /// program's entry. Builtins start no program and are left out.
    fn check_environment(&mut self, canon: &str, entry: &Entry, frame: &Frame) {
        if self.catalog.is_shell_builtin(canon)
            || !matches!(entry.class, Class::Local | Class::Shell | Class::Wrapper)
        {
            return;
        }
        let anytime = self.repeats > 0 || !frame.via.is_empty();
        self.env_programs.push((canon.to_string(), anytime));
        let env = self.env.clone();
        for (name, span) in env {
            if self.catalog.is_dangerous_variable(&name)
                || self.catalog.is_harmless_variable(&name, Some(entry))
            {
                continue; // the first is reported where it is assigned
            }
            self.add_via(
                Rule::DangerousAssignment,
                span,
                format!("`{canon}` runs with {name} in its environment, which its catalog entry does not declare harmless: programs read variables like this for configuration, helper programs or options"),
                &frame.via,
            );
        }
    }

    /// A program that may write (not read-only) given an argument that
    /// names a protected place or a control place: which argument it
    /// writes is not modelled closely enough everywhere (`gunzip
    /// .git/hooks/x.gz`, `cp -t.git/hooks`), so it is not proven. The
    /// operands a write model says it writes are judged by place in
    /// `check_args`; a link maker's targets are judged here, since a
    /// later write through the link lands where it points.
    fn check_protected_mentions(
        &mut self,
        canon: &str,
        entry: &Entry,
        rest: &[Arg],
        frame: &Frame,
    ) {
        // A wrapper writes through its escapes (`find -fprint`) or through
        // what it runs, which is checked on its own, unless its entry says
        // it writes an operand itself (`script FILE`); a shell's writes are
        // its script's, and the words after the script are its arguments.
        let writer = entry.class == Class::Local
            || (entry.class == Class::Wrapper && entry.writes.is_some());
        if !writer || self.catalog.read_only_programs.iter().any(|p| p == canon) {
            return;
        }
        // A script (sed's `w`, awk's `print >`) writes where its text says,
        // and its reader hands those names to the write model.
        let modelled = entry.writes.is_some()
            || !entry.output_options.is_empty()
            || entry.script.is_some()
            || entry.removes.is_some();
        if entry.links {
            let operands: Vec<(usize, &Arg)> = crate::effects::operands(entry, rest);
            // With `-t DIR` every operand is a target and the links go in
            // DIR; otherwise the last operand is the link (or its directory).
            let (link, targets) = match crate::effects::option_values(
                &crate::effects::TARGET_DIRECTORY,
                rest,
            )
            .pop()
            {
                Some((_, dir)) => (
                    Some(format!("{}/", dir.trim_end_matches('/'))),
                    &operands[..],
                ),
                None => (
                    operands.last().map(|(_, a)| a.shape.clone()),
                    &operands[..operands.len().saturating_sub(1)],
                ),
            };
            let symbolic = crate::effects::makes_symlinks(entry, rest);
            for (_, target) in targets {
                let path = match (&link, symbolic) {
                    (Some(l), true) => crate::places::link_target(l, &target.shape),
                    _ => target.shape.clone(),
                };
                self.judge_write(
                    &format!("`{canon}` (a link to it)"),
                    &path,
                    target,
                    false,
                    frame,
                );
            }
        }
        for a in rest {
            let option = a.shape.starts_with('-');
            if modelled && !option {
                continue;
            }
            let place = self
                .catalog
                .names_protected_place(&a.shape)
                .map(str::to_string)
                .or_else(|| self.catalog.places.control_in(&a.shape));
            if let Some(place) = place {
                self.add(
                    frame,
                    Rule::WritesOutsideWork,
                    a.span,
                    format!("`{canon}` is given an argument naming {place}, where a write changes what later commands run, and its writes are not known precisely enough to rule that out"),
                );
                return;
            }
        }
    }

    /// What a builtin's arguments assign ([`super::setvars`]): a name not
    /// known statically, a subscript evaluated as arithmetic, a nameref, or
    /// a dangerous variable makes the command unknown.
    fn check_variable_targets(&mut self, canon: &str, rest: &[Arg], frame: &Frame) {
        let sets = super::setvars::sets(canon, rest);
        for t in &sets.targets {
            match &t.name {
                Some(n) if !t.nameref => {
                    self.assigned.otherwise.insert(n.clone());
                }
                _ => self.assigned.unknown = true,
            }
            if let (true, Some(n)) = (t.exported, &t.name) {
                self.exported
                    .push((n.clone(), frame.map.map(t.arg.span), frame.via.clone()));
            }
            let why = match &t.name {
                None => "sets a variable whose name is not known before it runs".to_string(),
                Some(n) if t.subscript => format!(
                    "assigns to an element of `{n}`: bash evaluates the subscript as arithmetic, which runs `$( )`"
                ),
                Some(n) if t.nameref => format!(
                    "makes `{n}` a reference: every later assignment to it sets the variable it names"
                ),
                Some(n) if t.assigns && self.catalog.is_dangerous_variable(n) => {
                    format!("sets {n}, which changes which code runs")
                }
                Some(_) => continue,
            };
            self.add(
                frame,
                Rule::DangerousAssignment,
                t.arg.span,
                format!("`{canon}` {why}"),
            );
        }
        for (arg, why) in &sets.notes {
            self.add(frame, Rule::DangerousAssignment, arg.span, *why);
        }
    }

    /// Escape options, opaque arguments, scripts and notes for one program.
    pub(super) fn check_args(
        &mut self,
        canon: &str,
        entry: &Entry,
        args: &[Arg],
        frame: &Frame,
    ) -> Verdict {
        let mut verdict = Verdict::Safe;
        if let Some(esc) = &entry.default_escape {
            if !has_any_option(entry, args, &entry.local_with)
                && !directory_given(self.catalog, args, &esc.unless_dir)
            {
                let name = args.first().map(|a| a.span).unwrap_or_default();
                verdict = verdict.max(self.add(frame, Rule::EscapeOption, name, esc.why.clone()));
            }
        }
        if let Some(table) = &entry.options {
            for (i, option) in
                crate::option_table::read(table, args, entry.bundled_options).unreviewed
            {
                verdict = verdict.max(self.add(
                    frame,
                    Rule::UnreviewedOption,
                    args[i].span,
                    format!("`{canon} {option}` is not an option of `{canon}` that bashgate has reviewed"),
                ));
            }
        }
        // A word known only at run time can be an option that runs a
        // program or one that writes a file (`iconv "$x" .bashrc` given
        // `-o`, or `-o.bashrc` itself).
        let runs = !entry.escapes.is_empty() || entry.script.is_some();
        let risky = runs || !entry.output_options.is_empty();
        let what = if runs { "run programs" } else { "write files" };
        // With an option table, short escape letters are matched where the
        // program reads them as options (`cp -t assets`: no `-s` in it),
        // and a run-time word that is an option's value (`pv -L "$n"`) is
        // data unless it can split into more words. (Once such a word may
        // be an option, the ones after it are reported with it: the first
        // report makes the verdict.)
        let reading = entry
            .options
            .as_ref()
            .filter(|t| t.syntax != crate::catalog::OptionSyntax::Operands)
            .map(|t| crate::option_table::read(t, args, entry.bundled_options));
        let given: Option<&Vec<(usize, String)>> = reading.as_ref().map(|r| &r.given);
        let may_be_option = |i: usize| reading.as_ref().is_none_or(|r| r.operands.contains(&i));
        let mut options_done = false;
        let mut opaque_reported = false;
        for (i, a) in args.iter().enumerate() {
            match &a.value {
                Value::Static(s) => {
                    if entry.end_of_options && !options_done && s == "--" {
                        options_done = true;
                        continue;
                    }
                    // `tar xIf prog`: a dash-less first argument is a cluster.
                    let bundled;
                    let s = if i == 0 && entry.bundled_options && !s.starts_with('-') {
                        bundled = format!("-{s}");
                        &bundled
                    } else {
                        s
                    };
                    for esc in &entry.escapes {
                        // With a table, options are matched as the reader
                        // read them (a long one by its unique abbreviation).
                        let matched = match (&esc.short, &esc.long, &given) {
                            (Some(letter), _, Some(given)) if letter.chars().count() == 1 => given
                                .iter()
                                .any(|(at, o)| *at == i && o.strip_prefix('-') == Some(letter)),
                            (_, Some(long), Some(given)) => given
                                .iter()
                                .any(|(at, o)| *at == i && o.strip_prefix("--") == Some(long)),
                            _ => escape_matches(esc, s, options_done, entry.splits_operands),
                        };
                        if matched && !directory_given(self.catalog, args, &esc.unless_dir) {
                            let rule = match esc.verdict {
                                Some(EscapeVerdict::Network) => Rule::NetworkOption,
                                Some(EscapeVerdict::Package) => Rule::PackageInstall,
                                Some(EscapeVerdict::Unknown) | None => Rule::EscapeOption,
                            };
                            verdict = verdict.max(self.add(frame, rule, a.span, esc.why.clone()));
                        }
                    }
                    if entry.destructive.iter().any(|d| d == s) {
                        self.add(
                            frame,
                            Rule::DestructiveLocal,
                            a.span,
                            format!("`{canon} {s}` deletes files"),
                        );
                    }
                    if entry.evaluates_names
                        && names_a_variable(canon, args, i)
                        && runs_subscript(s)
                    {
                        verdict = verdict.max(self.add(
                            frame,
                            Rule::SubscriptEvaluation,
                            a.span,
                            format!("`{canon}` evaluates the subscript in `{s}`, running the command inside it"),
                        ));
                    }
                }
                Value::Glob(pattern) => {
                    if risky && !opaque_reported && glob_can_reach_escape(entry, pattern) {
                        opaque_reported = true;
                        verdict = verdict.max(self.add(
                            frame,
                            Rule::OpaqueArgument,
                            a.span,
                            format!("the glob `{pattern}` could expand to one of `{canon}`'s options that {what}"),
                        ));
                    }
                }
                Value::Dynamic => {
                    // An option's value can still hold text an escape
                    // looks for anywhere (tar's `host:` archive).
                    let reaches = if a.splits || may_be_option(i) {
                        dynamic_can_reach_escape(entry, a)
                    } else {
                        entry.escapes.iter().any(|e| e.contains.is_some())
                    };
                    if risky && !opaque_reported && reaches {
                        opaque_reported = true;
                        verdict = verdict.max(self.add(
                            frame,
                            Rule::OpaqueArgument,
                            a.span,
                            format!("this argument is only known at run time, and `{canon}` has options that {what}"),
                        ));
                    }
                    if entry.evaluates_names && names_a_variable(canon, args, i) {
                        verdict = verdict.max(self.add(
                            frame,
                            Rule::SubscriptEvaluation,
                            a.span,
                            format!("`{canon}` evaluates a variable name known only at run time; a subscript in it would run"),
                        ));
                    }
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        for (i, path) in crate::effects::file_effects(entry, args).writes {
            // A path is judged once (`cp a a a … dir`).
            if !seen.insert(path.clone()) {
                continue;
            }
            verdict =
                verdict.max(self.judge_write(canon, &path, &args[i], entry.name_prefix, frame));
        }
        if let Some(esc) = merges_tree_here(entry, args) {
            verdict = verdict.max(self.add(frame, Rule::EscapeOption, esc.0, esc.1));
        }
        if let Some((span, why)) = brings_tree_in(&self.catalog.places, entry, args) {
            verdict = verdict.max(self.add(frame, Rule::WritesOutsideWork, span, why));
        }
        if let Some(mode_options) = &entry.modes {
            // chmod: any argument may be a mode (`-w`, `u+s`, `4755`), and
            // the first operand is one; install -m: the option's values in
            // every spelling (`-m4755`, `-Dm 4755`, `--mod=4755`).
            let modes: Vec<(usize, String)> = if mode_options.is_empty() {
                let first = args.iter().position(|a| !a.shape.starts_with('-'));
                args.iter()
                    .enumerate()
                    .filter(|(i, a)| a.text().is_some() || Some(*i) == first)
                    .map(|(i, a)| (i, a.shape.clone()))
                    .collect()
            } else {
                crate::effects::option_values(mode_options, args)
            };
            for (i, mode) in modes {
                let why = if mode.contains('*') {
                    format!("`{canon}` is given a mode only known at run time, which could set a setuid or setgid bit")
                } else if grants_setid(&mode) {
                    format!("`{canon}` sets a setuid or setgid bit")
                } else {
                    continue;
                };
                verdict = verdict.max(self.add(frame, Rule::Privilege, args[i].span, why));
            }
        }
        if let Some(lang) = entry.script {
            let checked = scripts::check(lang, entry.options.as_ref(), args);
            for f in checked.findings {
                verdict = verdict.max(self.add(frame, f.rule, f.span, f.message));
            }
            for (span, file) in checked.writes {
                let value = Value::Static(file.clone());
                verdict = verdict.max(self.judge_written_word(canon, &file, &value, span, frame));
            }
        }
        verdict
    }
}

/// The shell options `set` or `shopt` turns on, with where each is
/// named: letters in `-` clusters (`-a` allexport, `-k` keyword, `-H`
/// histexpand) and the names after `-o` (`set -eo keyword`, `shopt -so
/// allexport`) or given to `shopt -s`; `None` for one only known at run
/// time. Options end at `--` or the first operand (for `set`).
///
/// A word only known at run time where options are read can be any of
/// them: `set "$1"` given `-k`, `set -e$x` given `k`, `shopt "$1" keyword`
/// given `-so`. Only a word whose first character is known and is neither
/// `-` nor `+` is surely an operand.
fn shell_options_on(canon: &str, rest: &[Arg]) -> Vec<(crate::span::Span, Option<String>)> {
    let mut out = Vec::new();
    // shopt turns its names on with `-s`, or with an option word only
    // known at run time (which may be `-s`).
    let mut shopt_set = false;
    let mut shopt_names = false;
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        i += 1;
        let Some(t) = a.text() else {
            let may_be_option =
                !shopt_names && matches!(a.shape.chars().next(), None | Some('-' | '+' | '*'));
            match canon {
                "set" if may_be_option => out.push((a.span, None)),
                "set" => break,
                // One word (quoted) can be an option cluster such as
                // `-so`, which turns on the names after it, judged as they
                // come; after one that may be `-s` it can be a name too,
                // and a word that splits can hold names itself.
                _ if may_be_option => {
                    if a.splits || shopt_set {
                        out.push((a.span, None));
                    }
                    shopt_set = true;
                }
                _ => {
                    shopt_names = true;
                    if shopt_set {
                        out.push((a.span, None));
                    }
                }
            }
            continue;
        };
        if t == "--" {
            break;
        }
        if let Some(body) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            if body.is_empty() {
                break;
            }
            let enabling = t.starts_with('-');
            for c in body.chars() {
                match (canon, c) {
                    ("set", 'a') if enabling => out.push((a.span, Some("allexport".into()))),
                    ("set", 'k') if enabling => out.push((a.span, Some("keyword".into()))),
                    ("set", 'H') if enabling => out.push((a.span, Some("histexpand".into()))),
                    ("set", 'o') => {
                        // The next word is an option name.
                        if let Some(n) = rest.get(i) {
                            i += 1;
                            if enabling {
                                out.push((n.span, n.text().map(String::from)));
                            }
                        }
                    }
                    ("shopt", 's') => shopt_set = true,
                    _ => {}
                }
            }
            continue;
        }
        if canon == "shopt" {
            shopt_names = true;
            if shopt_set {
                out.push((a.span, Some(t.to_string())));
            }
            continue;
        }
        break;
    }
    out
}

/// Where `cd`, `pushd` or `popd` goes.
enum CdTarget {
    /// Nowhere (`pushd` with no argument swaps, so it is not this).
    Stays,
    /// To a directory as written; `cd` alone goes home (`~`).
    To(String),
    /// To one no argument shows: a run-time name, `-` ($OLDPWD), a stack
    /// entry (`+N`, `-N`, `popd`), or pushd's swap.
    Unknown(crate::span::Span),
}

fn cd_target(canon: &str, rest: &[Arg], entry: Option<&Entry>) -> CdTarget {
    let here = rest.first().map(|a| a.span).unwrap_or_default();
    let Some(entry) = entry.filter(|_| canon != "popd") else {
        return CdTarget::Unknown(here);
    };
    // Its first operand, as the one reader reads cd's and pushd's options.
    let operand = crate::effects::operands(entry, rest)
        .first()
        .map(|(_, a)| *a);
    match operand {
        None if canon == "pushd" => CdTarget::Unknown(here),
        None => CdTarget::To("~".into()),
        Some(a) => match a.text() {
            None => CdTarget::Unknown(a.span),
            Some(t) if t == "-" || t.starts_with(['+', '-']) => CdTarget::Unknown(a.span),
            Some("") => CdTarget::Stays,
            Some(t) => CdTarget::To(t.to_string()),
        },
    }
}

/// A recursive copy whose source's contents land directly in the working
/// directory or home (`cp -a payload/. .`, `cp -rT src ~`): what it writes
/// there depends on files the command does not show, as with extracting
/// an archive (`tar -x` without `-C`).
fn merges_tree_here(entry: &Entry, args: &[Arg]) -> Option<(crate::span::Span, String)> {
    if entry.writes != Some(crate::catalog::Writes::Last) || !entry.recursive_copy {
        return None;
    }
    if !has_any_option(entry, args, &RECURSIVE) {
        return None;
    }
    let no_target = has_any_option(entry, args, &["--no-target-directory", "-T"]);
    let operands: Vec<&Arg> = crate::effects::operands(entry, args)
        .into_iter()
        .map(|(_, a)| a)
        .collect();
    let (dest, sources) = operands.split_last()?;
    let here = |s: &str| matches!(s.trim_end_matches('/'), "" | "." | "~" | "*" | "./.");
    if !here(&dest.shape) && !dest.shape.trim_end_matches('/').ends_with("/.") {
        return None;
    }
    let merges = no_target
        || sources.iter().any(|s| {
            let t = s.shape.trim_end_matches('/');
            t == "." || t.ends_with("/.") || t.contains('*')
        });
    merges.then(|| {
        (
            dest.span,
            "a directory's contents are copied into the working directory or home, where names the command does not show (.git/hooks, .envrc...) would land".to_string(),
        )
    })
}

/// A move, or a recursive copy, of something outside the working tree
/// into anywhere but a scratch place: it may be a directory, whose names
/// the command does not show (`cp -r /tmp/payload sub`, `mv /tmp/x sub`
/// bring `sub/.git/config` along if the payload holds one).
fn brings_tree_in(
    places: &crate::places::Places,
    entry: &Entry,
    args: &[Arg],
) -> Option<(crate::span::Span, String)> {
    use crate::places::{Known, Place};
    if entry.writes != Some(crate::catalog::Writes::Last) {
        return None;
    }
    let moves = entry.removes == Some(crate::catalog::Removes::AllButLast);
    let recursive = entry.recursive_copy && has_any_option(entry, args, &RECURSIVE);
    if !moves && !recursive {
        return None;
    }
    let targets = crate::effects::option_values(&crate::effects::TARGET_DIRECTORY, args);
    let operands = crate::effects::operands(entry, args);
    let (dest, sources) = match targets.first() {
        Some((_, t)) => (t.clone(), &operands[..]),
        None => {
            let (last, sources) = operands.split_last()?;
            (last.1.shape.clone(), sources)
        }
    };
    if places.place(&dest, Known::Fully) == Place::Scratch {
        return None;
    }
    let (_, from) = sources
        .iter()
        .find(|(_, s)| places.place(&s.shape, Known::of(&s.value, false)) != Place::Work)?;
    let what = if moves { "moves" } else { "copies a tree" };
    Some((
        from.span,
        format!(
            "this {what} from `{}`, outside the working tree, into it: a directory brings names the command does not show (.git/hooks, .envrc...)",
            from.shape
        ),
    ))
}

const RECURSIVE: [&str; 5] = ["--recursive", "--archive", "-R", "-r", "-a"];

/// The subcommand and its class, when the entry lists subcommands and the
/// first operand is one of them.
fn subcommand(entry: &Entry, rest: &[Arg]) -> Option<(String, Class)> {
    if entry.subcommands.is_empty() {
        return None;
    }
    let texts: Vec<Option<String>> = rest.iter().map(|a| a.text().map(str::to_string)).collect();
    match crate::argv::subcommand_of(&entry.options_with_value, &texts) {
        crate::argv::Sub::Found(_, s) => entry.subcommands.get(s).map(|c| (s.to_string(), *c)),
        _ => None,
    }
}

fn escape_matches(esc: &Escape, arg: &str, options_done: bool, splits: bool) -> bool {
    if let Some(needle) = &esc.contains {
        return arg.contains(needle.as_str());
    }
    if options_done {
        return false;
    }
    if let Some(long) = &esc.long {
        if let Some(body) = arg.strip_prefix("--") {
            let name = body.split('=').next().unwrap_or("");
            // GNU getopt accepts any unambiguous abbreviation; treating every
            // prefix as a match can only over-report.
            return !name.is_empty() && long.starts_with(name);
        }
        return false;
    }
    if let Some(short) = &esc.short {
        return arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(short.as_str());
    }
    if let Some(word) = &esc.word {
        // A program that tokenizes its operands (ss's filters) reads words
        // inside one argument; every token counts.
        return arg == word
            || splits
                && arg
                    .split(|c: char| c.is_whitespace() || "()!,'\"=&|<>".contains(c))
                    .any(|t| t == word);
    }
    if let Some(prefix) = &esc.prefix {
        return arg.starts_with(prefix.as_str());
    }
    false
}

/// Whether a glob pattern (globs written as `*`) could expand to an argument
/// one of the entry's escapes would match.
fn glob_can_reach_escape(entry: &Entry, pattern: &str) -> bool {
    // Every expansion starts with the pattern's literal prefix: `src/*.rs`
    // can never become an option.
    if !pattern.starts_with(['*', '-']) {
        return false;
    }
    if entry.script.is_some() || !entry.output_options.is_empty() {
        // A glob can become the script or `-e` and `-f` options, or an
        // output option with its file attached (`-o.bashrc`).
        return true;
    }
    entry.escapes.iter().any(|esc| {
        if let Some(w) = &esc.word {
            return glob_match(pattern, w);
        }
        if esc.contains.is_some() {
            // A file name with that text is data, not an option.
            return false;
        }
        // Options: any expansion that can start with `-` (or the prefix).
        let start = esc.prefix.as_deref().unwrap_or("-");
        pattern.starts_with('*') || pattern.starts_with(start)
    })
}

/// Whether a word known only at run time could become an argument one of
/// the entry's escapes matches. One that cannot split and begins with
/// literal text (`"backup-$d.tgz"`, `src/$f`) can only be what that text
/// allows: no option when it does not begin with `-`.
fn dynamic_can_reach_escape(entry: &Entry, arg: &Arg) -> bool {
    if arg.splits || arg.shape.starts_with(['*', '-', '+', '@']) || entry.script.is_some() {
        return true;
    }
    entry.escapes.iter().any(|esc| {
        if let Some(w) = &esc.word {
            return glob_match(&arg.shape, w);
        }
        if let Some(p) = &esc.prefix {
            return glob_match(&arg.shape, p) || arg.shape.starts_with(p.as_str());
        }
        // Text anywhere in it: the run-time part may hold it.
        esc.contains.is_some()
    })
}

/// For builtins that take variable names: is `args[i]` one of them?
/// `test`/`[` and `printf` take a name only after `-v`.
fn names_a_variable(canon: &str, args: &[Arg], i: usize) -> bool {
    match canon {
        "test" | "[" | "printf" => i > 0 && args[i - 1].text() == Some("-v"),
        _ => true,
    }
}

/// A chmod-style mode that sets the setuid or setgid bit: octal `4755`,
/// `2755`, `6777`, or symbolic `u+s`, `g=s`, `+s`.
fn grants_setid(mode: &str) -> bool {
    let octal_setid = |digits: &str| {
        digits.len() >= 4 && (digits.as_bytes()[digits.len() - 4] - b'0') & 0b110 != 0
    };
    let is_octal = |t: &str| !t.is_empty() && t.chars().all(|c| ('0'..='7').contains(&c));
    if is_octal(mode) {
        return octal_setid(mode);
    }
    // Symbolic clauses: `u+s`, `g=rxs`, and an operator with octal bits
    // (`+4000`, `=6755`, `u+x,+4000`).
    mode.split(',').any(|clause| {
        clause.find(['+', '=']).is_some_and(|i| {
            let rhs = &clause[i + 1..];
            rhs.contains('s')
                || rhs
                    .split(['+', '-', '='])
                    .any(|t| is_octal(t) && octal_setid(t))
        })
    })
}

/// Whether one of `options` is given a static directory that is neither
/// the working directory nor home: `-C out`, `-Cout`, `--directory=out`.
fn directory_given(catalog: &Catalog, args: &[Arg], options: &[String]) -> bool {
    if options.is_empty() {
        return false;
    }
    let mut values = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let Some(t) = a.text() else { continue };
        for o in options {
            if t == o {
                values.push(args.get(i + 1).and_then(Arg::text));
            } else if let Some(rest) = t.strip_prefix(o.as_str()).filter(|v| !v.is_empty()) {
                if o.starts_with("--") {
                    if let Some(v) = rest.strip_prefix('=') {
                        values.push(Some(v));
                    }
                } else {
                    values.push(Some(rest));
                }
            }
        }
    }
    // Every directory given (tar takes several, in order) must be elsewhere.
    !values.is_empty()
        && values
            .iter()
            .all(|v| v.is_some_and(|v| is_elsewhere(catalog, v)))
}

/// A directory where extracting names no command shows is harmless: a
/// scratch place, with no control place in its path (`-C /tmp/x`).
fn is_elsewhere(catalog: &Catalog, dir: &str) -> bool {
    catalog.places.place(dir, crate::places::Known::Fully) == crate::places::Place::Scratch
}

/// Whether an interpreter takes its program from stdin: no code option
/// (`python -c`, `node -e`, `perl -e`, `php -r`, `python -m`...) and no
/// script operand other than `-`.
fn reads_program_from_stdin(rest: &[Arg]) -> bool {
    const CODE_OPTIONS: &[&str] = &[
        "-c",
        "-e",
        "-E",
        "-r",
        "-m",
        "-p",
        "--eval",
        "--print",
        "--command",
    ];
    for a in rest {
        match a.text() {
            Some("-") => return true,
            Some(t) if CODE_OPTIONS.contains(&t) || t.starts_with("--eval=") => return false,
            Some(t) if t.starts_with('-') => {}
            _ => return false,
        }
    }
    true
}

/// Whether the program decodes or transforms its input (base64 -d...).
fn is_decoding(entry: &Entry, rest: &[Arg]) -> bool {
    let Some(opts) = &entry.decoder else {
        return false;
    };
    if opts.is_empty() {
        return true;
    }
    rest.iter().filter_map(Arg::text).any(|a| {
        // A long name's abbreviations count (`--decomp`, xxd's `-rev`).
        let name = a.trim_start_matches('-').split('=').next().unwrap_or("");
        opts.iter().any(|o| {
            a == o
                || (o.len() == 2
                    && o.starts_with('-')
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].contains(&o[1..]))
                || (o.len() > 2
                    && a.starts_with('-')
                    && !name.is_empty()
                    && o.trim_start_matches('-').starts_with(name))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setid_modes() {
        for m in [
            "4755",
            "2755",
            "6777",
            "04755",
            "u+s",
            "g+s",
            "+s",
            "a=rwxs",
            "u+x,g+s",
            "+4000",
            "=6755",
            "u+x,+4000",
            "+2000",
        ] {
            assert!(grants_setid(m), "{m}");
        }
        for m in [
            "755", "0755", "1777", "u+x", "go-w", "a=r", "-s", "rw", "+1000", "-4000", "=755",
        ] {
            assert!(!grants_setid(m), "{m}");
        }
    }

    #[test]
    fn globs() {
        assert!(glob_match("*", "-exec"));
        assert!(glob_match("-e*", "-exec"));
        assert!(!glob_match("*.py", "-exec"));
        assert!(glob_match("-exe*", "-exec"));
        assert!(!glob_match("src*", "-exec"));
    }
}
