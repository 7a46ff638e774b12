//! The workspace's module graph has no cycles, and the gate's engine stays
//! below its surfaces.
//!
//! Each crate's modules are read from their source files; a reference
//! `crate::a::b` or `super::x` from one module to another is an edge
//! between the two sibling modules that contain them (a child naming its
//! parent, or a parent its child, is not an edge: that is containment).
//! Any cycle among siblings fails the test with its path.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Module path of a source file under `src`: `policy/mod.rs` is
/// `[policy]`, `policy/always.rs` is `[policy, always]`, `lib.rs` is `[]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    if parts.first().is_some_and(|p| p == "bin") {
        // Each binary is a crate of its own.
        return vec![];
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if p.file_name().unwrap() != "bin" {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segments named after each `prefix::`: `crate::a::b`
/// gives `a`, `super::{a, b::c}` gives `a` and `b`.
fn heads(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let id = ident(item.trim());
                if !id.is_empty() {
                    out.push(id.to_string());
                }
            }
        } else {
            let id = ident(rest);
            if !id.is_empty() {
                out.push(id.to_string());
            }
        }
    }
    out
}

/// Edges between sibling modules of one crate.
fn crate_edges(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for f in &files {
        let m = module_of(src, f);
        let text = fs::read_to_string(f).unwrap();
        // Tests may reach anywhere: only the code counts.
        let code = without_test_items(&text);
        let code = code.as_str();
        let mut targets: Vec<Vec<String>> = Vec::new();
        for h in heads(code, "crate::") {
            targets.push(vec![h]);
        }
        let parent: Vec<String> = m[..m.len().saturating_sub(1)].to_vec();
        for h in heads(code, "super::") {
            if h == "super" {
                continue;
            }
            let mut t = parent.clone();
            t.push(h);
            targets.push(t);
        }
        for t in targets {
            if !modules.contains(&t) {
                continue; // an item, not a module
            }
            // Reduce both ends to siblings under their common ancestor.
            let common = m.iter().zip(&t).take_while(|(a, b)| a == b).count();
            if common == m.len() || common == t.len() {
                continue; // containment
            }
            let from = m[..=common].to_vec();
            let to = t[..=common].to_vec();
            edges.entry(from).or_default().insert(to);
        }
    }
    edges
}

/// The text with every item marked `#[cfg(test)]` taken out (the item
/// up to its `;`, or its `{ … }` block with the blocks inside), and the
/// rest of the file kept.
fn without_test_items(text: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        rest = &rest[at + MARK.len()..];
        rest = &rest[item_end(rest)..];
    }
    out.push_str(rest);
    out
}

/// Where the item at the start of `s` ends: after its first `;` at depth
/// zero, or after the `}` that closes its first block. Strings, characters
/// and comments are skipped, so a brace inside them does not count.
fn item_end(s: &str) -> usize {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            // A character literal (`'{'`, `'\''`), not a lifetime (`'a`).
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                i += if b.get(i + 1) == Some(&b'\\') { 3 } else { 2 };
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

fn find_cycle(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        n: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for next in edges.get(n).into_iter().flatten() {
            match state.get(next) {
                Some(1) => {
                    let at = stack.iter().position(|s| s == next).unwrap();
                    let mut cycle: Vec<String> = stack[at..].iter().map(|m| m.join("::")).collect();
                    cycle.push(next.join("::"));
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n) {
            if let Some(c) = visit(n, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// Every package of the workspace, as its manifest lists them.
fn members() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let manifest: toml::Value = toml::from_str(&text).unwrap();
    manifest["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn no_module_cycle_in_any_crate() {
    let members = members();
    assert!(members.len() >= 6, "{members:?}");
    for krate in &members {
        let src = root().join(krate).join("src");
        let edges = crate_edges(&src);
        // A crate of many modules with no edge found means the reader
        // missed them; a small one may import only from its root.
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        assert!(
            !edges.is_empty() || krate == "tests" || files.len() <= 4,
            "{krate}: no edges found"
        );
        if let Some(c) = find_cycle(&edges) {
            panic!(
                "{krate}: modules import each other in a cycle: {}",
                c.join(" -> ")
            );
        }
    }
}

#[test]
fn the_checker_sees_a_cycle() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path();
    fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    fs::write(src.join("a.rs"), "use crate::b::X;\n").unwrap();
    fs::create_dir(src.join("b")).unwrap();
    fs::write(src.join("b/mod.rs"), "mod c;\npub struct X;\n").unwrap();
    fs::write(src.join("b/c.rs"), "use crate::{a, b};\n").unwrap();
    let c = find_cycle(&crate_edges(src)).expect("a -> b -> a");
    assert!(
        c.contains(&"a".to_string()) && c.contains(&"b".to_string()),
        "{c:?}"
    );
    fs::write(src.join("b/c.rs"), "use super::X;\n").unwrap();
    assert_eq!(find_cycle(&crate_edges(src)), None);
    // Past a test item (braces in strings, characters and comments
    // included), the code is still read; inside one, it is not.
    fs::write(
        src.join("b/c.rs"),
        "#[cfg(test)]\nimpl X { fn f() { let _ = ('}', \"}\"); /* } */ } }\n\
         #[cfg(test)]\nuse crate::a;\n\
         pub fn g<'a>(x: &'a str) -> &'a str { x }\n\
         use crate::a::Y;\n",
    )
    .unwrap();
    let c = find_cycle(&crate_edges(src)).expect("a -> b -> a past the test items");
    assert!(c.contains(&"a".to_string()), "{c:?}");
    fs::write(
        src.join("b/c.rs"),
        "#[cfg(test)]\nmod tests {\n    use crate::a::Y;\n}\npub fn h() {}\n",
    )
    .unwrap();
    assert_eq!(find_cycle(&crate_edges(src)), None);
}

#[test]
fn the_engine_library_does_no_surface_io_and_has_no_parser_of_its_own() {
    let gate = root().join("gate");
    let manifest = fs::read_to_string(gate.join("Cargo.toml")).unwrap();
    assert!(
        !manifest.contains("tree-sitter"),
        "the gate reads commands through the analyzer's Analysis, not a parser of its own"
    );
    // The surfaces are the `bashgate` package in gate/cli, which depends on
    // this one: the library neither holds their modules nor links their
    // command-line parser or HTTP server.
    let parsed: toml::Table = toml::from_str(&manifest).unwrap();
    let deps = parsed["dependencies"].as_table().unwrap();
    assert!(
        deps.contains_key("bashgate-analyzer"),
        "the dependencies are read"
    );
    for surface_crate in ["clap", "axum", "hyper"] {
        assert!(
            !deps.contains_key(surface_crate),
            "the engine library depends on {surface_crate}: that belongs to the programs in gate/cli"
        );
    }
    // The library's modules do not print to the terminal or read stdin.
    let mut files = Vec::new();
    rust_files(&gate.join("src"), &mut files);
    assert!(files.len() > 20, "the library's sources are found");
    for f in files {
        let rel = f
            .strip_prefix(gate.join("src"))
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(&f).unwrap();
        let code = without_test_items(&text);
        for banned in [
            "println!",
            "eprintln!",
            "io::stdin",
            "io::stdout",
            "tokio::net",
            "UnixListener",
            "TcpListener",
        ] {
            assert!(
                !code.contains(banned),
                "{rel} uses {banned}: that is a surface's job"
            );
        }
    }
}
