//! Redirect targets of a command, found by re-parsing it with
//! tree-sitter-bash. The analyzer's invocations carry argv but not
//! redirects yet (requested in gate/INBOX.md); until they do, this module
//! walks the tree for `file_redirect` nodes, in the command itself and in
//! the `-c` scripts of shells and the words of `eval` that the analyzer
//! resolved. A target computed at run time is reported as dynamic.

use bashgate_analyzer::Analysis;
use tree_sitter::{Node, Parser};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub op: String,
    /// The target after quote removal; `None` when computed at run time.
    pub target: Option<String>,
}

impl Redirect {
    /// Whether the redirect reads the file (`<`, `<>`).
    pub fn reads(&self) -> bool {
        self.op.starts_with('<') && !self.op.starts_with("<<")
    }
}

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash"];
const MAX_NODES: usize = 200_000;
const MAX_SCRIPTS: usize = 64;

/// All file redirects in the command and in the embedded scripts the
/// analyzer resolved. `None` when the text cannot be parsed.
pub fn collect(command: &str, analysis: &Analysis) -> Option<Vec<Redirect>> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    let mut out = Vec::new();
    let mut scripts: Vec<String> = vec![command.to_string()];
    for inv in &analysis.invocations {
        let Some(p) = inv.program.as_deref() else {
            continue;
        };
        if p == "eval" {
            let words: Option<Vec<&str>> = inv.args.iter().map(|a| a.as_deref()).collect();
            if let Some(w) = words {
                scripts.push(w.join(" "));
            }
        } else if SHELLS.contains(&p) {
            if let Some(s) = dash_c_script(&inv.args) {
                scripts.push(s.to_string());
            }
        }
    }
    for s in scripts.iter().take(MAX_SCRIPTS) {
        let tree = parser.parse(s, None)?;
        walk(tree.root_node(), s, &mut out)?;
    }
    Some(out)
}

fn dash_c_script(args: &[Option<String>]) -> Option<&str> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = a.as_deref()?;
        if a == "--" || !a.starts_with('-') {
            return None;
        }
        if !a.starts_with("--") && a.contains('c') {
            return it.next().and_then(|s| s.as_deref());
        }
    }
    None
}

fn walk(root: Node, src: &str, out: &mut Vec<Redirect>) -> Option<()> {
    let mut stack = vec![root];
    let mut seen = 0usize;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > MAX_NODES {
            return None;
        }
        if n.kind() == "file_redirect" {
            if let Some(r) = file_redirect(n, src) {
                out.push(r);
            }
        }
        let mut c = n.walk();
        for child in n.children(&mut c) {
            stack.push(child);
        }
    }
    Some(())
}

fn file_redirect(n: Node, src: &str) -> Option<Redirect> {
    let mut op = String::new();
    let mut dest: Option<Node> = n.child_by_field_name("destination");
    let mut c = n.walk();
    for child in n.children(&mut c) {
        if !child.is_named() {
            op.push_str(child.utf8_text(src.as_bytes()).unwrap_or(""));
        } else if dest.is_none() && child.kind() != "file_descriptor" {
            dest = Some(child);
        }
    }
    let dest = dest?;
    if dest.kind() == "process_substitution" {
        return None;
    }
    let target = static_value(dest, src);
    // `>&2`, `<&0`, `>&-`: descriptor duplication, not a file.
    if op.ends_with('&') || op == ">&" || op == "<&" {
        if let Some(t) = &target {
            if t == "-" || t.chars().all(|ch| ch.is_ascii_digit()) {
                return None;
            }
        }
    }
    Some(Redirect { op, target })
}

/// The value of a word after quote removal, if it has no expansions.
fn static_value(n: Node, src: &str) -> Option<String> {
    let text = n.utf8_text(src.as_bytes()).ok()?;
    match n.kind() {
        "word" | "number" => {
            if text.contains(['*', '?', '[', '{', '$', '`']) {
                return None;
            }
            Some(unescape(text))
        }
        "raw_string" => Some(text.trim_matches('\'').to_string()),
        "string" => {
            let mut c = n.walk();
            let plain = n
                .named_children(&mut c)
                .all(|ch| ch.kind() == "string_content");
            if !plain {
                return None;
            }
            let inner = text.strip_prefix('"')?.strip_suffix('"')?;
            Some(unescape_dq(inner))
        }
        "concatenation" => {
            let mut c = n.walk();
            let mut s = String::new();
            for ch in n.named_children(&mut c) {
                s.push_str(&static_value(ch, src)?);
            }
            Some(s)
        }
        _ => None,
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_dq(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' && matches!(it.peek(), Some('$' | '`' | '"' | '\\')) {
            out.push(it.next().unwrap_or('\\'));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bashgate_analyzer::analyze;

    fn targets(cmd: &str) -> Vec<(String, Option<String>)> {
        let a = analyze(cmd);
        collect(cmd, &a)
            .unwrap()
            .into_iter()
            .map(|r| (r.op, r.target))
            .collect()
    }

    #[test]
    fn finds_static_and_dynamic_targets() {
        assert_eq!(
            targets("ls > /etc/x"),
            [(">".into(), Some("/etc/x".into()))]
        );
        assert_eq!(targets("cat < '.env'"), [("<".into(), Some(".env".into()))]);
        assert_eq!(targets("echo x >> \"$f\""), [(">>".into(), None)]);
        assert_eq!(
            targets("echo x 2>&1 >/dev/null"),
            [(">".into(), Some("/dev/null".into()))]
        );
        assert!(targets("echo '> /etc/x'").is_empty());
    }

    #[test]
    fn looks_inside_embedded_scripts() {
        let t = targets("bash -c 'cat .env > /tmp/x'");
        assert!(t.contains(&(">".into(), Some("/tmp/x".into()))), "{t:?}");
        let t = targets("eval 'echo hi > /etc/y'");
        assert!(t.contains(&(">".into(), Some("/etc/y".into()))), "{t:?}");
        let t = targets("echo $(cat < /etc/shadow)");
        assert!(
            t.contains(&("<".into(), Some("/etc/shadow".into()))),
            "{t:?}"
        );
    }
}
