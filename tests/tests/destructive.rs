//! The protection profiles on a destructive-command corpus written for
//! bashgate (`tests/corpus/destructive.toml`), run through the built
//! `bashgate hook json` in an untainted session: under `standard` every
//! destructive variant is asked about and no near miss is stopped; under
//! `strict` every destructive variant is denied; under `minimal` the layer
//! is off. Every answer is pinned in a snapshot.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::process::Command;

use serde::Deserialize;

#[derive(Deserialize)]
struct Corpus {
    destructive: Vec<String>,
    benign: Vec<String>,
    bounded: Vec<String>,
}

/// How each destructive base is also written: through wrappers the analyzer
/// sees through.
const DESTRUCTIVE_WRAPPERS: &[&str] =
    &["{}", "env {}", "timeout 5 {}", "bash -c '{}'", "eval '{}'"];
const BENIGN_WRAPPERS: &[&str] = &["{}", "env {}", "bash -c '{}'"];

fn variants(bases: &[String], wrappers: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for b in bases {
        for w in wrappers {
            // A base with single quotes cannot go inside '...'.
            if w.contains('\'') && b.contains('\'') {
                continue;
            }
            out.push(w.replace("{}", b));
        }
    }
    out
}

fn corpus() -> (Vec<String>, Vec<String>, Vec<String>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/destructive.toml");
    let c: Corpus = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (
        variants(&c.destructive, DESTRUCTIVE_WRAPPERS),
        variants(&c.benign, BENIGN_WRAPPERS),
        variants(&c.bounded, BENIGN_WRAPPERS),
    )
}

/// Decisions (`decision rule`) for `commands` under a configuration.
fn decide(config: &str, commands: &[String]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("home/dev/project");
    std::fs::create_dir_all(&proj).unwrap();
    let cfg = dir.path().join("bashgate.toml");
    std::fs::write(&cfg, config).unwrap();
    // The person's own project (a cloned one taints every session).
    let trusted = Command::new(bashgate_tests::bashgate_bin())
        .args(["trust", &proj.display().to_string()])
        .env("BASHGATE_STATE_DIR", dir.path().join("state"))
        .env("BASHGATE_CONFIG", &cfg)
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    commands
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let home = dir.path().join("home/dev");
            let state = dir.path().join("state");
            let at = bashgate_tests::HookPlace {
                home: &home,
                state: &state,
                config: &cfg,
                cwd: &proj,
            };
            // A session each: an ask is remembered per session.
            let v = bashgate_tests::hook_json(&at, c, &format!("d{n}"));
            let reason = v["reason"].as_str().unwrap_or("");
            // The rule a reason cites last is the gate's own.
            let rule = reason
                .rsplit("(BG")
                .next()
                .filter(|_| reason.contains("(BG"))
                .map(|r| format!("BG{}", &r[..3.min(r.len())]))
                .unwrap_or_default();
            format!("{} {rule}", v["decision"].as_str().unwrap_or("?"))
                .trim()
                .to_string()
        })
        .collect()
}

#[test]
fn profiles_on_the_destructive_corpus() {
    let (destructive, benign, bounded) = corpus();
    assert!(destructive.len() >= 150, "{}", destructive.len());
    assert!(benign.len() >= 150, "{}", benign.len());
    let mut pinned: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut figures = Vec::new();
    for profile in ["standard", "strict", "minimal"] {
        let config = format!("profile = \"{profile}\"\n");
        let d = decide(&config, &destructive);
        let b = decide(&config, &benign);
        let f = decide(&config, &bounded);
        let stopped = |v: &[String]| v.iter().filter(|x| !x.starts_with("allow")).count();
        let fenced = |v: &[String]| v.iter().filter(|x| *x == "allow-confined").count();
        figures.push(format!(
            "{profile}: destructive stopped {}/{}, benign stopped {}/{}, bounded run with writes bounded {}/{} (stopped {})",
            stopped(&d),
            d.len(),
            stopped(&b),
            b.len(),
            fenced(&f),
            f.len(),
            stopped(&f)
        ));
        match profile {
            "standard" => {
                for (c, a) in destructive.iter().zip(&d) {
                    assert!(a.starts_with("ask") || a.starts_with("deny"), "{c}: {a}");
                }
                for (c, a) in benign.iter().zip(&b) {
                    assert!(a.starts_with("allow"), "benign {c}: {a}");
                }
                let expected = if bashgate_tests::gate::writes_fence_available() {
                    "allow-confined"
                } else {
                    "ask BG421"
                };
                for (c, a) in bounded.iter().zip(&f) {
                    assert_eq!(a, expected, "bounded {c}");
                }
            }
            "strict" => {
                for (c, a) in destructive.iter().chain(&bounded).zip(d.iter().chain(&f)) {
                    assert!(a.starts_with("deny"), "{c}: {a}");
                }
            }
            _ => {}
        }
        let table = pinned.entry(profile.to_string()).or_default();
        for (c, a) in destructive
            .iter()
            .zip(&d)
            .chain(benign.iter().zip(&b))
            .chain(bounded.iter().zip(&f))
        {
            table.insert(c.clone(), a.clone());
        }
    }
    eprintln!("{}", figures.join("\n"));
    insta::assert_yaml_snapshot!("profiles", pinned);
    report_current(&figures, destructive.len(), benign.len(), bounded.len());
}

/// The figures in `docs/accuracy.md` are these; with
/// `BASHGATE_UPDATE_DOCS=1` the block is rewritten instead.
fn report_current(figures: &[String], destructive: usize, benign: usize, bounded: usize) {
    use bashgate_corpus::report::{block, PROFILES_BEGIN, PROFILES_END};
    let (d, b, f) = corpus_sizes();
    let rows: String = figures.iter().map(|f| format!("- {f}\n")).collect();
    let fresh = format!(
        "{PROFILES_BEGIN}\n\n## Protection profiles\n\n\
         The destructive-command corpus (`tests/corpus/destructive.toml`, written for \
         bashgate): {d} destructive commands, each also run through `env`, `timeout`, \
         `bash -c` and `eval` ({destructive} variants), and {b} near misses, each also run \
         through `env` and `bash -c` ({benign} variants), and {f} deletions or overwrites \
         of a place whose start only the run knows (`rm -rf $TMPDIR/build`; {bounded} variants), \
         which run with their writes bounded where the fence for writes is available, \
         decided by the built `bashgate hook json` in an untainted session. Stopped means asked or denied; every answer \
         is pinned in `tests/tests/snapshots/destructive__profiles.snap`.\n\n{rows}\n\
         Reproduce: `cargo test -p bashgate-tests --test destructive -- --nocapture`.\n\n{PROFILES_END}"
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/accuracy.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let current =
        block(&doc, PROFILES_BEGIN, PROFILES_END).expect("docs/accuracy.md has the profiles block");
    if current == fresh {
        return;
    }
    if std::env::var_os("BASHGATE_UPDATE_DOCS").is_some() {
        std::fs::write(path, doc.replacen(current, &fresh, 1)).unwrap();
        return;
    }
    panic!("docs/accuracy.md's protection-profile figures are stale: rerun with BASHGATE_UPDATE_DOCS=1");
}

fn corpus_sizes() -> (usize, usize, usize) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/destructive.toml");
    let c: Corpus = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (c.destructive.len(), c.benign.len(), c.bounded.len())
}
