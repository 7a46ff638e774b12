//! The option review's check, shared by `tests/option_review.rs` and
//! `examples/option_review.rs`: every option a catalog program lists in its
//! help must be in its reviewed table, and every option its escapes name
//! must be too.

use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bashgate_analyzer::catalog::{Entry, OptionSyntax, OptionTable};

/// What checking one program found.
pub enum Outcome {
    /// Its help lists nothing the table lacks.
    Reviewed { options: usize },
    /// Not installed here, or no help to read: `why`.
    NotChecked { why: String },
    /// Options in its help or escapes that the table does not hold.
    Unclassified { options: Vec<String> },
}

/// The bash builtins, by bash's own list.
pub fn bash_builtins() -> BTreeSet<String> {
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", "compgen -b"])
        .output()
        .expect("bash runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect()
}

pub fn check(name: &str, entry: &Entry, builtins: &BTreeSet<String>) -> Outcome {
    let Some(table) = &entry.options else {
        return Outcome::Unclassified {
            options: vec!["(no option table)".into()],
        };
    };
    let mut missing: BTreeSet<String> = BTreeSet::new();
    for esc in &entry.escapes {
        if let Some(long) = &esc.long {
            if !accepts_long(table, long) {
                missing.insert(format!("--{long} (an escape)"));
            }
        }
        if let Some(short) = &esc.short {
            for c in short.chars() {
                // single-dash tables list each letter as a name (`-F`).
                let as_name =
                    table.syntax == OptionSyntax::SingleDash && accepts_long(table, &c.to_string());
                if !accepts_short(table, c) && !as_name && table.syntax != OptionSyntax::Operands {
                    missing.insert(format!("-{c} (an escape)"));
                }
            }
        }
    }
    let help = if builtins.contains(name) {
        run(
            "bash",
            &["--norc", "--noprofile", "-c", &format!("help -- '{name}'")],
        )
    } else {
        match &table.help {
            Some(args) if args.is_empty() => None,
            _ if !installed(name) => None,
            Some(args) => run(name, &args.iter().map(String::as_str).collect::<Vec<_>>()),
            None => run(name, &["--help"]),
        }
    };
    let Some(help) = help else {
        if !missing.is_empty() {
            return Outcome::Unclassified {
                options: missing.into_iter().collect(),
            };
        }
        return Outcome::NotChecked {
            why: if table.help.as_ref().is_some_and(Vec::is_empty) {
                "reviewed from its manual (no help to read)".into()
            } else {
                "not installed here".into()
            },
        };
    };
    let listed = options_in_help(&help);
    let count = listed.len();
    if table.syntax != OptionSyntax::Operands {
        for option in listed {
            let ok = match option.strip_prefix("--") {
                Some(long) => accepts_long(table, long),
                None => {
                    let body = &option[1..];
                    (table.syntax == OptionSyntax::SingleDash && accepts_long(table, body))
                        || body.chars().next().is_some_and(|c| accepts_short(table, c))
                }
            };
            if !ok {
                missing.insert(option);
            }
        }
    }
    if missing.is_empty() {
        Outcome::Reviewed { options: count }
    } else {
        Outcome::Unclassified {
            options: missing.into_iter().collect(),
        }
    }
}

/// Whether `name` is a program on this machine's standard path.
fn installed(name: &str) -> bool {
    [
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
        "/usr/local/sbin",
        "/usr/sbin",
        "/sbin",
    ]
    .iter()
    .any(|d| std::path::Path::new(d).join(name).is_file())
}

fn accepts_short(table: &OptionTable, c: char) -> bool {
    table.short.contains(c) || table.short_value.contains(c) || table.short_optional.contains(c)
}

fn accepts_long(table: &OptionTable, name: &str) -> bool {
    [&table.long, &table.long_value, &table.long_optional]
        .iter()
        .any(|l| l.iter().any(|o| o == name))
}

/// Runs `program args` with no input, in a scratch directory, C locale,
/// for at most five seconds; its output and errors together. Where the
/// kernel allows, in a new network namespace and, when run as root, as
/// `nobody` (a help text needs neither the network nor privileges).
fn run(program: &str, args: &[&str]) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("bashgate-option-review-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).ok()?;
    let mut argv: Vec<String> = fence().to_vec();
    argv.extend(
        [
            "env",
            "-i",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "LC_ALL=C",
            "COLUMNS=200",
            "PAGER=cat",
            "MANPAGER=cat",
            "TERM=dumb",
        ]
        .map(String::from),
    );
    argv.push(format!("HOME={}", dir.display()));
    argv.push(program.into());
    argv.extend(args.iter().map(|a| a.to_string()));
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // Read both pipes while it runs: a long help must not fill a pipe.
    let mut out = child.stdout.take()?;
    let mut err = child.stderr.take()?;
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().ok()?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut bytes = out.join().ok()?;
    bytes.extend(err.join().ok()?);
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The command prefix that fences a help run: as root, a new network
/// namespace and `nobody`; otherwise a new user and network namespace; on
/// a kernel that allows neither, nothing (said once).
fn fence() -> &'static [String] {
    static FENCE: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    FENCE.get_or_init(|| {
        let root = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Uid:"))
                    .map(|l| l.split_whitespace().nth(1) == Some("0"))
            })
            .unwrap_or(false);
        let candidates: Vec<Vec<&str>> = if root {
            vec![vec![
                "unshare",
                "--net",
                "--",
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
            ]]
        } else {
            vec![vec!["unshare", "--user", "--map-root-user", "--net", "--"]]
        };
        for c in candidates {
            let works = Command::new(c[0])
                .args(&c[1..])
                .arg("true")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if works {
                return c.into_iter().map(String::from).collect();
            }
        }
        eprintln!("option review: no network namespace on this kernel; help texts run unfenced");
        Vec::new()
    })
}

/// The options a help text lists: on each line that starts (after
/// indentation) with `-` or `+`, the spellings in its option column (up
/// to the first gap of two spaces or a tab). `--[no-]x` gives both.
pub fn options_in_help(help: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in help.lines() {
        let body = line.trim_start();
        if body.len() == line.len() && !line.starts_with('-') {
            continue;
        }
        if !body.starts_with('-') {
            continue;
        }
        let column = body
            .find("  ")
            .into_iter()
            .chain(body.find('\t'))
            .min()
            .map_or(body, |end| &body[..end]);
        let bytes = column.as_bytes();
        for (i, _) in column.match_indices('-') {
            let before_ok = i == 0 || matches!(bytes[i - 1], b' ' | b',' | b'[' | b'|' | b'/');
            if !before_ok {
                continue;
            }
            let rest = &column[i..];
            let dashes = if rest.starts_with("--") { 2 } else { 1 };
            let mut word: String = rest[dashes..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '?' | '@'))
                .collect();
            let no = rest[dashes..].starts_with("[no-]") || rest[dashes..].starts_with("[no]");
            if no {
                let skip = if rest[dashes..].starts_with("[no-]") {
                    5
                } else {
                    4
                };
                word = rest[dashes + skip..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
                    .collect();
            }
            let word = word.trim_end_matches('-').to_string();
            if word.is_empty() {
                continue;
            }
            // Placeholders (`-NUM`, `-WIDTH`) are not option names.
            if dashes == 1 && word.len() > 1 && word.chars().all(|c| c.is_ascii_uppercase()) {
                continue;
            }
            let prefix = if dashes == 2 { "--" } else { "-" };
            if no {
                found.insert(format!("{prefix}no-{word}"));
            }
            found.insert(format!("{prefix}{word}"));
        }
    }
    found
}
