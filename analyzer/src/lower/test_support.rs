//! What the lowering shortcuts' tests share: the commands they are checked
//! against (the labeled corpus and, where present, the shared external
//! corpora) and the ordinary path they must agree with.

use std::path::Path;

use super::{lower, Lowered};
use crate::limits::Limits;
use crate::parse::{parse, Parsed};

/// Lowers `src` through the parser, as the resolver does for every text a
/// shortcut turns down; `None` when the parser gives no tree or disagrees
/// with bash somewhere.
pub fn by_parser(src: &str) -> Option<Lowered> {
    let limits = Limits::default();
    let mut steps = limits.max_parse_steps;
    let Parsed::Tree {
        tree,
        text,
        unrepaired,
    } = parse(src, &limits, &mut steps)
    else {
        return None;
    };
    if !unrepaired.is_empty() {
        return None;
    }
    Some(lower(tree.root_node(), &text, limits.max_depth))
}

/// Every command, and how many of them are the labeled corpus's own.
pub fn commands() -> (Vec<String>, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut commands: Vec<String> = Vec::new();
    let cases = std::fs::read_dir(root.join("corpus/cases")).expect("corpus/cases");
    for entry in cases {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let table: toml::Table = toml::from_str(&text).unwrap();
            collect_commands(&toml::Value::Table(table), &mut commands);
        }
    }
    let own = commands.len();
    assert!(own > 500, "only {own} corpus commands found");
    let shared = root.join("../shared/corpora");
    if let Ok(dir) = std::fs::read_dir(&shared) {
        for entry in dir {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text.lines() {
                    let v: serde_json::Value = serde_json::from_str(line).unwrap();
                    if let Some(c) = v.get("command").and_then(|c| c.as_str()) {
                        commands.push(c.to_string());
                    }
                }
            }
        }
    }
    (commands, own)
}

/// Every string under a `command` key (or in a `commands` list).
fn collect_commands(v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                match (k.as_str(), v) {
                    ("command", toml::Value::String(s)) => out.push(s.clone()),
                    ("commands", toml::Value::Array(a)) => {
                        out.extend(a.iter().filter_map(|s| s.as_str().map(str::to_string)))
                    }
                    _ => collect_commands(v, out),
                }
            }
        }
        toml::Value::Array(a) => a.iter().for_each(|v| collect_commands(v, out)),
        _ => {}
    }
}
