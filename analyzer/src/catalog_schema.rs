//! The catalog's entry types: what each field of a program's entry in
//! `catalog.toml` means. Every field with a fixed set of values is an enum,
//! so a misspelt value is an error. `build.rs` includes this file too and
//! checks every built-in entry with it, so the analyzer does not build with
//! a bad entry; at run time entries are still parsed lazily, on first use.

use std::collections::BTreeMap;

use serde::Deserialize;

/// What an escape argument makes of a local tool's invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EscapeVerdict {
    /// It may run code or reach anything: `unknown`.
    Unknown,
    /// It reaches the network.
    Network,
    /// It downloads and installs packages.
    Package,
}

/// A script language checked by a dedicated reader (`scripts/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScriptLang {
    Sed,
    Awk,
    Dc,
}

/// Which arguments of a program name files it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writes {
    /// Every operand (tee, touch).
    All,
    /// The last operand, and any `-t`/`--target-directory` value (cp, mv).
    Last,
    /// The second operand, when given (uniq INPUT OUTPUT, xxd IN OUT).
    Second,
    /// The first operand: an archive made of the rest (zip ARCHIVE FILES).
    First,
}

/// Which arguments of a program name files it deletes or moves away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Removes {
    /// Every operand (rm, rmdir, unlink, shred).
    All,
    /// Every operand but the last: the sources of a move (mv).
    AllButLast,
}

/// A wrapper whose semantics need code of their own (`resolve/wrappers.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Special {
    Eval,
    Trap,
    Source,
    Xargs,
    Find,
    Busybox,
    Parallel,
    Coproc,
    Env,
    Su,
    Sudo,
    Script,
    Flock,
    Watch,
}

/// What running a program means for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Provably local, given the escape rules of its entry.
    Local,
    /// Reaches the network by purpose.
    Network,
    /// Downloads and installs packages.
    Package,
    /// A language runtime: can do anything.
    Interpreter,
    /// Runs code from the project or its configuration.
    RunsCode,
    /// Not known to be local.
    Unknown,
    /// A shell: its `-c` string, heredoc or piped input is the script.
    Shell,
    /// Runs another program named in its arguments.
    Wrapper,
}

/// An argument that changes what a local tool does.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Escape {
    /// A GNU long option, without the dashes; its unambiguous
    /// abbreviations and `--opt=value` forms match too.
    #[serde(default)]
    pub long: Option<String>,
    /// A short option letter, matched anywhere in a `-abc` cluster.
    #[serde(default)]
    pub short: Option<String>,
    /// An argument matched exactly (`-exec`, `-fprint`).
    #[serde(default)]
    pub word: Option<String>,
    /// An argument matched by its start (`+` for less's initial commands).
    #[serde(default)]
    pub prefix: Option<String>,
    /// An argument matched anywhere it contains this text.
    #[serde(default)]
    pub contains: Option<String>,
    /// What the argument makes of the invocation (`unknown` by default).
    #[serde(default)]
    pub verdict: Option<EscapeVerdict>,
    /// Why the argument matters, for the finding's message.
    pub why: String,
    /// Options naming a directory that make the escape harmless when one
    /// is given a static directory other than the working one or home
    /// (`tar -x -C out`: extraction lands under `out`).
    #[serde(default)]
    pub unless_dir: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub class: Class,
    /// Why the program has this class, for unknown and runs-code entries.
    #[serde(default)]
    pub reason: Option<String>,
    /// Also matches versioned names: `python3.11`, `pip3`, `gcc-12`.
    #[serde(default)]
    pub versioned: bool,
    /// This name is another program's alias (`gawk` for `awk`).
    #[serde(default)]
    pub alias: Option<String>,
    /// Arguments that void a local tool's locality.
    #[serde(default)]
    pub escapes: Vec<Escape>,
    /// Arguments noted as destructive (BG001) without changing the verdict.
    #[serde(default)]
    pub destructive: Vec<String>,
    /// Classes of subcommands (`git clone`, `pip install`); others keep
    /// the program's class.
    #[serde(default)]
    pub subcommands: BTreeMap<String, Class>,
    /// Options of a subcommand that take a value, beyond
    /// `options_with_value` (`git checkout -b NAME`: `-bfix` is not `-f`).
    #[serde(default)]
    pub subcommand_options_with_value: BTreeMap<String, Vec<String>>,
    /// Whether `--` ends option scanning for escapes (GNU style).
    #[serde(default = "yes")]
    pub end_of_options: bool,
    /// Script language checked by a dedicated analyzer: `sed`, `awk` or `dc`.
    #[serde(default)]
    pub script: Option<ScriptLang>,
    /// Output is decoded data: always (`[]`) or with one of these options.
    #[serde(default)]
    pub decoder: Option<Vec<String>>,
    /// A bash builtin that evaluates variable names, subscripts included.
    #[serde(default)]
    pub evaluates_names: bool,
    /// Given options only (no operands, input from a redirect), it prints
    /// nothing but numbers: safe to evaluate arithmetically (`wc -l < f`).
    #[serde(default)]
    pub prints_numbers: bool,
    /// A POSIX shell (dash on Debian): bash's grammar holds except for the
    /// few constructs the two read differently.
    #[serde(default)]
    pub posix_syntax: bool,
    /// A shell whose syntax is not bash's.
    #[serde(default)]
    pub foreign_syntax: bool,
    /// The first argument may be an option cluster without a dash
    /// (`tar xzf`): its letters are checked like `-xzf`.
    #[serde(default)]
    pub bundled_options: bool,
    /// Without an option table: the program reads every `-name` as one
    /// option (Go's flag package: `-exec` is not `-e -x -e -c`).
    #[serde(default)]
    pub single_dash: bool,
    /// The program joins its operands and splits them into tokens of its
    /// own (`ss 'dst example.com'` is `ss dst example.com`): `word`
    /// escapes match any token of an operand.
    #[serde(default)]
    pub splits_operands: bool,
    /// The class when run with no arguments at all (`yarn` installs).
    #[serde(default)]
    pub bare: Option<Class>,
    /// Which arguments name files it writes, checked against the system
    /// directories: `all` operands (tee, touch), or the `last` one and any
    /// `-t`/`--target-directory` value (cp, mv, ln, install); `of=` values
    /// count in both.
    #[serde(default)]
    pub writes: Option<Writes>,
    /// Options whose value names a file it writes (`sort -o`, `--output`):
    /// a short one anywhere in a cluster (its value attached or the next
    /// word), a long one by any prefix, `=value` or the next word. Checked
    /// like `writes` operands, whether or not `writes` is set.
    #[serde(default)]
    pub output_options: Vec<String>,
    /// Modes in which the output options' files are only read (tar's `-f`
    /// names the archive it writes with `-c`, the one it reads with `-x`
    /// or `-t`): with one of these given, they are not writes.
    #[serde(default)]
    pub output_read_modes: Vec<String>,
    /// Its written operands and output values are prefixes of the names it
    /// writes (split PREFIX, csplit -f): one that can complete a protected
    /// name is not proven.
    #[serde(default)]
    pub name_prefix: bool,
    /// Copies directory trees with -r/-R/-a (cp): a tree merged into the
    /// working directory or home writes names the command does not show.
    #[serde(default)]
    pub recursive_copy: bool,
    /// Which operands name files it deletes or moves away (the write model
    /// self-protection and the destructive layer read).
    #[serde(default)]
    pub removes: Option<Removes>,
    /// Runs its program with elevated privileges (sudo, su...).
    #[serde(default)]
    pub privileged: bool,
    /// Where file modes appear: `[]` any argument (chmod), or the options
    /// that take one (install -m). Setuid and setgid bits are reported.
    #[serde(default)]
    pub modes: Option<Vec<String>>,

    // Option syntax, for wrappers and for finding subcommands.
    /// Options without a value.
    #[serde(default)]
    pub flags: Vec<String>,
    /// Options that take a value (`-u USER`, `--signal=SIG`).
    #[serde(default)]
    pub options_with_value: Vec<String>,
    /// Options whose value is a shell script (`su -c`, `flock -c`).
    #[serde(default)]
    pub script_options: Vec<String>,
    /// Options after which no program runs (`command -v`, `sudo -l`).
    #[serde(default)]
    pub no_command_options: Vec<String>,
    /// Options that start an interactive shell when no program is given
    /// (`sudo -s`, `su`).
    #[serde(default)]
    pub shell_options: Vec<String>,
    /// `-5` is an option (nice).
    #[serde(default)]
    pub numeric_options: bool,
    /// Operands before the wrapped program (timeout's DURATION).
    #[serde(default)]
    pub operands: usize,
    /// `NAME=VALUE` words before the program are environment assignments.
    #[serde(default)]
    pub assignments: bool,
    /// Nothing to run is fine (`env` alone prints the environment).
    #[serde(default)]
    pub command_optional: bool,
    /// Options naming the directory the wrapped program runs in (`env
    /// -C`): its relative names are that directory's.
    #[serde(default)]
    pub chdir_options: Vec<String>,
    /// Code handling this wrapper's own semantics (`xargs`, `find`...).
    #[serde(default)]
    pub special: Option<Special>,
    /// Environment variables this program reads that neither run code nor
    /// load configuration, beyond the catalog's global `harmless_variables`;
    /// `"*"` for a program that reads none that matter (a wrapper such as
    /// `env` or `nice`, whose command is checked on its own). Dangerous
    /// variables stay dangerous.
    #[serde(default)]
    pub harmless_env: Vec<String>,
    /// Options any one of which makes the program local (`netstat -n`: no
    /// name lookups); without one it is its `class`. Short options count in
    /// clusters (`-tlnp`).
    #[serde(default)]
    pub local_with: Vec<String>,
    /// An escape every invocation has unless one of `local_with` is given
    /// or its `unless_dir` names a directory (`unzip` extracts by default;
    /// `-l` lists, `-d out` extracts elsewhere). Its match fields are unused.
    #[serde(default)]
    pub default_escape: Option<Escape>,
    /// Makes links: a link pointing into a protected place lets later
    /// writes through it land there, so every operand counts as written.
    #[serde(default)]
    pub links: bool,
    /// The program's reviewed option table (`analyzer/options/*.toml`,
    /// merged in by build.rs): an option not in it makes the invocation
    /// unknown (BG214).
    #[serde(default)]
    pub options: Option<OptionTable>,
}

/// How a program reads its options, so a spelling is read as its own
/// parser reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OptionSyntax {
    /// GNU `getopt_long`: options anywhere before `--`; short options
    /// cluster and take attached values (`-k1,1`); a long option may be
    /// any unique prefix, its value attached with `=` or the next word.
    Gnu,
    /// POSIX `getopt` and bash's builtins: as `gnu`, but options end at the
    /// first operand.
    Posix,
    /// One dash and a word (`-in FILE`, `-noout`), as openssl and xxd read
    /// them; a word that is no listed name is read as a `gnu` cluster.
    SingleDash,
    /// No argument is an option that changes what it does (`echo`, `:`,
    /// `test`): `why` says why.
    Operands,
}

/// Every option a program accepts, as reviewed from its `--help` and
/// manual. Being listed means reviewed: what an option does that matters
/// (runs code, reaches the network, writes) is said by the entry's
/// `escapes`, `writes` and kin; the rest only change what it prints.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionTable {
    /// What was reviewed: the program, its version, the sources read.
    pub reviewed: String,
    pub syntax: OptionSyntax,
    /// Why no argument is an option that matters (`syntax = "operands"`).
    #[serde(default)]
    pub why: Option<String>,
    /// Short option letters without a value.
    #[serde(default)]
    pub short: String,
    /// Short option letters that take a value (attached or the next word).
    #[serde(default)]
    pub short_value: String,
    /// Short option letters whose value can only be attached (`sed -i.bak`).
    #[serde(default)]
    pub short_optional: String,
    /// Long option names (no dashes) without a value.
    #[serde(default)]
    pub long: Vec<String>,
    /// Long option names that take a value (`--opt=v` or `--opt v`).
    #[serde(default)]
    pub long_value: Vec<String>,
    /// Long option names whose value can only be attached (`--color=auto`).
    #[serde(default)]
    pub long_optional: Vec<String>,
    /// `-NUM` is an option (`head -5`, `kill -9`).
    #[serde(default)]
    pub numeric: bool,
    /// `+x` clusters are options too (`set +e`, `declare +x`).
    #[serde(default)]
    pub plus: bool,
    /// The arguments, after the program's name, that print its option list
    /// (`["--help"]` when absent; `[]` when it has none and the manual was
    /// read instead). Builtins are read through bash's `help`.
    #[serde(default)]
    pub help: Option<Vec<String>>,
}

fn yes() -> bool {
    true
}
