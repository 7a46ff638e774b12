//! Redirects: the operator, the descriptor, and the target word (the words
//! tree-sitter folds into a redirect are given back to the command).

use tree_sitter::Node;

use crate::ir::{Redirect, RedirectTarget};
use crate::word::Word;

use super::{span, LoweredRedirects, Lowerer};

impl<'a> Lowerer<'a> {
    pub(super) fn redirect(&mut self, n: Node, depth: usize) -> LoweredRedirects {
        self.redirect_with(n, depth, &[])
    }

    /// A redirect whose target continues into `tail`, sibling word nodes
    /// that touch it.
    pub(super) fn redirect_with(
        &mut self,
        n: Node,
        depth: usize,
        tail: &[Node],
    ) -> LoweredRedirects {
        let mut out = LoweredRedirects {
            redirects: Vec::new(),
            trailing: Vec::new(),
            args: Vec::new(),
        };
        if self.deep(n, depth) {
            return out;
        }
        let depth = depth + 1;
        let fd = n
            .child_by_field_name("descriptor")
            .map(|d| self.text(d).to_string());
        match n.kind() {
            "file_redirect" => {
                let mut op = String::new();
                let mut target_nodes = Vec::new();
                let mut cursor = n.walk();
                for child in n.children(&mut cursor) {
                    if !child.is_named() {
                        if op.is_empty() {
                            op = child.kind().to_string();
                        }
                        continue;
                    }
                    if child.kind() == "file_descriptor" {
                        continue;
                    }
                    if child.is_error() {
                        // `<>` is not in the grammar: it leaves an ERROR
                        // where the operator's second half was.
                        let t = self.text(child);
                        if !t.is_empty() {
                            op.push_str(t);
                        }
                        continue;
                    }
                    target_nodes.push(child);
                }
                let variable = match target_nodes.as_slice() {
                    [one] if tail.is_empty() => whole_variable(self.text(*one)),
                    _ => None,
                };
                target_nodes.extend_from_slice(tail);
                // The first word is the target; the rest are the command's.
                // Closing a descriptor (`2>&-`, `<&-`) takes no word: every
                // one after it is the command's (`nice 2>&- 'diff'` runs
                // diff, F44).
                let closes = matches!(op.as_str(), ">&-" | "<&-");
                let mut groups = self.words(&target_nodes, depth).into_iter();
                let target = if closes { None } else { groups.next() };
                out.args.extend(groups);
                if let Some(target) = target {
                    out.redirects.push(Redirect {
                        span: span(n),
                        op: op.clone(),
                        fd: fd.clone(),
                        target: RedirectTarget::File(target),
                        variable,
                    });
                }
            }
            "herestring_redirect" => {
                let mut cursor = n.walk();
                let mut nodes: Vec<Node> = n
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "file_descriptor")
                    .collect();
                nodes.extend_from_slice(tail);
                let mut groups = self.words(&nodes, depth).into_iter();
                let target = groups.next().unwrap_or_else(|| Word {
                    span: span(n),
                    parts: vec![],
                    origin: None,
                });
                out.args.extend(groups);
                out.redirects.push(Redirect {
                    span: span(n),
                    op: "<<<".into(),
                    fd,
                    target: RedirectTarget::Herestring(target),
                    variable: None,
                });
            }
            "heredoc_redirect" => self.heredoc(n, fd, depth, &mut out),
            _ => {}
        }
        out
    }
}

/// The variable a word is made of and nothing else: `$f`, `${f}`, `"$f"`,
/// `"${f}"`.
fn whole_variable(text: &str) -> Option<String> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    let name = inner.strip_prefix('$')?;
    let name = name
        .strip_prefix('{')
        .and_then(|n| n.strip_suffix('}'))
        .unwrap_or(name);
    crate::word::is_identifier(name).then(|| name.to_string())
}
