//! A generator of bash commands built from the constructs the analyzer must
//! see through: quoting tricks on names, wrappers, `$()`, backquotes,
//! `<()`, redirects (sockets included), here-documents, `bash -c` and `eval`
//! embedding, functions, arithmetic and prompt expansions, deep nesting,
//! and commands that write files (`gen_writes.rs`).
//!
//! The generator is driven by a [`Choices`] source, so the same code serves
//! the differential oracle (a seeded [`Rng`]) and the structure-aware fuzz
//! target (libFuzzer's bytes). While it writes a command it records whether
//! it put something that is not provably local where bash runs commands;
//! when it did, no sound analyzer may call the command `safe`.

use crate::gen_programs::{LOCAL, NETWORK, OTHER, SHADOWED, SHELLS};
use crate::gen_words::{backquote_escape, bare, heredoc_escape, quote, single};

pub use crate::choices::{Choices, Rng};

#[path = "gen_writes.rs"]
mod writes;

/// How big generated commands get.
#[derive(Debug, Clone)]
pub struct Config {
    /// Deepest nesting of generated constructs.
    pub max_depth: usize,
    /// Most commands in one list.
    pub max_list: usize,
    /// Most commands in a whole generated command.
    pub max_commands: usize,
    /// Most repetitions of a deep-nesting construct; 0 turns them off.
    pub deep: usize,
    /// One program in this many is not provably local (at least 2).
    pub unsafe_odds: usize,
    /// One word in this many is written bare when it can be; the others
    /// get a quoting trick.
    pub bare_odds: usize,
    /// One command in this many writes a file (a protected place or a
    /// harmless one, spelled every way programs offer); 0 or 1: none.
    pub write_odds: usize,
}

impl Config {
    /// Commands small enough to run by the thousand under real bash.
    pub fn oracle() -> Config {
        Config {
            max_depth: 3,
            max_list: 2,
            max_commands: 8,
            deep: 0,
            unsafe_odds: 25,
            bare_odds: 2,
            write_odds: 20,
        }
    }

    /// Bigger commands, with adversarial nesting, for the fuzz target.
    pub fn fuzz() -> Config {
        Config {
            max_depth: 6,
            max_list: 4,
            max_commands: 32,
            deep: 3000,
            unsafe_odds: 4,
            bare_odds: 8,
            // Writes start nothing: the fuzz target's check cannot see them.
            write_odds: 0,
        }
    }
}

/// One generated command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub command: String,
    /// A program that is not provably local (or a `/dev/tcp` redirect) sits
    /// where bash runs commands. Dead branches count: the analyzer does not
    /// evaluate conditions, so it must not call such a command `safe`.
    pub runs_unsafe: bool,
}

/// Generates one command.
pub fn generate(c: &mut impl Choices, cfg: &Config) -> Generated {
    let mut g = Gen {
        c,
        cfg,
        depth: 0,
        budget: cfg.max_commands.max(1),
        unsafe_: false,
        pending: Vec::new(),
        serial: 0,
        last_simple: true,
    };
    let mut s = g.list();
    g.flush(&mut s);
    Generated {
        command: s,
        runs_unsafe: g.unsafe_,
    }
}

/// Text that can be followed by a closing keyword or brace.
fn terminated(mut s: String) -> String {
    if !s.ends_with('\n') {
        s.push_str("; ");
    }
    s
}

/// Plain words a command may be given: file names, options, and text that
/// looks like code but is data (`NAME` becomes a program name).
const DATA: &[&str] = &[
    "a.txt",
    "b.txt",
    "-l",
    "-n",
    "1",
    "x",
    "--",
    "/dev/null",
    "NAME",
    "NAME x",
    "bash -c NAME",
    "$(NAME x)",
    "`NAME`",
    "a;b",
    "it's",
    "'; NAME x #",
    "-exec",
    "{}",
    "<(NAME)",
    "/dev/tcp/127.0.0.1/9",
];

/// Words whose value bash decides at run time, with nothing in them running.
const DYNAMIC: &[&str] = &[
    "*.txt",
    "?.txt",
    "[ab].txt",
    "{a,b}.txt",
    "~",
    "~/x",
    "$HOME",
    "\"$HOME\"",
    "${HOME}",
    "$1",
    "\"$@\"",
    "$((1 + 2))",
    "$RANDOM",
    "${#HOME}",
];

/// File redirects that stay inside the scratch directory.
const FILE_REDIRECTS: &[&str] = &[
    ">out.txt",
    "2>/dev/null",
    ">>log.txt",
    "<a.txt",
    "2>&1",
    "&>/dev/null",
    ">|out.txt",
    "3>&1",
];

/// Redirects the grammar has trouble with; rarer.
const ODD_REDIRECTS: &[&str] = &["<>rw.txt", "{fd}>out.txt", "2>&-", "<&0"];

struct Gen<'a, C: Choices> {
    c: &'a mut C,
    cfg: &'a Config,
    depth: usize,
    budget: usize,
    unsafe_: bool,
    /// Here-document bodies waiting for the end of the current line.
    pending: Vec<String>,
    serial: usize,
    /// Whether the command just generated was a simple command.
    last_simple: bool,
}

impl<C: Choices> Gen<'_, C> {
    fn below(&mut self, n: usize) -> usize {
        self.c.below(n)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.c.below(xs.len())]
    }

    /// True one time in `n`; never for a source that ran dry.
    fn rare(&mut self, n: usize) -> bool {
        self.c.below(n) == 1
    }

    fn quote(&mut self, v: &str) -> String {
        if self.below(self.cfg.bare_odds.max(1)) == 1 && bare(v) {
            return v.to_string();
        }
        quote(self.c, v)
    }

    fn fresh(&mut self) -> usize {
        self.serial += 1;
        self.serial
    }

    fn can_nest(&self) -> bool {
        self.depth < self.cfg.max_depth && self.budget > 0
    }

    /// Ends the current line: pending here-document bodies follow it.
    fn newline(&mut self, s: &mut String) {
        s.push('\n');
        for body in self.pending.drain(..) {
            s.push_str(&body);
        }
    }

    fn flush(&mut self, s: &mut String) {
        if !self.pending.is_empty() {
            self.newline(s);
        }
    }

    /// A script in a context of its own (`$()`, a subshell, a `-c` string):
    /// its here-documents end inside it.
    fn block(&mut self) -> String {
        self.depth += 1;
        let outer = std::mem::take(&mut self.pending);
        let mut s = self.list();
        self.flush(&mut s);
        self.pending = outer;
        self.depth -= 1;
        s
    }

    /// Runs `f` for text that is data: what it places does not run.
    fn as_data<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.unsafe_;
        let r = f(self);
        self.unsafe_ = saved;
        r
    }

    fn list(&mut self) -> String {
        let n = 1 + self.below(self.cfg.max_list.max(1));
        let mut s = self.and_or();
        for _ in 1..n {
            if self.budget == 0 {
                break;
            }
            match self.below(4) {
                1 => self.newline(&mut s),
                2 => s.push_str(" & wait; "),
                _ => s.push_str("; "),
            }
            let next = self.and_or();
            s.push_str(&next);
        }
        s
    }

    fn and_or(&mut self) -> String {
        let mut s = self.pipeline();
        while self.budget > 0 && self.rare(4) {
            s.push_str(self.pick(&[" &&", " ||"]));
            if self.rare(3) {
                self.newline(&mut s);
            } else {
                s.push(' ');
            }
            let next = self.pipeline();
            s.push_str(&next);
        }
        s
    }

    fn pipeline(&mut self) -> String {
        let prefix = match self.below(14) {
            1 => "! ",
            2 => "time ",
            3 => "time -p ",
            _ => "",
        };
        let first = self.command();
        // bash rejects `time` before a compound command inside `$( )`.
        let mut s = if prefix.starts_with('t') && !self.last_simple {
            first
        } else {
            format!("{prefix}{first}")
        };
        while self.budget > 0 && self.rare(3) {
            s.push_str(self.pick(&[" |", " |&"]));
            if self.rare(4) {
                self.newline(&mut s);
            } else {
                s.push(' ');
            }
            let next = self.command();
            s.push_str(&next);
        }
        s
    }

    fn command(&mut self) -> String {
        self.budget = self.budget.saturating_sub(1);
        self.last_simple = true;
        if self.cfg.write_odds > 0 && self.rare(self.cfg.write_odds) {
            let mut s = self.writer();
            self.redirects(&mut s);
            self.last_simple = false;
            return s;
        }
        if !self.can_nest() {
            return self.simple();
        }
        let choice = self.below(28);
        if choice <= 5 {
            return self.simple();
        }
        let mut s = match choice {
            6 => format!("( {} )", self.block()),
            7 => format!("{{ {}}}", terminated(self.block())),
            8 => self.if_(),
            9 => self.for_(),
            10 => self.while_(),
            11 => self.case_(),
            12 => self.function(),
            13 | 14 => self.shell_c(),
            15 => self.eval_(),
            16 => self.shell_stdin(),
            17 | 18 => self.wrapped(),
            19 => self.trap_(),
            20 => self.test_(),
            21 => self.assignment(),
            22 if self.unsafe_turn() => self.socket(),
            23 => self.indirect(),
            24 if self.unsafe_turn() => self.source_(),
            25 => self.text_tool(),
            26 if self.unsafe_turn() => self.shadow(),
            27 => self.deep(),
            _ => return self.simple(),
        };
        self.redirects(&mut s);
        self.last_simple = false;
        s
    }

    /// A program name for a command position; records what runs.
    /// Whether to write something not provably local this time.
    fn unsafe_turn(&mut self) -> bool {
        self.below(self.cfg.unsafe_odds.max(2)) == 1
    }

    fn program(&mut self) -> &'static str {
        if !self.unsafe_turn() {
            return self.pick(LOCAL);
        }
        self.unsafe_ = true;
        if self.below(3) == 0 {
            self.pick(OTHER)
        } else {
            self.pick(NETWORK)
        }
    }

    fn program_word(&mut self) -> String {
        let p = self.program();
        self.quote(p)
    }

    fn simple(&mut self) -> String {
        let mut words = Vec::new();
        // Redirects may come first, before any assignment or program name
        // (the grammar can then fold the program into a redirect: F42).
        if self.rare(10) {
            words.push(self.redirect());
        }
        if self.rare(8) {
            let value = self.arg();
            // Mostly variables every program may be given, sometimes one
            // only declared programs may (the verdict is then unknown).
            words.push(format!(
                "{}={value}",
                self.pick(&["LC_ALL", "TZ", "LANG", "A", "_x"])
            ));
        }
        words.push(self.program_word());
        for _ in 0..self.below(4) {
            words.push(self.arg());
        }
        let mut s = words.join(" ");
        self.redirects(&mut s);
        s
    }

    /// A word of data, written with some quoting trick.
    fn data(&mut self) -> String {
        let v = self.data_value();
        self.quote(&v)
    }

    fn data_value(&mut self) -> String {
        let template = self.pick(DATA);
        let name = self.pick(&[NETWORK, LOCAL, OTHER, SHELLS].concat());
        template.replace("NAME", name)
    }

    fn arg(&mut self) -> String {
        if !self.can_nest() {
            return self.data();
        }
        match self.below(16) {
            0..=6 => self.data(),
            7 | 8 => self.pick(DYNAMIC).to_string(),
            9 => format!("$( {} )", self.block()),
            10 => format!("\"$( {} )\"", self.block()),
            11 => format!("`{}`", backquote_escape(&self.block())),
            12 => format!("{}( {} )", self.pick(&["<", ">"]), self.block()),
            13 => {
                let n = self.fresh();
                let op = self.pick(&[":-", "-", ":=", ":+"]);
                format!("${{_u{n}{op}$( {} )}}", self.block())
            }
            14 => format!("$(( $( {} ) + 1 ))", self.block()),
            15 if self.rare(2) => format!("\"${{HOME//a/$( {} )}}\"", self.block()),
            _ => format!("\"pre $( {} ) $HOME post\"", self.block()),
        }
    }

    fn redirects(&mut self, s: &mut String) {
        while self.rare(4) {
            s.push(' ');
            let r = self.redirect();
            s.push_str(&r);
        }
    }

    fn redirect(&mut self) -> String {
        match self.below(8) {
            0..=2 => self.pick(FILE_REDIRECTS).to_string(),
            3 => format!("<<<{}", self.arg()),
            4 => self.heredoc_data(),
            5 if self.unsafe_turn() => {
                self.unsafe_ = true;
                let op = self.pick(&[">", "<", "<>", ">>", "2>", "&>", "3<>"]);
                let path = self.socket_path();
                format!("{op}{path}")
            }
            6 if self.can_nest() => format!(">$( {} )", self.block()),
            6 => self.pick(ODD_REDIRECTS).to_string(),
            _ => self.pick(FILE_REDIRECTS).to_string(),
        }
    }

    fn socket_path(&mut self) -> String {
        let proto = self.pick(&["tcp", "udp"]);
        let port = self.pick(&["9", "1"]);
        self.quote(&format!("/dev/{proto}/127.0.0.1/{port}"))
    }

    /// A here-document for a command that reads it as data.
    fn heredoc_data(&mut self) -> String {
        let delim = format!("EOF{}", self.fresh());
        if self.below(2) == 0 || !self.can_nest() {
            // A quoted delimiter: nothing in the body expands.
            let body = self.as_data(|g| {
                (0..3)
                    .map(|_| g.data_value())
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            let spelled = self.quoted_delimiter(&delim);
            self.pending.push(format!("{body}\n{delim}\n"));
            format!("<<{spelled}")
        } else {
            // An unquoted one: substitutions in the body run.
            let inner = self.block();
            self.pending
                .push(format!("line $( {inner} ) $HOME end\n{delim}\n"));
            format!("{}{delim}", self.pick(&["<<", "<<-"]))
        }
    }

    fn quoted_delimiter(&mut self, delim: &str) -> String {
        match self.below(4) {
            0 => format!("'{delim}'"),
            1 => format!("\"{delim}\""),
            2 => format!("\\{delim}"),
            _ => format!("{}'{}'", &delim[..1], &delim[1..]),
        }
    }

    fn if_(&mut self) -> String {
        let cond = terminated(self.block());
        let then = terminated(self.block());
        let mut s = format!("if {cond}then {then}");
        if self.rare(2) {
            s.push_str(&format!("else {}", terminated(self.block())));
        }
        s.push_str("fi");
        s
    }

    fn for_(&mut self) -> String {
        let head = if self.rare(3) {
            "((_i = 0; _i < 1; _i++))".to_string()
        } else {
            let words: Vec<String> = (0..1 + self.below(3)).map(|_| self.arg()).collect();
            format!("_i in {}", words.join(" "))
        };
        format!("for {head}; do {}done", terminated(self.block()))
    }

    fn while_(&mut self) -> String {
        let kw = self.pick(&["while", "until"]);
        let cond = terminated(self.block());
        format!("{kw} {cond}do {}break; done", terminated(self.block()))
    }

    fn case_(&mut self) -> String {
        let word = self.arg();
        let mut s = format!("case {word} in ");
        for _ in 0..1 + self.below(2) {
            let pat = self.pick(&["a|b", "*", "x*", "[ab]", "''"]);
            s.push_str(&format!("{pat}) {} ;; ", self.block()));
        }
        s.push_str("esac");
        s
    }

    fn function(&mut self) -> String {
        let name = format!("f{}", self.fresh());
        let body = self.block();
        let mut s = match self.below(3) {
            0 => format!("{name}() {{ {}}}", terminated(body)),
            1 => format!("function {name} {{ {}}}", terminated(body)),
            _ => format!("{name}() ( {body} )"),
        };
        if self.below(3) != 2 {
            let arg = self.data();
            s.push_str(&format!("; {name} {arg}"));
        }
        s
    }

    fn shell_name(&mut self) -> (&'static str, String) {
        let sh = self.pick(SHELLS);
        (sh, self.quote(sh))
    }

    fn shell_c(&mut self) -> String {
        let (sh, mut s) = self.shell_name();
        if sh == "bash" {
            s.push_str(self.pick(&[
                "",
                "",
                " -e",
                " --norc",
                " -o pipefail",
                " -x",
                " +e",
                " -l",
            ]));
        } else {
            s.push_str(self.pick(&["", "", " -e", " -x"]));
        }
        s.push_str(self.pick(&[" -c ", " -c ", " -ec ", " -c -- "]));
        let script = self.block();
        s.push_str(&self.quote(&script));
        if self.rare(3) {
            s.push_str(" name a b");
        }
        s
    }

    fn eval_(&mut self) -> String {
        let script = self.block();
        if self.rare(3) {
            if let Some(i) = script.find(' ') {
                let (a, b) = (&script[..i], &script[i + 1..]);
                return format!("eval {} {}", self.quote(a), self.quote(b));
            }
        }
        format!("eval {}", self.quote(&script))
    }

    /// A shell that reads its script on standard input.
    fn shell_stdin(&mut self) -> String {
        let (_, sh) = self.shell_name();
        let script = self.block();
        match self.below(4) {
            0 => {
                let delim = format!("EOF{}", self.fresh());
                let (spelled, body) = if self.rare(2) {
                    (self.quoted_delimiter(&delim), script)
                } else {
                    (delim.clone(), heredoc_escape(&script))
                };
                let body = if body.ends_with('\n') {
                    body
                } else {
                    format!("{body}\n")
                };
                self.pending.push(format!("{body}{delim}\n"));
                format!("{sh} <<{spelled}")
            }
            1 => format!("{sh} <<<{}", self.quote(&script)),
            2 if self.unsafe_turn() => format!("printf '%s\\n' {} | {sh}", self.quote(&script)),
            _ => format!("{sh} -s <<<{}", self.quote(&script)),
        }
    }

    /// A wrapper around a program, a shell or another wrapper.
    fn wrapped(&mut self) -> String {
        let (pre, post, joins) = self.wrapper_form();
        self.depth += 1;
        let inner = match self.below(5) {
            0..=2 => {
                let mut words = vec![self.program_word()];
                for _ in 0..self.below(3) {
                    words.push(self.data());
                }
                words.join(" ")
            }
            3 if self.can_nest() => self.wrapped(),
            _ => {
                let (_, sh) = self.shell_name();
                let script = self.block();
                format!("{sh} -c {}", self.quote(&script))
            }
        };
        self.depth -= 1;
        // `watch` without `-x` joins its words with spaces and hands the
        // line to `sh -c`, which would read the inner command's quoting
        // again: the inner command goes as one word, the line it is.
        if joins {
            return format!("{pre}{}{post}", self.quote(&inner));
        }
        format!("{pre}{inner}{post}")
    }

    /// A wrapper with options: the text before the wrapped program, the
    /// text after its arguments, and whether the wrapper joins its words
    /// into a line for `sh -c` (`watch` without `-x`).
    fn wrapper_form(&mut self) -> (String, String, bool) {
        let w = self.pick(&[
            "env", "timeout", "nice", "nohup", "stdbuf", "setsid", "xargs", "find", "flock",
            "ionice", "chrt", "taskset", "strace", "command", "exec", "time", "sudo", "doas",
            "runuser", "watch", "busybox", "parallel", "unbuffer",
        ]);
        let options: &[&str] = match w {
            "env" => &[
                "",
                "-u X ",
                "FOO=1 ",
                "-- ",
                "FOO=1 BAR=2 ",
                "-C . ",
                "--chdir=. ",
            ],
            "timeout" => &[
                "5 ",
                "-s KILL 5 ",
                "--signal=TERM 5 ",
                "-k 1 5 ",
                "--kill-after=1 5 ",
                "--preserve-status 5 ",
                "--foreground 5s ",
            ],
            "nice" => &["", "-n 5 ", "-5 ", "--adjustment=3 ", "-n5 "],
            "stdbuf" => &["-oL ", "-o L ", "--output=L ", "-i0 -e0 "],
            "setsid" => &["", "-w ", "-f "],
            "xargs" => &[
                "",
                "-r ",
                "-n 1 ",
                "-I{} ",
                "-0 ",
                "-P 1 ",
                "-L 1 ",
                "-d , ",
                "--max-args=1 ",
                // Tokens the grammar leaves unnamed, as option values (F40).
                "-I == ",
                "-I =~ ",
                "-I $ ",
                "-E == ",
            ],
            "find" => &[
                ". -maxdepth 1 -exec ",
                ". -maxdepth 1 -name 'a*' -exec ",
                ". -maxdepth 0 -execdir ",
                ". -maxdepth 0 -ok ",
            ],
            "flock" => &["lock.f ", "-n lock.f ", "-w 1 lock.f ", "-x lock.f "],
            "ionice" => &["-c 3 ", "-c3 ", "-c 2 -n 7 "],
            "chrt" => &["-o 0 ", "--other 0 ", "-b 0 "],
            "taskset" => &["1 ", "-c 0 ", "--cpu-list 0 "],
            "strace" => &[
                "-f -o /dev/null ",
                "-qq -o /dev/null ",
                "-e trace=none -o /dev/null ",
            ],
            "command" => &["", "-- "],
            "exec" => &["", "-a name "],
            "time" => &["", "-p "],
            "sudo" => &["", "-u root ", "-E ", "-- ", "-n "],
            "doas" => &["", "-u root "],
            "runuser" => &["-u root -- "],
            "watch" => &["-n 1 ", "-x ", "-t "],
            "unbuffer" => &["", "-p "],
            _ => &[""],
        };
        let post = match w {
            "find" => self.pick(&[" {} \\;", " {} ';'", " {} +", " \\;", " {} \";\""]),
            "parallel" => " ::: a",
            _ => "",
        };
        let name = self.quote(w);
        let opts = self.pick(options);
        let joins = w == "watch" && !opts.contains("-x");
        (format!("{name} {opts}"), post.to_string(), joins)
    }

    fn trap_(&mut self) -> String {
        let script = self.block();
        let action = self.quote(&script);
        let sig = self.pick(&["EXIT", "INT", "DEBUG", "ERR", "0"]);
        format!("trap {}{action} {sig}", self.pick(&["", "-- "]))
    }

    fn test_(&mut self) -> String {
        let inner = self.block();
        match self.below(5) {
            0 => format!("[[ -n $( {inner} ) ]]"),
            1 => format!("[[ $( {inner} ) == x ]]"),
            2 => format!("(( $( {inner} ) + 1 ))"),
            3 => format!("[[ -v _a[$( {inner} )] ]]"),
            _ => format!("[ -n \"$( {inner} )\" ]"),
        }
    }

    fn assignment(&mut self) -> String {
        let inner = self.block();
        let kw = self.pick(&["", "", "", "declare ", "export ", "readonly ", "local "]);
        match self.below(4) {
            0 => format!("{kw}_x=$( {inner} )"),
            1 => format!("{kw}_x=\"$( {inner} )\""),
            2 => format!("_a=( a $( {inner} ) )"),
            _ => format!("_x+=`{}`", backquote_escape(&inner)),
        }
    }

    /// bash's own sockets: redirects to /dev/tcp and /dev/udp.
    fn socket(&mut self) -> String {
        self.unsafe_ = true;
        let path = self.socket_path();
        match self.below(5) {
            0 => format!("exec 3<>{path}"),
            1 => format!("exec {{fd}}>{path}"),
            2 => format!(": <{path}"),
            3 => format!("echo x >{path}"),
            _ => "_p=tcp; exec 3<>/dev/$_p/127.0.0.1/9".to_string(),
        }
    }

    /// Code held in a variable's value that bash evaluates anyway: array
    /// subscripts in arithmetic, names given to builtins, prompt expansion.
    fn indirect(&mut self) -> String {
        let name = self.program_word();
        let sub = format!("_a[$({name})]");
        let v = self.quote(&sub);
        let use_ = match self.below(13) {
            0 => "echo $((_v))",
            1 => "[[ _v -eq 0 ]]",
            2 => "(( _v ))",
            3 => "echo ${!_v}",
            4 => "echo ${_s:_v}",
            5 => "let _w=_v",
            6 => "declare -i _w=_v",
            7 => "_b[_v]=1",
            8 => {
                let v = self.quote(&format!("$({name})"));
                return format!("_v={v}; echo \"${{_v@P}}\"");
            }
            9 if self.rare(2) => {
                return format!("command_not_found_handle() {{ {name}; }}; zz_nowhere");
            }
            10 if self.rare(2) => {
                let cb = self.quote(&name);
                return format!("mapfile -t -C {cb} -c 1 _m <<<a");
            }
            12 if self.rare(2) => {
                // A shell option turned on by a word known only at run
                // time (F37): in keyword mode the assignment-shaped
                // argument is the child's environment, and bash runs the
                // script BASH_ENV names before `:`.
                let on = self.pick(&[
                    "set $(echo -k)",
                    "set \"$(echo -k)\"",
                    "_k=$(echo k); set -e$_k",
                    "shopt -s$(echo o) keyword",
                ]);
                return format!("{on}; bash -c : BASH_ENV=<(echo {name})");
            }
            11 if self.rare(2) => {
                // Spellings that assign without `NAME=value`: an attached
                // -v, let, a default-value expansion, getopts, wrappers.
                let q = self.quote(&format!("{sub}=1"));
                return match self.below(6) {
                    0 => format!("printf -v{} %s x", self.quote(&sub)),
                    1 => format!("let {q}"),
                    2 => format!(": ${{{sub}:=1}}"),
                    3 => format!("getopts a {v} -a"),
                    4 => format!("builtin declare {q}"),
                    _ => format!("command export {q}"),
                };
            }
            _ => {
                let builtin = self.pick(&[
                    "printf -v",
                    "read",
                    "unset",
                    "declare",
                    "export",
                    "test -v",
                    "[ -v",
                    "builtin printf -v",
                    "command read -r",
                ]);
                let close = if builtin == "[ -v" { " ]" } else { "" };
                let tail = if builtin.ends_with("read") || builtin.ends_with("read -r") {
                    " <<<1"
                } else {
                    ""
                };
                let arg = if builtin.ends_with("printf -v") {
                    " %s x"
                } else {
                    ""
                };
                return format!("{builtin} {v}{arg}{close}{tail}");
            }
        };
        format!("_v={v}; {use_}")
    }

    fn source_(&mut self) -> String {
        let script = self.block();
        let q = self.quote(&script);
        let dot = self.pick(&[".", "source"]);
        match self.below(2) {
            0 => format!("{dot} /dev/stdin <<<{q}"),
            _ => format!("{dot} <(printf '%s\\n' {q})"),
        }
    }

    /// sed, awk and split, whose scripts and options can start programs.
    fn text_tool(&mut self) -> String {
        match self.below(3) {
            0 => {
                let executes = self.unsafe_turn();
                let script = match self.below(if executes { 7 } else { 4 }) {
                    0 => "p".to_string(),
                    1 => "s/a/b/g".to_string(),
                    2 => "1d".to_string(),
                    3 => "w out.txt".to_string(),
                    4 => format!("e {}", self.program()),
                    5 => format!("1e {}", self.program()),
                    _ => format!("s/.*/{}/e", self.program()),
                };
                let opt = self.pick(&["", "-n ", "-e "]);
                format!("{} {opt}{} a.txt", self.quote("sed"), self.quote(&script))
            }
            1 => {
                let executes = self.unsafe_turn();
                let prog = match self.below(if executes { 6 } else { 2 }) {
                    0 => "{print}".to_string(),
                    1 => "BEGIN{print 1}".to_string(),
                    2 => format!("BEGIN{{system(\"{}\")}}", self.program()),
                    3 => format!("BEGIN{{print \"x\" | \"{}\"}}", self.program()),
                    4 => format!("BEGIN{{\"{}\" | getline _l}}", self.program()),
                    _ => "{print > \"out.txt\"}".to_string(),
                };
                format!("{} {} a.txt", self.quote("awk"), self.quote(&prog))
            }
            _ => {
                let executes = self.unsafe_turn();
                let filter = match self.below(if executes { 4 } else { 1 }) {
                    0 => String::new(),
                    1 => format!("--filter={} ", self.program()),
                    2 => format!("--filter {} ", self.program()),
                    _ => format!("--filt={} ", self.program()),
                };
                format!("{} -l 1 {filter}a.txt", self.quote("split"))
            }
        }
    }

    /// A network program shadowed by a function, called where the function
    /// is, or is not, what runs. Wrapped in a subshell so the function never
    /// leaks into the rest of the command.
    fn shadow(&mut self) -> String {
        let p = self.pick(SHADOWED);
        let def = format!("{p}() {{ :; }}");
        let call = format!("{} x", self.quote(p));
        let body = match self.below(16) {
            0 | 1 => format!("{def}; {call}"),
            2 => format!("{def} >/dev/null; {call}"),
            3 => format!("{def}; unset -f {p}; {call}"),
            4 => format!("{def}; unset {p}; {call}"),
            5 => format!("{def} & {call}"),
            6 => format!("{def} | true; {call}"),
            7 => format!("false && {def}; {call}"),
            8 => format!("true || {def}; {call}"),
            9 => format!("if false; then {def}; fi; {call}"),
            10 => format!("( {def} ); {call}"),
            11 => format!("{def}; command {call}"),
            12 => format!("{def}; exec {call}"),
            13 => format!("{def}; env {call}"),
            14 => format!("{def}; bash -c {}", single(&call)),
            _ => format!("{call}; {def}"),
        };
        let runs_function = body.starts_with(&format!("{def}; {call}"))
            || body.starts_with(&format!("{def} >/dev/null; {call}"));
        if !runs_function {
            self.unsafe_ = true;
        }
        format!("( {body} )")
    }

    /// One construct repeated many times: the analyzer must stay within its
    /// bounds however deep the input goes.
    fn deep(&mut self) -> String {
        if self.cfg.deep == 0 {
            return self.simple();
        }
        // Mostly shallow, now and then thousands deep.
        let up_to = 1 + self.below(self.cfg.deep);
        let k = 1 + self.below(up_to);
        let p = self.program();
        match self.below(8) {
            0 => format!("{}{p}{}", "$( ".repeat(k), " )".repeat(k)),
            1 => format!("{}{p}{}", "( ".repeat(k), " )".repeat(k)),
            2 => format!("{}{p}{}", "{ ".repeat(k), "; }".repeat(k)),
            3 => format!("{}{p}", "eval ".repeat(k)),
            4 => format!("{}{p}{}", "\"$( ".repeat(k), " )\"".repeat(k)),
            5 => format!("{}{p}{}", "if true; then ".repeat(k), "; fi".repeat(k)),
            6 => vec![p; k].join(" | "),
            _ => {
                let mut s = p.to_string();
                for _ in 0..k.min(6) {
                    s = format!("bash -c {}", single(&s));
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that has run dry.
    struct Dry;

    impl Choices for Dry {
        fn below(&mut self, _: usize) -> usize {
            0
        }
    }

    #[test]
    fn a_dry_source_gives_the_simplest_command() {
        let g = generate(&mut Dry, &Config::fuzz());
        assert_eq!(
            g,
            Generated {
                command: "ls".into(),
                runs_unsafe: false
            }
        );
    }

    #[test]
    fn seeds_are_reproducible_and_varied() {
        let a: Vec<_> = (0..50)
            .map(|_| generate(&mut Rng::new(3), &Config::oracle()))
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut rng = Rng::new(3);
        let many: std::collections::BTreeSet<_> = (0..200)
            .map(|_| generate(&mut rng, &Config::oracle()).command)
            .collect();
        assert!(many.len() > 150, "only {} distinct commands", many.len());
    }

    /// Which rules make generated commands not `safe`: run with
    /// `--ignored --nocapture` when tuning the oracle's generator.
    #[test]
    #[ignore]
    fn profile() {
        use bashgate_analyzer::{analyze, Verdict};
        let mut rng = Rng::new(1);
        let mut rules = std::collections::BTreeMap::new();
        let mut verdicts = std::collections::BTreeMap::new();
        for _ in 0..2000 {
            let g = generate(&mut rng, &Config::oracle());
            let a = analyze(&g.command);
            *verdicts.entry(a.verdict).or_insert(0) += 1;
            if std::env::var("PROFILE_SHOW").is_ok_and(|r| {
                a.reasons()
                    .any(|f| format!("{:?} {}", f.rule, f.message).contains(&r))
            }) {
                println!(
                    "=== {}\n{:?}",
                    g.command,
                    a.reasons().map(|f| &f.message).collect::<Vec<_>>()
                );
            }
            if a.verdict != Verdict::Safe {
                for f in a.reasons() {
                    let detail = if std::env::var_os("PROFILE_DETAIL").is_some() {
                        f.message.chars().take(50).collect::<String>()
                    } else {
                        String::new()
                    };
                    *rules.entry(format!("{:?} {detail}", f.rule)).or_insert(0) += 1;
                }
            }
        }
        let mut rules: Vec<_> = rules.into_iter().collect();
        rules.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        println!("{verdicts:?}\n{rules:?}");
    }

    #[test]
    fn generated_commands_are_bash_syntax() {
        syntax_check(&Config::oracle());
    }

    #[test]
    fn writers_are_bash_syntax() {
        let writers = Config {
            write_odds: 2,
            ..Config::oracle()
        };
        syntax_check(&writers);
        let mut rng = Rng::new(12);
        let mut protected = 0;
        for _ in 0..300 {
            let g = generate(&mut rng, &writers);
            protected += usize::from(
                writes::PROTECTED
                    .iter()
                    .any(|p| g.command.contains(&p[1..])),
            );
        }
        assert!(
            protected > 100,
            "only {protected} of 300 name a protected place"
        );
    }

    #[test]
    fn shell_options_turned_on_at_run_time_are_generated() {
        // F37's construct reaches the oracle: an option word known only at
        // run time, then a child bash whose BASH_ENV only keyword mode sets.
        let mut rng = Rng::new(13);
        let hits = (0..20_000)
            .filter(|_| {
                generate(&mut rng, &Config::oracle())
                    .command
                    .contains("bash -c : BASH_ENV=<(echo ")
            })
            .count();
        assert!(hits > 0, "none of 20,000 generated commands has it");
    }

    fn syntax_check(cfg: &Config) {
        let mut rng = Rng::new(11);
        let mut bad = Vec::new();
        for _ in 0..300 {
            let g = generate(&mut rng, cfg);
            let out = std::process::Command::new("/bin/bash")
                .args(["--norc", "-n", "-c", &g.command])
                .output()
                .expect("bash runs");
            if !out.status.success() {
                bad.push((g.command, String::from_utf8_lossy(&out.stderr).to_string()));
            }
        }
        assert!(
            bad.len() <= 3,
            "{} of 300 do not parse: {:#?}",
            bad.len(),
            &bad[..bad.len().min(5)]
        );
    }
}
