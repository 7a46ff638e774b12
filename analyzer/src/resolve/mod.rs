//! Resolution: walks the IR, turns every simple command into an
//! invocation (unwrapping wrappers, parsing embedded scripts), and records
//! findings. The verdict is derived from the findings afterwards.

mod invoke;
mod options;
mod setvars;
mod shells;
mod wrappers;
mod writes;

pub use shells::Syntax;

use std::collections::{HashMap, HashSet};

use crate::analysis::{Finding, Invocation, RedirectUse};
use crate::catalog::Catalog;
use crate::ir::{Command, Redirect, RedirectTarget, Simple};
use crate::limits::Limits;
use crate::lower::{self, lower, Lowered};
use crate::parse::{parse, Parsed};
use crate::rules::Rule;
use crate::span::Span;
use crate::verdict::Verdict;
use crate::word::{runs_subscript, DynKind, Part, Value, Word};

use crate::args::{Arg, Carries};

/// Maps spans of the text being walked back onto the original command.
#[derive(Debug, Clone, Copy)]
pub enum SpanMap {
    /// The text starts at this offset of the original, byte for byte.
    Offset(usize),
    /// The text was derived (unescaped, joined): everything in it points
    /// at this span of the original.
    Fixed(Span),
}

impl SpanMap {
    pub fn map(self, s: Span) -> Span {
        match self {
            SpanMap::Offset(o) => Span::new(s.start + o, s.end + o),
            SpanMap::Fixed(f) => f,
        }
    }

    /// The map for a script embedded in this text at `origin`, or derived
    /// from the text at `fallback`.
    pub fn embed(self, origin: Option<usize>, fallback: Span) -> SpanMap {
        match (self, origin) {
            (SpanMap::Offset(o), Some(at)) => SpanMap::Offset(o + at),
            _ => SpanMap::Fixed(self.map(fallback)),
        }
    }
}

/// Where a walk is: how deep in embedded scripts, how to map spans, and
/// what it was reached through.
#[derive(Debug, Clone)]
pub struct Frame {
    pub embed_depth: usize,
    pub map: SpanMap,
    pub via: Vec<String>,
    /// The grammar of the shell that runs this text: scripts it evals or
    /// traps are read by the same shell.
    pub syntax: Syntax,
}

impl Frame {
    pub fn with_via(&self, label: impl Into<String>) -> Frame {
        let mut f = self.clone();
        f.via.push(label.into());
        f
    }
}

/// What a command reads on its standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feed {
    /// Whatever the shell running the command was given.
    Inherited,
    /// The output of an earlier pipeline stage.
    Pipe { network: bool, decoded: bool },
    /// A here-document or here-string: its text when static.
    Doc {
        text: Option<String>,
        origin: Option<usize>,
        span: Span,
    },
    /// A file (`< file`).
    File,
}

/// What a program writes on its standard output, for the next stage.
#[derive(Debug, Clone, Copy, Default)]
struct Output {
    network: bool,
    decoded: bool,
}

pub struct Resolver<'c> {
    catalog: &'c Catalog,
    limits: &'c Limits,
    /// Parser steps left for this command's scripts (`max_parse_steps`).
    parse_steps_left: usize,
    pub findings: Vec<Finding>,
    pub invocations: Vec<Invocation>,
    pub redirects: Vec<RedirectUse>,
    /// The directories the command may move to, kept for the analysis
    /// (`working_dirs` is spent judging relative writes).
    pub moved_to: Vec<String>,
    pub moved_unknown: bool,
    outputs: Vec<Output>,
    /// Variables evaluated arithmetically, where, and through what.
    arith_refs: Vec<(String, Span, Vec<String>)>,
    /// Variables given a value only known at run time somewhere in the
    /// command (`x=$(...)`, `read x`, `for x in $(...)`).
    runtime_vars: HashMap<String, Span>,
    /// What variables set in this command can carry: a variable assigned
    /// from network output (`x=$(curl ...)`, `read x < <(curl ...)`) makes
    /// every later `$x` suspect, since which variable is which is not
    /// tracked.
    variables_carry: Carries,
    /// Where `declare -i` (or kin) gives variables the integer attribute.
    integer_attribute: Option<(Span, Vec<String>)>,
    /// Substitutions inside arithmetic: their sole program (if any), where,
    /// and through what.
    arith_outputs: Vec<(Option<String>, Span, Vec<String>)>,
    /// Files run as code (a script operand, `source`, `./file`): the path,
    /// where, and through what; checked in `finish` against the files a
    /// network program in the same command may have written.
    code_files: Vec<(String, Span, Vec<String>)>,
    /// Every function the command defines, anywhere.
    functions: HashSet<String>,
    /// Variables put in the environment of the program being resolved:
    /// prefix assignments and `env NAME=v`, innermost last (mapped spans).
    env: Vec<(String, Span)>,
    /// Variables exported anywhere in the command (`export X`, `declare
    /// -x`), with where and through what; checked in `finish` against every
    /// program that runs.
    exported: Vec<(String, Span, Vec<String>)>,
    /// Plain assignments (`X=1` alone), exported too under `set -a`.
    /// With the number of programs started before it, when that is the
    /// order they run in (outside loops, functions and embedded scripts).
    plain_assigned: Vec<(String, Span, Vec<String>, Option<usize>)>,
    /// How many loops or function bodies the walk is inside: there a
    /// command may run again after the text that follows it.
    repeats: usize,
    /// Where `set -a` (or `-o allexport`) exports every later assignment.
    allexport: Option<(Span, Vec<String>)>,
    /// Programs started (not builtins) that could otherwise be local, for
    /// exported variables, each with whether it may run at any time: in a
    /// loop, a function body or an embedded script (a trap runs at exit).
    env_programs: Vec<(String, bool)>,
    /// Every working directory the command may move to.
    working_dirs: writes::WorkingDirs,
    /// Relative writes, judged in `finish` against `working_dirs`.
    relative_writes: Vec<writes::RelativeWrite>,
    /// Whether the command may turn on dotglob (`shopt -s dotglob`,
    /// `GLOBIGNORE=`): a glob's leading `*` then matches hidden names.
    dotglob: bool,
    /// Which variables the command assigns, and how.
    assigned: Assigned,
    /// Redirects whose whole target is one variable's value and could be
    /// /dev/tcp/... unless that variable only ever holds relative names:
    /// the variable, where, and through what (judged in `finish`).
    variable_redirects: Vec<(String, Span, Vec<String>)>,
}

/// The variables a command assigns, anywhere in it.
#[derive(Debug, Default)]
struct Assigned {
    /// By `for` or `select` over relative names only (`for f in *.txt`).
    relative_loops: HashSet<String>,
    /// Any other way: `x=`, `read x`, `declare`, `${x:=}`, arithmetic,
    /// other loops.
    otherwise: HashSet<String>,
    /// A name only known at run time, or a nameref, was assigned.
    unknown: bool,
    /// Given a text that, spliced into an arithmetic expression (`$x`),
    /// could complete a subscript: it holds `[`, `$`, a backquote or a
    /// quote or backslash.
    unplain: HashSet<String>,
}

impl<'c> Resolver<'c> {
    pub fn new(catalog: &'c Catalog, limits: &'c Limits) -> Resolver<'c> {
        Resolver {
            catalog,
            limits,
            parse_steps_left: limits.max_parse_steps,
            findings: Vec::new(),
            invocations: Vec::new(),
            redirects: Vec::new(),
            outputs: Vec::new(),
            arith_refs: Vec::new(),
            runtime_vars: HashMap::new(),
            variables_carry: Carries::default(),
            integer_attribute: None,
            arith_outputs: Vec::new(),
            code_files: Vec::new(),
            functions: HashSet::new(),
            env: Vec::new(),
            exported: Vec::new(),
            plain_assigned: Vec::new(),
            repeats: 0,
            allexport: None,
            env_programs: Vec::new(),
            working_dirs: writes::WorkingDirs::default(),
            moved_to: Vec::new(),
            moved_unknown: false,
            relative_writes: Vec::new(),
            dotglob: false,
            assigned: Assigned::default(),
            variable_redirects: Vec::new(),
        }
    }

    /// Records a finding at a span of the text `frame` is walking.
    fn add(
        &mut self,
        frame: &Frame,
        rule: Rule,
        span: Span,
        message: impl Into<String>,
    ) -> Verdict {
        let mut message = message.into();
        if !frame.via.is_empty() {
            message = format!("{message} (inside {})", frame.via.join(" → "));
        }
        self.findings.push(Finding {
            rule,
            span: frame.map.map(span),
            message,
        });
        rule.verdict()
    }

    /// Parses a script with tree-sitter and lowers its tree. `None` when a
    /// limit stopped the parse or the tree (its finding is recorded).
    fn parse_and_lower(&mut self, text: &str, frame: &Frame) -> Option<Lowered> {
        let whole = Span::new(0, text.len());
        let (tree, repaired, unrepaired) = match parse(
            text,
            self.limits,
            &mut self.parse_steps_left,
        ) {
            Parsed::Tree {
                tree,
                text,
                unrepaired,
            } => (tree, text, unrepaired),
            Parsed::TimedOut => {
                self.add(
                    frame,
                    Rule::LimitExceeded,
                    whole,
                    format!(
                        "parsing took longer than {} ms",
                        self.limits.parse_timeout.as_millis()
                    ),
                );
                return None;
            }
            Parsed::TooManySteps => {
                self.add(
                    frame,
                    Rule::LimitExceeded,
                    whole,
                    format!(
                        "parsing the command needs more than {} steps (hundreds of parser operations)",
                        self.limits.max_parse_steps
                    ),
                );
                return None;
            }
            Parsed::Failed => {
                self.add(
                    frame,
                    Rule::ParseError,
                    whole,
                    "the parser could not produce a tree",
                );
                return None;
            }
        };
        let root = tree.root_node();
        let nodes = root.descendant_count();
        if nodes > self.limits.max_nodes {
            self.add(
                frame,
                Rule::LimitExceeded,
                whole,
                format!(
                    "the syntax tree has {nodes} nodes; the limit is {}",
                    self.limits.max_nodes
                ),
            );
            return None;
        }
        for d in unrepaired.iter().take(3) {
            self.add(frame, Rule::ParseError, d.span, d.why);
        }
        // Same length as `text`; only misread newlines became `;`.
        Some(lower(root, &repaired, self.limits.max_depth))
    }

    /// Parses and walks a script: the top-level command or an embedded one.
    /// Returns whether anything at all was in it.
    pub fn script(&mut self, text: &str, frame: &Frame, feed: &Feed) -> bool {
        let whole = Span::new(0, text.len());
        if text.len() > self.limits.max_bytes {
            self.add(
                frame,
                Rule::LimitExceeded,
                whole,
                format!(
                    "the script is {} bytes; the limit is {}",
                    text.len(),
                    self.limits.max_bytes
                ),
            );
            return true;
        }
        // One simple command of plain words needs no parser (lower/plain.rs);
        // a pipeline is parsed a stage at a time where it can be (lower/stages.rs).
        let lowered = match lower::plain(text)
            .or_else(|| lower::pipeline(text, self.limits, &mut self.parse_steps_left))
        {
            Some(lowered) => lowered,
            None => match self.parse_and_lower(text, frame) {
                Some(lowered) => lowered,
                None => return true,
            },
        };
        for err in lowered.errors.iter().take(3) {
            let snippet: String = text
                .get(err.start..err.end)
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            let msg = if snippet.is_empty() {
                "bash syntax is incomplete here (a missing token)".to_string()
            } else {
                format!(
                    "bash syntax not understood near `{}`",
                    snippet.replace('\n', "⏎")
                )
            };
            self.add(frame, Rule::ParseError, *err, msg);
        }
        if let Some(sp) = lowered.too_deep {
            self.add(
                frame,
                Rule::LimitExceeded,
                sp,
                format!(
                    "constructs nest deeper than {} levels",
                    self.limits.max_depth
                ),
            );
        }
        for (name, sp) in &lowered.arith_refs {
            self.arith_refs
                .push((name.clone(), frame.map.map(*sp), frame.via.clone()));
        }
        for (name, sp) in &lowered.assigned {
            self.assigned.otherwise.insert(name.clone());
            if self.catalog.is_dangerous_variable(name) {
                self.add(
                    frame,
                    Rule::DangerousAssignment,
                    *sp,
                    format!("an expansion assigns {name}, which changes which code runs"),
                );
            }
        }
        for (name, sp) in &lowered.defaulted {
            self.runtime_vars
                .entry(name.clone())
                .or_insert(frame.map.map(*sp));
        }
        for v in &lowered.loop_vars {
            if v.dynamic {
                self.runtime_vars
                    .entry(v.name.clone())
                    .or_insert(frame.map.map(v.span));
            }
            if v.relative {
                self.assigned.relative_loops.insert(v.name.clone());
            } else {
                self.assigned.otherwise.insert(v.name.clone());
            }
            if self.catalog.is_dangerous_variable(&v.name) {
                self.add(
                    frame,
                    Rule::DangerousAssignment,
                    v.span,
                    format!("the loop assigns {}, which changes which code runs", v.name),
                );
            }
        }
        for sp in &lowered.subscript_tests {
            self.add(
                frame,
                Rule::SubscriptEvaluation,
                *sp,
                "`-v` evaluates this name's subscript, running the command substitution in it",
            );
        }
        for out in &lowered.arith_outputs {
            self.arith_outputs.push((
                out.sole_program.clone(),
                frame.map.map(out.span),
                frame.via.clone(),
            ));
        }
        for sp in &lowered.prompt_expansions {
            self.add(
                frame,
                Rule::SubscriptEvaluation,
                *sp,
                "`@P` expands the value like a prompt, running any command substitution in it",
            );
        }
        let any = !lowered.commands.is_empty() || !lowered.errors.is_empty();
        self.commands(&lowered.commands, frame, feed);
        any
    }

    /// Records a finding at a span of the original command, naming the
    /// embedded scripts it was found in.
    fn add_via(&mut self, rule: Rule, span: Span, mut message: String, via: &[String]) {
        if !via.is_empty() {
            message = format!("{message} (inside {})", via.join(" → "));
        }
        self.findings.push(Finding {
            rule,
            span,
            message,
        });
    }

    /// Notes a file that runs as code.
    pub(super) fn note_code_file(&mut self, arg: &Arg, frame: &Frame) {
        if let Some(path) = arg.text() {
            self.code_files
                .push((path.to_string(), frame.map.map(arg.span), frame.via.clone()));
        }
    }

    /// Files run as code that a network program in this command may have
    /// written: downloaded and run, remote code through a file (`curl -o
    /// i.sh URL && bash i.sh`, `wget URL/i.sh; sh i.sh`, `curl URL > x;
    /// ./x`). What a network program may have written: any of its
    /// arguments, the last part of a URL it was given, and (when any
    /// program here reaches the network) every file a redirect writes.
    fn downloaded_code(&mut self) {
        let network: Vec<&Invocation> = self
            .invocations
            .iter()
            .filter(|i| i.verdict == Verdict::Network)
            // A runtime's own arguments are its program, not a download.
            .filter(|i| {
                let name = i.program.as_deref().unwrap_or("");
                let base = name.rsplit('/').next().unwrap_or(name);
                !self
                    .catalog
                    .lookup(base)
                    .is_some_and(|(_, e)| invoke::runs_code(e))
            })
            .collect();
        if network.is_empty() || self.code_files.is_empty() {
            return;
        }
        let mut written: HashSet<String> = HashSet::new();
        for inv in &network {
            for a in inv.args.iter().flatten() {
                written.insert(plain_path(a).to_string());
                if let Some((_, rest)) = a.split_once("://") {
                    let path = rest.split(['?', '#']).next().unwrap_or(rest);
                    if let Some(last) = path.rsplit('/').next().filter(|l| !l.is_empty()) {
                        written.insert(last.to_string());
                    }
                }
            }
        }
        for r in self.redirects.iter().filter(|r| r.writes()) {
            if let Some(t) = &r.target {
                written.insert(plain_path(t).to_string());
            }
        }
        for (path, span, via) in std::mem::take(&mut self.code_files) {
            let p = plain_path(&path);
            let base = p.rsplit('/').next().unwrap_or(p);
            if written.contains(p) || written.contains(base) {
                self.add_via(
                    Rule::RemoteCodePipe,
                    span,
                    format!("`{path}` runs as code, and a program in this command that reaches the network may have downloaded it"),
                    &via,
                );
            }
        }
    }

    /// Variables the command exports reach every program it starts; one
    /// that a started program's entry does not declare harmless is BG205.
    fn exported_variables(&mut self) {
        // Each with the first program it can reach (all of them, unless the
        // order is known) and whether it was exported explicitly.
        let mut exported: Vec<(String, Span, Vec<String>, usize, bool)> =
            std::mem::take(&mut self.exported)
                .into_iter()
                .map(|(n, s, v)| (n, s, v, 0, true))
                .collect();
        // A plain assignment exports under `set -a`, and to a name already
        // in the environment it changes what every later program is given:
        // upper-case names are the ones real environments hold (SHLVL,
        // HOME, TERM, and whatever the person's profile exports).
        let allexport = self.allexport.is_some();
        exported.extend(
            std::mem::take(&mut self.plain_assigned)
                .into_iter()
                .filter(|(name, _, _, _)| allexport || environment_name(name))
                .map(|(n, s, v, after)| {
                    // Under `set -a` the order is not tracked.
                    let after = if allexport { 0 } else { after.unwrap_or(0) };
                    (n, s, v, after, allexport)
                }),
        );
        let programs = std::mem::take(&mut self.env_programs);
        for (name, span, via, after, explicit) in exported {
            if self.catalog.is_dangerous_variable(&name) {
                continue; // reported where it is assigned
            }
            // Programs started before an ordered assignment do not see it,
            // unless they may run again later.
            let reader = programs
                .iter()
                .enumerate()
                .filter(|(i, (_, anytime))| *i >= after || *anytime)
                .map(|(_, (p, _))| p)
                .find(|p| {
                    !self
                        .catalog
                        .is_harmless_variable(&name, self.catalog.get(p))
                });
            if let Some(p) = reader {
                self.add_via(
                    Rule::DangerousAssignment,
                    span,
                    if explicit {
                        format!("{name} is exported, and `{p}` does not declare it harmless: programs read variables like this for configuration, helper programs or options")
                    } else {
                        format!("{name} is assigned, and an environment may already export it (upper-case names usually are), so `{p}` would run with the new value; it does not declare {name} harmless: programs read variables like this for configuration, helper programs or options")
                    },
                    &via,
                );
            }
        }
    }

    /// Findings that need the whole command seen: arithmetic on variables
    /// whose values are only known at run time, files downloaded and run.
    pub fn finish(&mut self) {
        self.downloaded_code();
        // `for f in *.txt; do wc -l < "$f"; done`: f only ever holds a
        // relative name, never /dev/tcp/...
        for (name, span, via) in std::mem::take(&mut self.variable_redirects) {
            let a = &self.assigned;
            if a.relative_loops.contains(&name) && !a.otherwise.contains(&name) && !a.unknown {
                continue;
            }
            self.add_via(Rule::DynamicRedirect, span, DYNAMIC_REDIRECT.into(), &via);
        }
        self.moved_to = self.working_dirs.targets.clone();
        self.moved_unknown = self.working_dirs.unknown.is_some();
        self.relative_writes();
        let refs = std::mem::take(&mut self.arith_refs);
        for (name, span, via) in refs {
            if let Some(why) = self.arithmetic_unproven(&name) {
                self.add_via(Rule::SubscriptEvaluation, span, why, &via);
            }
        }
        for (program, span, via) in std::mem::take(&mut self.arith_outputs) {
            // A program known to print only numbers, and not shadowed by a
            // function the command defines, cannot inject a subscript.
            let numbers = program.as_deref().is_some_and(|p| {
                !self.functions.contains(p) && self.catalog.get(p).is_some_and(|e| e.prints_numbers)
            });
            if numbers {
                continue;
            }
            self.add_via(
                Rule::SubscriptEvaluation,
                span,
                "arithmetic evaluates this substitution's output as an expression; a subscript in it would run a command".to_string(),
                &via,
            );
        }
        let mut dangerous: Vec<(&String, &Span)> = self
            .runtime_vars
            .iter()
            .filter(|(v, _)| self.catalog.is_dangerous_variable(v))
            .collect();
        dangerous.sort_by_key(|(name, _)| name.as_str());
        for (name, span) in dangerous {
            let message = format!(
                "{name} is given a value only known at run time, and it changes which code runs"
            );
            self.findings.push(Finding {
                rule: Rule::DangerousAssignment,
                span: *span,
                message,
            });
        }
        self.exported_variables();
        if let Some((span, via)) = self.integer_attribute.take() {
            if !self.runtime_vars.is_empty() {
                self.add_via(
                    Rule::SubscriptEvaluation,
                    span,
                    "integer variables evaluate assigned values arithmetically, and some values here are only known at run time".to_string(),
                    &via,
                );
            }
        }
    }

    /// Whether a declaration builtin (`declare`, `local`...) is given
    /// `option`, as the one reader reads its words with its table.
    fn declaration_gives(&self, s: &Simple, option: &str) -> bool {
        let Some(name) = s.words.first().and_then(|w| w.static_value()) else {
            return false;
        };
        let Some((_, entry)) = self.catalog.lookup(&name) else {
            return false;
        };
        let values: Vec<Option<String>> = s.words[1..].iter().map(|w| w.static_value()).collect();
        let texts: Vec<Option<&str>> = values.iter().map(Option::as_deref).collect();
        crate::option_table::gives(entry, &texts, &[option])
    }

    /// Why a name or text evaluated arithmetically is not proven inert:
    /// arithmetic evaluates subscripts, and a subscript runs `$( )`. Proven
    /// are names the command assigns only plain text written in it (a
    /// literal, `$(( ))`, a loop over words), bash's numeric variables, and
    /// the person's environment; `$x` splices x's text, so that text must
    /// be plain too.
    fn arithmetic_unproven(&self, name: &str) -> Option<String> {
        let (spliced, bare) = match name.strip_prefix('$') {
            Some(n) if crate::word::is_identifier(n) => (true, n),
            Some(n)
                if n.bytes().all(|b| b.is_ascii_digit()) || n == "@" || n == "*" || n == "0" =>
            {
                return Some(format!("arithmetic evaluates `{name}`, an argument the command was given (a file name, a line read, anything a caller passed); a subscript in it would run a command"));
            }
            Some("_") => {
                return Some("arithmetic evaluates `$_`, the last argument of the command before, which could be any text; a subscript in it would run a command".into());
            }
            _ if crate::word::is_identifier(name) => (false, name),
            _ => {
                return Some(format!("arithmetic evaluates `{name}`, whose text no model here follows; a subscript in it would run a command"));
            }
        };
        if self.catalog.set_by_bash.iter().any(|v| v == bare) || bare.starts_with("BASH_") {
            return Some(format!("arithmetic evaluates `{bare}`, which bash sets to text the command read or ran; a subscript in it would run a command"));
        }
        if self.runtime_vars.contains_key(bare) {
            return Some(format!("`{bare}` is evaluated arithmetically and gets its value at run time; a subscript in that value would run a command"));
        }
        if spliced && self.assigned.unplain.contains(bare) {
            return Some(format!("`${bare}` splices text holding brackets, quotes or `$` into an arithmetic expression, which could complete a subscript that runs a command"));
        }
        None
    }

    fn commands(&mut self, cmds: &[Command], frame: &Frame, feed: &Feed) {
        for c in cmds {
            self.command(c, frame, feed);
        }
    }

    fn command(&mut self, cmd: &Command, frame: &Frame, feed: &Feed) {
        if self.invocations.len() >= self.limits.max_invocations {
            if !self.findings.iter().any(|f| f.rule == Rule::LimitExceeded) {
                self.add(
                    frame,
                    Rule::LimitExceeded,
                    cmd.span(),
                    format!(
                        "more than {} programs would run",
                        self.limits.max_invocations
                    ),
                );
            }
            return;
        }
        match cmd {
            Command::Simple(s) => self.simple(s, frame, feed),
            Command::Pipeline(p) => {
                let mut stage_feed = feed.clone();
                for stage in &p.stages {
                    let first = self.invocations.len();
                    self.command(stage, frame, &stage_feed);
                    let mut out = Output::default();
                    if let Feed::Pipe { network, decoded } = stage_feed {
                        // Data that passes through a filter keeps its origin:
                        // `curl x | grep y | sh` still runs what curl fetched.
                        out.network |= network;
                        out.decoded |= decoded;
                    }
                    for o in &self.outputs[first..] {
                        out.network |= o.network;
                        out.decoded |= o.decoded;
                    }
                    stage_feed = Feed::Pipe {
                        network: out.network,
                        decoded: out.decoded,
                    };
                }
            }
            Command::Compound(c) => {
                for w in &c.words {
                    self.word(w, frame);
                }
                let carried: Vec<Carries> = c
                    .redirects
                    .iter()
                    .map(|r| self.redirect(r, frame))
                    .collect();
                let inner = stdin_of(&c.redirects, &carried).unwrap_or_else(|| feed.clone());
                let repeats = matches!(c.kind, "while" | "for");
                self.repeats += usize::from(repeats);
                self.commands(&c.body, frame, &inner);
                self.repeats -= usize::from(repeats);
            }
            Command::Function(f) => {
                self.functions.insert(f.name.clone());
                // The body runs whenever the function is called, with
                // whatever input the caller gives it.
                self.repeats += 1;
                self.command(
                    &f.body,
                    &frame.with_via(format!("function {}", f.name)),
                    &Feed::Inherited,
                );
                self.repeats -= 1;
            }
        }
    }

    fn simple(&mut self, s: &Simple, frame: &Frame, feed: &Feed) {
        // `declare -n p=PATH`: later assignments to p assign its target.
        let nameref = matches!(
            s.words.first().and_then(|w| w.static_value()).as_deref(),
            Some("declare" | "typeset" | "local")
        ) && self.declaration_gives(s, "-n");
        if nameref {
            // Assigning the reference assigns whatever it names.
            self.assigned.unknown = true;
            for a in &s.assignments {
                let target = a.values.first().and_then(|v| v.static_value());
                let settled = target.as_deref().is_some_and(|t| {
                    crate::word::is_identifier(t) && !self.catalog.is_dangerous_variable(t)
                });
                if !settled {
                    self.add(
                        frame,
                        Rule::DangerousAssignment,
                        a.span,
                        format!("`{}` is a reference to a variable that is dangerous or not known statically", a.name),
                    );
                }
            }
            if s.assignments.is_empty() {
                let sp = s.words.last().map(|w| w.span).unwrap_or(s.span);
                self.add(
                    frame,
                    Rule::DangerousAssignment,
                    sp,
                    "a name reference without a target: its first assignment chooses any variable",
                );
            }
        }
        for a in &s.assignments {
            self.assigned.otherwise.insert(a.name.clone());
            for v in &a.values {
                let c = self.word(v, frame);
                self.variables_carry = self.variables_carry.or(c);
            }
            if a.values.iter().any(|v| {
                v.static_value()
                    .is_some_and(|t| t.contains(['[', '$', '`', '\'', '"', '\\']))
            }) {
                self.assigned.unplain.insert(a.name.clone());
            }
            match a.values.as_slice() {
                [v] => match v.static_value() {
                    Some(text) if runs_subscript(&text) => {
                        self.add(
                            frame,
                            Rule::SubscriptEvaluation,
                            a.span,
                            format!("`{}` holds a subscript with a command substitution, which runs if the value is ever evaluated arithmetically", a.name),
                        );
                    }
                    Some(_) => {}
                    None if v.is_number() => {}
                    None => {
                        self.runtime_vars
                            .entry(a.name.clone())
                            .or_insert(frame.map.map(a.span));
                    }
                },
                values => {
                    if values
                        .iter()
                        .any(|v| v.static_value().is_none() && !v.is_number())
                    {
                        self.runtime_vars
                            .entry(a.name.clone())
                            .or_insert(frame.map.map(a.span));
                    }
                }
            }
            let value = match a.values.as_slice() {
                [v] => v.static_value(),
                [] => Some(String::new()),
                _ => None,
            };
            if self
                .catalog
                .is_dangerous_assignment(&a.name, value.as_deref())
            {
                self.add(
                    frame,
                    Rule::DangerousAssignment,
                    a.span,
                    format!("sets {}, which changes which code runs", a.name),
                );
            }
        }
        let carried: Vec<Carries> = s.words.iter().map(|w| self.word(w, frame)).collect();
        let redirected: Vec<Carries> = s
            .redirects
            .iter()
            .map(|r| self.redirect(r, frame))
            .collect();
        if s.words.is_empty() {
            for a in &s.assignments {
                let ordered =
                    (self.repeats == 0 && frame.via.is_empty()).then_some(self.env_programs.len());
                self.plain_assigned.push((
                    a.name.clone(),
                    frame.map.map(a.span),
                    frame.via.clone(),
                    ordered,
                ));
            }
            return;
        }
        let feed = stdin_of(&s.redirects, &redirected).unwrap_or_else(|| feed.clone());
        let args: Vec<Arg> = s
            .words
            .iter()
            .zip(carried)
            .map(|(w, carries)| Arg {
                carries,
                ..Arg::from_word(w)
            })
            .collect();
        // `export A=1`, `declare -x A=1`: the grammar's assignments of a
        // declaration are exports, not the builtin's own environment.
        let first = s.words.first().and_then(|w| w.static_value());
        let declaration = matches!(
            first.as_deref(),
            Some("export" | "declare" | "typeset" | "local" | "readonly")
        );
        if declaration {
            let exports = first.as_deref() == Some("export") || self.declaration_gives(s, "-x");
            if exports {
                for a in &s.assignments {
                    self.exported
                        .push((a.name.clone(), frame.map.map(a.span), frame.via.clone()));
                }
            }
            self.invoke(&args, frame, &feed, 0);
            return;
        }
        let mark = self.env.len();
        for a in &s.assignments {
            self.env.push((a.name.clone(), frame.map.map(a.span)));
        }
        self.invoke(&args, frame, &feed, 0);
        self.env.truncate(mark);
    }

    /// Walks the commands that run while a word is expanded; returns what
    /// its value can carry from them (or from variables set in this
    /// command).
    fn word(&mut self, w: &Word, frame: &Frame) -> Carries {
        let before = self.outputs.len();
        let mut parameters = false;
        for part in &w.parts {
            parameters |= matches!(part, Part::Dynamic(d) if d.kind == DynKind::Parameter);
            if let Part::Dynamic(d) = part {
                if !d.commands.is_empty() {
                    // A substitution's commands read the shell's own input.
                    self.commands(&d.commands, frame, &Feed::Inherited);
                }
                if let Some(r) = &d.reparse {
                    self.embed(&r.text, r.origin, d.span, frame, &Feed::Inherited, "`...`");
                }
            }
        }
        let mut carries = self.outputs[before..]
            .iter()
            .fold(Carries::default(), |c, o| {
                c.or(Carries {
                    network: o.network,
                    decoded: o.decoded,
                })
            });
        if parameters {
            carries = carries.or(self.variables_carry);
        }
        carries
    }

    /// Records a redirect; returns what its word can carry.
    fn redirect(&mut self, r: &Redirect, frame: &Frame) -> Carries {
        match &r.target {
            RedirectTarget::File(w) => {
                let carries = self.word(w, frame);
                let is_procsub = matches!(w.parts.as_slice(),
                    [Part::Dynamic(d)] if d.kind == DynKind::ProcessSubstitution);
                self.redirects.push(RedirectUse {
                    op: r.op.clone(),
                    fd: r.fd.clone(),
                    target: w.static_value(),
                    to_process: is_procsub,
                    span: frame.map.map(r.span),
                    via: frame.via.clone(),
                });
                if r.op.contains('>') && !is_procsub {
                    let value = w.value();
                    // A socket is the network's finding, not a write.
                    if !matches!(&value, Value::Static(path) if is_dev_net(path)) {
                        self.judge_written_word(
                            &format!("`{}`", r.op),
                            &w.shape(),
                            &value,
                            r.span,
                            frame,
                        );
                    }
                }
                match w.value() {
                    Value::Static(path) => {
                        if is_dev_net(&path) {
                            self.add(
                                frame,
                                Rule::DevTcpRedirect,
                                r.span,
                                format!("`{}` {path} opens a network socket", r.op),
                            );
                        }
                    }
                    _ if is_procsub => {}
                    _ if is_dev_net(&w.static_prefix()) => {
                        self.add(
                            frame,
                            Rule::DevTcpRedirect,
                            r.span,
                            format!("`{}` {}... opens a network socket", r.op, w.static_prefix()),
                        );
                    }
                    _ => {
                        if could_be_dev_net(&w.static_prefix()) {
                            match &r.variable {
                                // Judged when every assignment is known.
                                Some(name) => self.variable_redirects.push((
                                    name.clone(),
                                    frame.map.map(r.span),
                                    frame.via.clone(),
                                )),
                                None => {
                                    self.add(
                                        frame,
                                        Rule::DynamicRedirect,
                                        r.span,
                                        DYNAMIC_REDIRECT,
                                    );
                                }
                            }
                        }
                    }
                }
                carries
            }
            RedirectTarget::Heredoc { body, .. } => self.word(body, frame),
            RedirectTarget::Herestring(w) => self.word(w, frame),
        }
    }

    fn record(&mut self, inv: Invocation, out: Output) {
        self.invocations.push(inv);
        self.outputs.push(out);
    }
}

/// The stdin a command's own redirects give it; the last one wins. Input
/// made from network output (`< <(curl ...)`, `<<< "$(curl ...)"`) is fed
/// as a pipe from the network would be.
fn stdin_of(redirects: &[Redirect], carried: &[Carries]) -> Option<Feed> {
    let (r, c) = redirects
        .iter()
        .zip(carried)
        .rev()
        .find(|(r, _)| r.feeds_stdin())?;
    if c.any() {
        return Some(Feed::Pipe {
            network: c.network,
            decoded: c.decoded,
        });
    }
    Some(match &r.target {
        RedirectTarget::Heredoc { body, .. } => Feed::Doc {
            text: body.static_value(),
            origin: body.origin,
            span: body.span,
        },
        RedirectTarget::Herestring(w) => Feed::Doc {
            // bash appends a newline to a here-string.
            text: w.static_value().map(|t| t + "\n"),
            origin: w.origin,
            span: w.span,
        },
        RedirectTarget::File(_) => Feed::File,
    })
}

/// A path without a leading `./`, for comparing names of one file.
fn plain_path(p: &str) -> &str {
    let mut p = p;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// A path bash turns into a socket. Collapses `//` and `/./` first, which
/// over-approximates bash's plain string comparison.
pub fn is_dev_net(path: &str) -> bool {
    let norm = normalize(path);
    norm.starts_with("/dev/tcp/") || norm.starts_with("/dev/udp/")
}

const DYNAMIC_REDIRECT: &str =
    "this redirect's target is only known at run time and could be /dev/tcp/...";

/// Whether a path whose known beginning is `prefix` could end up under
/// /dev/tcp or /dev/udp.
fn could_be_dev_net(prefix: &str) -> bool {
    let norm = normalize(prefix);
    if norm != prefix {
        return true;
    }
    ["/dev/tcp/", "/dev/udp/"]
        .iter()
        .any(|d| d.starts_with(norm.as_str()) || norm.starts_with(d))
}

fn normalize(path: &str) -> String {
    let mut s = path.to_string();
    loop {
        let next = s.replace("//", "/").replace("/./", "/");
        if next == s {
            return s;
        }
        s = next;
    }
}

/// A name environments hold: upper-case letters, digits and `_`, with a
/// letter among them (`SHLVL`, `XDG_CONFIG_HOME`), or a proxy variable,
/// which tools read in lower case too.
fn environment_name(name: &str) -> bool {
    let upper = name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    upper || name.ends_with("_proxy")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_net_paths() {
        assert!(is_dev_net("/dev/tcp/10.0.0.1/4242"));
        assert!(is_dev_net("/dev/udp/h/53"));
        assert!(is_dev_net("//dev//tcp/h/1"));
        assert!(is_dev_net("/dev/./tcp/h/1"));
        assert!(!is_dev_net("/dev/null"));
        assert!(!is_dev_net("dev/tcp/h/1"));
        assert!(could_be_dev_net(""));
        assert!(could_be_dev_net("/de"));
        assert!(could_be_dev_net("/dev/tcp/host/"));
        assert!(!could_be_dev_net("/tmp/"));
        assert!(!could_be_dev_net("out/"));
    }
}
