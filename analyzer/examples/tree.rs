//! Prints tree-sitter-bash's syntax tree for a command, the raw material
//! the lowering starts from. Handy when bash and the grammar disagree.
//!
//! `cargo run -q -p bashgate-analyzer --example tree -- 'ls a | wc -l'`

fn main() {
    let src: String = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .expect("the bash grammar loads");
    let Some(tree) = parser.parse(&src, None) else {
        eprintln!("the parser gave up");
        std::process::exit(1);
    };
    print(tree.root_node(), &src, 0);
}

fn print(n: tree_sitter::Node, src: &str, depth: usize) {
    let text = src.get(n.byte_range()).unwrap_or("");
    println!(
        "{:indent$}{} [{}..{}] {:?}",
        "",
        n.kind(),
        n.start_byte(),
        n.end_byte(),
        if n.child_count() == 0 || text.len() < 40 {
            text
        } else {
            "…"
        },
        indent = depth * 2
    );
    let mut c = n.walk();
    for child in n.children(&mut c) {
        print(child, src, depth + 1);
    }
}
