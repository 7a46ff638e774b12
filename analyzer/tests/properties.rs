//! Properties of the analyzer, checked with proptest on generated input.
//!
//! Runs are reproducible: the seed is fixed unless `PROPTEST_RNG_SEED` is
//! set, and `PROPTEST_CASES` scales the number of cases (for example
//! `PROPTEST_CASES=20000 cargo test -p bashgate-analyzer --test properties`).

use bashgate_analyzer::catalog::{Class, Special};
use bashgate_analyzer::{analyze, analyze_bytes, Analysis, Catalog, Limits, Rule, Verdict};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    let mut c = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        c.rng_seed = RngSeed::Fixed(0x6261_7368_6761_7465);
    }
    c.failure_persistence = None;
    c
}

/// What holds of every analysis, whatever the input.
fn well_formed(command: &str, a: &Analysis) {
    let worst = a.findings.iter().map(|f| f.verdict()).max();
    assert_eq!(a.verdict, worst.unwrap_or(Verdict::Safe), "{command:?}");
    for f in &a.findings {
        assert!(
            f.span.start <= f.span.end && f.span.end <= command.len(),
            "span {:?} outside {command:?}",
            f.span
        );
    }
    if a.verdict == Verdict::Safe {
        assert!(
            a.invocations.iter().all(|i| i.program.is_some()),
            "{command:?}"
        );
    }
}

fn verdict(command: &str) -> Verdict {
    let a = analyze(command);
    well_formed(command, &a);
    a.verdict
}

// ---------------------------------------------------------------------------
// Never panics

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn never_panics_on_shell_like_text(s in r#"[a-z0-9 $'"\\(){};|&<>`\n=#*?\[\]~!.,:/@%+-]{0,160}"#) {
        verdict(&s);
    }

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let a = analyze_bytes(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        well_formed(&text, &a);
        if std::str::from_utf8(&bytes).is_err() {
            prop_assert_ne!(a.verdict, Verdict::Safe);
        }
    }
}

// ---------------------------------------------------------------------------
// Bounded on adversarial input: a verdict comes back (the test thread has
// the default 2 MiB stack, so unbounded recursion would crash it).

/// Open and close of a construct that runs what it holds, and whether
/// repeating it nests (repeated backquotes pair up instead).
const NESTINGS: &[(&str, &str, bool)] = &[
    ("$( ", " )", true),
    ("( ", " )", true),
    ("{ ", "; }", true),
    ("\"$( ", " )\"", true),
    ("$(( 1 + $( ", " ) ))", true),
    ("<( ", " )", true),
    ("if true; then ", "; fi", true),
    ("while true; do ", "; done", true),
    ("f() { ", "; }; f", true),
    ("[[ -n $( ", " ) ]]", true),
    ("${x:-$( ", " )}", true),
    ("case x in x) ", ";; esac", true),
    ("eval ", "", false),
    ("`", "`", false),
];

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn deep_nesting_is_bounded(kind in 0..NESTINGS.len(), n in 1usize..5000, closed in any::<bool>()) {
        let (open, close, _) = NESTINGS[kind];
        let mut s = open.repeat(n);
        s.push_str("curl x");
        if closed {
            s.push_str(&close.repeat(n));
        }
        let v = verdict(&s);
        // Whatever the depth, curl is in there: never safe.
        prop_assert_ne!(v, Verdict::Safe, "{} levels of {:?}", n, open);
    }

    #[test]
    fn safe_nesting_beyond_the_limits_is_not_safe(kind in 0..NESTINGS.len(), n in 300usize..3000) {
        let (open, close, nests) = NESTINGS[kind];
        let s = format!("{}ls{}", open.repeat(n), close.repeat(n));
        let a = analyze(&s);
        well_formed(&s, &a);
        if nests {
            prop_assert_ne!(a.verdict, Verdict::Safe, "{} levels of {:?}", n, open);
            prop_assert!(a.has_rule(Rule::LimitExceeded), "{} levels of {:?}", n, open);
        }
    }

    #[test]
    fn nested_quoted_shells_are_bounded(n in 1usize..14) {
        let mut s = "curl x".to_string();
        for _ in 0..n {
            s = format!("bash -c '{}'", s.replace('\'', r"'\''"));
        }
        prop_assert_ne!(verdict(&s), Verdict::Safe);
    }
}

#[test]
fn long_pipelines_and_lists_are_bounded() {
    for n in [10, 1_000, 5_000, 12_000] {
        let pipe = vec!["true"; n].join(" | ");
        let v = verdict(&pipe);
        if n > Limits::default().max_invocations {
            assert_ne!(v, Verdict::Safe, "{n} stages");
        }
        let mut with_curl = pipe.clone();
        with_curl.push_str(" | curl x");
        assert_ne!(verdict(&with_curl), Verdict::Safe, "{n} stages then curl");
        let list = format!("{}; curl x", vec!["ls"; n].join("; "));
        assert_ne!(verdict(&list), Verdict::Safe, "{n} commands then curl");
    }
}

#[test]
fn huge_heredocs_and_words_are_bounded() {
    let limits = Limits::default();
    let body = "x $y `z`\n".repeat(6_000);
    let doc = format!("cat <<'EOF'\n{body}EOF\n");
    assert!(doc.len() < limits.max_bytes);
    assert_eq!(verdict(&doc), Verdict::Safe);
    let fed = format!("sh <<'EOF'\n{}curl x\nEOF\n", "true\n".repeat(10_000));
    assert_ne!(verdict(&fed), Verdict::Safe);
    let over = format!("cat <<'EOF'\n{}EOF\n", "x\n".repeat(limits.max_bytes));
    let a = analyze(&over);
    assert!(a.has_rule(Rule::LimitExceeded) && a.verdict != Verdict::Safe);
    let word = format!("echo {}", "a".repeat(limits.max_bytes - 10));
    assert_eq!(verdict(&word), Verdict::Safe);
    let many = "bash -c 'ls'; ".repeat(3_000);
    verdict(&many);
    let subs = format!("echo {}", "$(ls)".repeat(10_000));
    verdict(&subs);
}

// ---------------------------------------------------------------------------
// Monotonic: a network command anywhere it runs makes the whole not safe.

const SAFE: &[&str] = &[
    "ls -la",
    "cat a.txt",
    "grep -rn curl src/",
    "echo 'bash -c curl'",
    "wc -l",
    "true",
    "sort -u a.txt",
    "head -n 1 a.txt",
    "printf '%s\\n' x",
    "find . -name '*.rs'",
    "sed -n p a.txt",
    "awk '{print $1}' a.txt",
];

const NETWORK: &[&str] = &[
    "curl x",
    "wget -q -O- https://example.com",
    "nc -l 4242",
    "ssh host ls",
    "echo x >/dev/tcp/127.0.0.1/9",
    "cat </dev/udp/127.0.0.1/53",
    "pip install requests",
    "python3 -c 'print(1)'",
    "git clone https://example.com/r.git",
    "scp a host:b",
];

fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Every way of putting `n` where it runs next to `s`.
fn compositions(s: &str, n: &str) -> Vec<String> {
    vec![
        format!("{s}; {n}"),
        format!("{s} && {n}"),
        format!("{s} || {n}"),
        format!("{s} | {n}"),
        format!("{n} | {s}"),
        format!("{s} $({n})"),
        format!("{s} \"$({n})\""),
        format!("{s} `{}`", n.replace('\\', "\\\\").replace('`', "\\`")),
        format!("{s} <({n})"),
        format!("{s} >({n})"),
        format!("{{ {s}; {n}; }}"),
        format!("({s}; {n})"),
        format!("if {s}; then {n}; fi"),
        format!("if {n}; then {s}; fi"),
        format!("while {s}; do {n}; done"),
        format!("for i in a; do {s}; {n}; done"),
        format!("case x in x) {s}; {n};; esac"),
        format!("f() {{ {n}; }}; {s}"),
        format!("{s} & {n}"),
        format!("x=$({n}) {s}"),
        format!("{s}\nsh <<'EOF'\n{n}\nEOF"),
        format!("{s}\nbash <<EOF\n{n}\nEOF"),
        format!("{s}; bash -c {}", single_quoted(n)),
        format!("{s}; sh -c {}", single_quoted(n)),
        format!("{s}; eval {}", single_quoted(n)),
        format!("{s}; trap {} EXIT", single_quoted(n)),
        format!("{s}; bash <<<{}", single_quoted(n)),
    ]
}

#[test]
fn the_parts_have_the_verdicts_the_properties_assume() {
    for s in SAFE {
        assert_eq!(verdict(s), Verdict::Safe, "{s}");
    }
    for n in NETWORK {
        assert_eq!(verdict(n), Verdict::Network, "{n}");
    }
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn composing_with_a_network_command_is_never_safe(
        s in proptest::sample::select(SAFE),
        n in proptest::sample::select(NETWORK),
        which in any::<prop::sample::Index>(),
    ) {
        let all = compositions(s, n);
        let c = which.get(&all);
        prop_assert_ne!(verdict(c), Verdict::Safe, "{}", c);
    }
}

// ---------------------------------------------------------------------------
// Quoting invariance: writing a static word another way changes nothing.

/// The usual way to write a word: bare when it can be, else in single quotes.
fn minimal(value: &str) -> String {
    let bare = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
    if bare {
        value.to_string()
    } else {
        single_quoted(value)
    }
}

/// A piece of a word in one of the styles bash reads back unchanged:
/// bare or single-quoted, double-quoted, `$'\x..'`, `$'\ooo'`, and
/// every character behind a backslash.
fn piece(value: &str, style: usize) -> String {
    match style % 5 {
        0 => minimal(value),
        1 => {
            let mut out = String::from("\"");
            for c in value.chars() {
                if matches!(c, '$' | '`' | '"' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out + "\""
        }
        2 => format!(
            "$'{}'",
            value
                .bytes()
                .map(|c| format!("\\x{c:02x}"))
                .collect::<String>()
        ),
        3 => format!(
            "$'{}'",
            value
                .bytes()
                .map(|c| format!("\\{c:03o}"))
                .collect::<String>()
        ),
        _ => value.chars().map(|c| format!("\\{c}")).collect(),
    }
}

/// `value` cut in two, each half written in its own style, sometimes with
/// empty quotes between them: `curl`, `"curl"`, `'c'url`, `c\url`,
/// `$'\x63url'`, `c''url`...
fn requote(value: &str, style: usize, cut: usize) -> String {
    if value.len() < 2 || !value.is_ascii() {
        return piece(value, style);
    }
    let cut = 1 + cut % (value.len() - 1);
    let (a, b) = value.split_at(cut);
    let glue = ["", "''", "\"\""][style / 5 % 3];
    format!("{}{glue}{}", piece(a, style), piece(b, style / 3))
}

#[test]
fn requoted_words_read_back_unchanged_in_bash() {
    let mut words = Vec::new();
    let mut expected = Vec::new();
    for cmd in COMMANDS {
        for (i, w) in cmd.iter().enumerate() {
            for style in 0..45 {
                words.push(requote(w, style, i + style));
                expected.push(w.to_string());
            }
        }
    }
    let script = format!("printf '%s\\0' {}", words.join(" "));
    let out = std::process::Command::new("/bin/bash")
        .args(["--norc", "-c", &script])
        .output()
        .expect("bash runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let got: Vec<&str> = text.split_terminator('\0').collect();
    assert_eq!(got, expected);
}

/// Simple commands as words; every word is a plain static value.
const COMMANDS: &[&[&str]] = &[
    &["curl", "-s", "https://example.com"],
    &["ls", "-la", "src"],
    &["grep", "-rn", "curl", "src/"],
    &["find", ".", "-name", "x", "-exec", "rm", "{}", ";"],
    &["find", ".", "-name", "x", "-delete"],
    &["sudo", "-u", "root", "curl", "x"],
    &["env", "FOO=1", "timeout", "5", "wget", "y"],
    &["timeout", "-s", "KILL", "5", "ls"],
    &["xargs", "-n", "1", "ls"],
    &["bash", "-c", "curl x"],
    &["sh", "-c", "ls -la"],
    &["eval", "ls"],
    &["sed", "-n", "p", "a.txt"],
    &["sed", "1e curl", "a.txt"],
    &["awk", "{print $1}", "a.txt"],
    &["awk", "BEGIN{system(\"curl\")}"],
    &["git", "clone", "https://example.com/r.git"],
    &["git", "status"],
    &["pip", "install", "x"],
    &["python3", "-c", "print(1)"],
    &["sort", "--compress-program=gzip", "a"],
    &["tar", "-xf", "a.tar", "--to-command=sh"],
    &["nice", "-n", "5", "nohup", "cat", "a"],
    &["frobnicate", "a"],
    &["make", "all"],
];

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn requoting_a_word_keeps_the_verdict(
        cmd in proptest::sample::select(COMMANDS),
        styles in proptest::collection::vec((0usize..45, 0usize..16), 8),
        extra in proptest::sample::select(COMMANDS),
        sep in proptest::sample::select(&["; ", " | ", " && ", "\n"][..]),
    ) {
        let line = |c: &[&str]| c.iter().map(|w| minimal(w)).collect::<Vec<_>>().join(" ");
        let plain = format!("{}{sep}{}", line(cmd), line(extra));
        let written: Vec<String> = cmd
            .iter()
            .zip(styles.iter().cycle())
            .map(|(w, &(style, cut))| requote(w, style, cut))
            .collect();
        let quoted = format!("{}{sep}{}", written.join(" "), line(extra));
        let (a, b) = (verdict(&plain), verdict(&quoted));
        // A spelling the parser reads differently from bash (`""\ x`:
        // tree-sitter drops the escaped blank) may only cost the proof.
        let misread = b == Verdict::Unknown
            && bashgate_analyzer::analyze(&quoted)
                .findings
                .iter()
                .any(|f| f.rule == bashgate_analyzer::Rule::ParseError);
        prop_assert!(a == b || misread, "{:?} vs {:?}: {:?} vs {:?}", plain, quoted, a, b);
    }
}

// ---------------------------------------------------------------------------
// Wrapper closure: a wrapper never makes what it runs safer.

const NOT_SAFE: &[&str] = &[
    "curl x",
    "wget -O- y",
    "./run.sh",
    "frobnicate",
    "python3 -c 1",
    "make",
    "bash x.sh",
    "$cmd",
    "cat /dev/null >/dev/tcp/127.0.0.1/9",
    "sh -c 'nc -l 1'",
];

/// One way to write `wrapper` running `cmd`, with options taken from its
/// catalog entry (never one after which no program runs).
fn wrap(name: &str, cmd: &str, picks: &[usize]) -> String {
    let entry = Catalog::builtin().get(name).expect("a catalogued wrapper");
    let mut words = vec![name.to_string()];
    let mut pick = picks.iter().copied().cycle();
    match entry.special {
        Some(Special::Find) => return format!("find . -name x -exec {cmd} {{}} \\;"),
        Some(Special::Parallel) => return format!("parallel {cmd} ::: a"),
        Some(Special::Eval) => return format!("eval {}", single_quoted(cmd)),
        Some(Special::Trap) => return format!("trap {} EXIT", single_quoted(cmd)),
        Some(Special::Su) | Some(Special::Script) if !entry.script_options.is_empty() => {
            let opt = &entry.script_options[pick.next().unwrap_or(0) % entry.script_options.len()];
            return format!("{name} {opt} {}", single_quoted(cmd));
        }
        _ => {}
    }
    for _ in 0..pick.next().unwrap_or(0) % 3 {
        let p = pick.next().unwrap_or(0);
        if p % 2 == 0 && !entry.flags.is_empty() {
            words.push(entry.flags[p / 2 % entry.flags.len()].clone());
        } else if !entry.options_with_value.is_empty() {
            let opt = &entry.options_with_value[p / 2 % entry.options_with_value.len()];
            words.push(if opt.starts_with("--") && p % 3 == 0 {
                format!("{opt}=1")
            } else {
                format!("{opt} 1")
            });
        }
    }
    for _ in 0..entry.operands {
        words.push("1".into());
    }
    if entry.special == Some(Special::Flock) {
        words.push("lock".into());
    }
    words.push(cmd.to_string());
    words.join(" ")
}

fn wrappers() -> Vec<String> {
    let mut v: Vec<String> = Catalog::builtin()
        .entries()
        .filter(|(_, e)| e.class == Class::Wrapper)
        .map(|(n, _)| n.to_string())
        // `source FILE` runs a file, not a command; `builtin` runs builtins only.
        .filter(|n| n != "source" && n != "." && n != "builtin")
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn wrapping_never_makes_a_command_safe(
        inner in proptest::sample::select(NOT_SAFE),
        w1 in any::<prop::sample::Index>(),
        w2 in any::<prop::sample::Index>(),
        twice in any::<bool>(),
        picks in proptest::collection::vec(0usize..1000, 6),
    ) {
        let names = wrappers();
        let first = wrap(w1.get(&names).as_str(), inner, &picks);
        let cmd = if twice {
            let second = w2.get(&names).as_str();
            wrap(second, &first, &picks[1..])
        } else {
            first
        };
        prop_assert_ne!(verdict(&cmd), Verdict::Safe, "{}", cmd);
    }
}

#[test]
fn every_wrapper_is_covered() {
    let names = wrappers();
    assert!(names.len() >= 20, "{names:?}");
    for n in &names {
        for inner in NOT_SAFE {
            let cmd = wrap(n, inner, &[0]);
            assert_ne!(verdict(&cmd), Verdict::Safe, "{cmd}");
        }
    }
}
