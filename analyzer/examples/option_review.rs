//! Checks the option review for the programs named (all local ones when
//! none are): `cargo run -p bashgate-analyzer --example option_review -- ls cp`.
//! The same check as `tests/option_review.rs`, one line per program.

#[path = "../tests/option_review/check.rs"]
mod check;

use bashgate_analyzer::catalog::{Catalog, Class};

fn main() {
    let catalog = Catalog::builtin();
    let builtins = check::bash_builtins();
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let mut bad = 0;
    for name in catalog.names() {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == name) {
            continue;
        }
        let Some(entry) = catalog.get(name) else {
            continue;
        };
        if entry.class != Class::Local || entry.alias.is_some() {
            continue;
        }
        match check::check(name, entry, &builtins) {
            check::Outcome::Reviewed { options } => {
                println!("ok      {name} ({options} options in its help)")
            }
            check::Outcome::NotChecked { why } => println!("skipped {name}: {why}"),
            check::Outcome::Unclassified { options } => {
                bad += 1;
                println!("MISSING {name}: {}", options.join(" "));
            }
        }
    }
    std::process::exit(i32::from(bad > 0));
}
