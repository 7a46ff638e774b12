//! Evaluations: names that bash evaluates as arithmetic or tests (array
//! subscripts, `[[ -v ]]`, `${x@P}`, `for` variables), recorded so the
//! resolver can tell when a value set at run time becomes code.

use tree_sitter::Node;

use crate::word::runs_subscript;

use super::{is_identifier, span, ArithOutput, Lowerer};

impl<'a> Lowerer<'a> {
    /// Every variable named in an arithmetic expression, without recursion.
    pub(super) fn arith_names(&mut self, n: Node) {
        let mut stack = vec![n];
        let mut steps = 0;
        while let Some(node) = stack.pop() {
            steps += 1;
            if steps > 10_000 {
                break;
            }
            match node.kind() {
                "command_substitution" => {
                    let sole_program = self.sole_program(node);
                    self.arith_outputs.push(ArithOutput {
                        span: span(node),
                        sole_program,
                    });
                    continue;
                }
                "process_substitution" => continue,
                // `$1`, `$@`, `$_`: values from the arguments or from what
                // ran before, never proven to be numbers.
                "simple_expansion" => {
                    if let Some(inner) = node.named_child(0) {
                        let t = self.text(inner);
                        let from_data = match inner.kind() {
                            "special_variable_name" => matches!(t, "@" | "*" | "_" | "0"),
                            _ => t.bytes().all(|b| b.is_ascii_digit()),
                        };
                        if from_data || inner.kind() == "variable_name" {
                            self.arith_refs.push((format!("${t}"), span(node)));
                        }
                    }
                    continue;
                }
                "expansion" => {
                    self.expansion_in_arithmetic(node);
                    continue;
                }
                // A quoted string is read as part of the expression.
                "string" | "raw_string" | "ansi_c_string" | "translated_string" => {
                    let t = self.text(node);
                    if t.contains(['[', '$', '`']) {
                        self.arith_refs.push((t.to_string(), span(node)));
                    }
                    continue;
                }
                "variable_name" => {
                    self.arith_refs
                        .push((self.text(node).to_string(), span(node)));
                    continue;
                }
                "binary_expression" | "postfix_expression" | "unary_expression" => {
                    self.arith_assignment(node)
                }
                "word" => {
                    let t = self.text(node);
                    if is_identifier(t) {
                        self.arith_refs.push((t.to_string(), span(node)));
                    }
                    continue;
                }
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// An expansion inside arithmetic splices its text into the
    /// expression: `${x}` and `${a[i]}` splice a variable's value (`$x`
    /// in the list, judged in the resolver); `${#x}` is a number; an
    /// indirection or any operator (`${!x}`, `${x:-v}`, `${x/a/b}`) makes
    /// text no model follows, listed as it is written.
    fn expansion_in_arithmetic(&mut self, node: Node) {
        let mut cursor = node.walk();
        let kids: Vec<Node> = node.children(&mut cursor).collect();
        let inner: Vec<Node> = kids
            .into_iter()
            .filter(|k| !matches!(k.kind(), "${" | "}"))
            .collect();
        let spliced = |this: &mut Self, sub: Node| {
            if let Some(name) = sub.child_by_field_name("name") {
                let t = this.text(name).to_string();
                this.arith_refs.push((format!("${t}"), span(node)));
            }
            if let Some(index) = sub.child_by_field_name("index") {
                this.arith_names(index);
            }
        };
        match inner.as_slice() {
            [name] if name.kind() == "variable_name" => {
                let t = self.text(*name).to_string();
                self.arith_refs.push((format!("${t}"), span(node)));
            }
            [sub] if sub.kind() == "subscript" => spliced(self, *sub),
            [hash, name] if hash.kind() == "#" && name.kind() == "variable_name" => {}
            [hash, sub] if hash.kind() == "#" && sub.kind() == "subscript" => {
                if let Some(index) = sub.child_by_field_name("index") {
                    self.arith_names(index);
                }
            }
            _ => {
                let t = self.text(node).to_string();
                self.arith_refs.push((t, span(node)));
                // A substitution in it still runs, whatever the value.
                let mut c = node.walk();
                for k in node.named_children(&mut c) {
                    if k.kind() == "command_substitution" {
                        self.arith_names(k);
                    }
                }
            }
        }
    }

    /// `X=1`, `X+=1`, `X++`, `--X` in arithmetic: X is assigned.
    fn arith_assignment(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        let assigns = children.iter().any(|c| {
            !c.is_named()
                && matches!(
                    c.kind(),
                    "=" | "+="
                        | "-="
                        | "*="
                        | "/="
                        | "%="
                        | "<<="
                        | ">>="
                        | "&="
                        | "^="
                        | "|="
                        | "++"
                        | "--"
                )
        });
        if !assigns {
            return;
        }
        // The operand is the left side, or the only named child.
        if let Some(v) = children
            .iter()
            .find(|c| c.kind() == "variable_name" || c.kind() == "word")
        {
            let t = self.text(*v);
            if is_identifier(t) {
                self.assigned.push((t.to_string(), span(*v)));
            }
        }
    }

    /// The program of a substitution holding one simple command with only
    /// short options (`-l`) and input redirects from plain file names.
    pub(super) fn sole_program(&self, subst: Node) -> Option<String> {
        let mut cursor = subst.walk();
        let inner: Vec<Node> = subst.named_children(&mut cursor).collect();
        let [mut cmd] = inner.as_slice() else {
            return None;
        };
        let plain = |n: Node| {
            n.kind() == "word"
                && self
                    .text(n)
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
        };
        if cmd.kind() == "redirected_statement" {
            let mut c = cmd.walk();
            let parts: Vec<Node> = cmd.named_children(&mut c).collect();
            let (body, redirects) = parts.split_first()?;
            for r in redirects {
                let mut rc = r.walk();
                let kids: Vec<Node> = r.children(&mut rc).collect();
                match kids.as_slice() {
                    [op, target] if self.text(*op) == "<" && plain(*target) => {}
                    _ => return None,
                }
            }
            cmd = *body;
        }
        if cmd.kind() != "command" {
            return None;
        }
        let mut c = cmd.walk();
        let mut name = None;
        for part in cmd.named_children(&mut c) {
            match part.kind() {
                "command_name" if name.is_none() => {
                    let word = part.named_child(0)?;
                    if !plain(word) {
                        return None;
                    }
                    name = Some(self.text(word).to_string());
                }
                // Short options only: a long one (`--files0-from`) can put
                // file names into the output.
                "word"
                    if plain(part)
                        && self.text(part).starts_with('-')
                        && !self.text(part).starts_with("--") => {}
                _ => return None,
            }
        }
        name
    }

    /// `-v NAME` (in `[ ]` and `[[ ]]`) evaluates the name's subscript.
    pub(super) fn tested_names(&mut self, n: Node, depth: usize) {
        let mut stack = vec![n];
        while let Some(node) = stack.pop() {
            if node.kind() == "unary_expression" {
                let mut cursor = node.walk();
                let kids: Vec<Node> = node.named_children(&mut cursor).collect();
                if let [op, operand] = kids.as_slice() {
                    if op.kind() == "test_operator" && matches!(self.text(*op), "-v" | "-R") {
                        match self.word(*operand, depth).static_value() {
                            Some(v) if runs_subscript(&v) => {
                                self.subscript_tests.push(span(*operand))
                            }
                            Some(_) => {}
                            None => self.arith_names(*operand),
                        }
                        continue;
                    }
                }
            }
            if matches!(node.kind(), "command_substitution" | "process_substitution") {
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// `[[ a -eq b ]]` and kin evaluate both operands arithmetically.
    pub(super) fn arith_tests(&mut self, n: Node) {
        let mut stack = vec![n];
        while let Some(node) = stack.pop() {
            if node.kind() == "binary_expression" {
                let arithmetic = node
                    .child_by_field_name("operator")
                    .or_else(|| {
                        let mut c = node.walk();
                        let found = node
                            .named_children(&mut c)
                            .find(|c| c.kind() == "test_operator");
                        found
                    })
                    .is_some_and(|op| {
                        matches!(self.text(op), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")
                    });
                if arithmetic {
                    self.arith_names(node);
                    continue;
                }
            }
            if matches!(node.kind(), "command_substitution" | "process_substitution") {
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// `${a[i]}`, `${s:off:len}` and `${!x}` evaluate names; `${x@P}` runs
    /// substitutions held in the value.
    pub(super) fn expansion_evaluations(&mut self, n: Node) {
        let mut cursor = n.walk();
        let children: Vec<Node> = n.children(&mut cursor).collect();
        let mut seen_name = false;
        let mut after_colon = false;
        for (i, c) in children.iter().enumerate() {
            match c.kind() {
                "!" if !seen_name => {
                    if let Some(v) = children.get(i + 1).filter(|v| v.kind() == "variable_name") {
                        self.arith_refs.push((self.text(*v).to_string(), span(*v)));
                    }
                }
                "subscript" => {
                    if let Some(index) = c.child_by_field_name("index") {
                        self.arith_names(index);
                    }
                    if !seen_name
                        && children
                            .get(i + 1)
                            .is_some_and(|op| matches!(op.kind(), ":=" | "="))
                    {
                        if let Some(name) = c.child_by_field_name("name") {
                            let named = (self.text(name).to_string(), span(name));
                            self.assigned.push(named.clone());
                            self.defaulted.push(named);
                        }
                    }
                    seen_name = true;
                }
                "variable_name" if !seen_name => {
                    seen_name = true;
                    // `${X:=v}`, `${X=v}`: X is assigned when unset or empty.
                    if children
                        .get(i + 1)
                        .is_some_and(|op| matches!(op.kind(), ":=" | "="))
                    {
                        let named = (self.text(*c).to_string(), span(*c));
                        self.assigned.push(named.clone());
                        self.defaulted.push(named);
                    }
                }
                ":" => after_colon = true,
                "@" if children
                    .get(i + 1)
                    .is_some_and(|o| self.text(*o).contains('P')) =>
                {
                    self.prompt_expansions.push(span(n));
                }
                _ if after_colon && c.is_named() => self.arith_names(*c),
                _ => {}
            }
        }
    }

    /// `for x in WORDS`: the variable is dynamic unless every word is static.
    pub(super) fn loop_variable(&mut self, n: Node) {
        let Some(var) = n.child_by_field_name("variable") else {
            return;
        };
        let name = self.text(var).to_string();
        let mut cursor = n.walk();
        let values: Vec<Node> = n.children_by_field_name("value", &mut cursor).collect();
        // No `in` list iterates over "$@".
        let dynamic = values.is_empty()
            || values.iter().any(|v| {
                !matches!(v.kind(), "word" | "raw_string" | "number")
                    || self.text(*v).contains(['*', '?', '[', '$', '`', '{'])
            });
        // Every value a relative name, globbed or not (`*.txt`, `src/*`):
        // none can be `/dev/tcp/...`.
        let relative = !values.is_empty()
            && values.iter().all(|v| {
                let t = self.text(*v);
                v.kind() == "word"
                    && !t.starts_with(['/', '~', '\\'])
                    && !t.contains(['$', '`', '{', '\\'])
            });
        self.loop_vars.push(super::LoopVar {
            name,
            span: span(var),
            dynamic,
            relative,
        });
    }
}
