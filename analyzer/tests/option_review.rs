//! Issue 14's review, kept honest: no program stays local in the catalog
//! without a reviewed option table, and no option its help lists (on a
//! machine where it is installed) is missing from that table.

#[path = "option_review/check.rs"]
mod check;

use bashgate_analyzer::catalog::{Catalog, Class};
use check::Outcome;

#[test]
fn every_local_program_has_a_reviewed_option_table_that_holds_its_help() {
    let catalog = Catalog::builtin();
    let builtins = check::bash_builtins();
    let mut problems = Vec::new();
    let (mut reviewed, mut listed, mut skipped) = (0, 0, Vec::new());
    for name in catalog.names() {
        let Some(entry) = catalog.get(name) else {
            continue;
        };
        if entry.class != Class::Local || entry.alias.is_some() {
            continue;
        }
        match check::check(name, entry, &builtins) {
            Outcome::Reviewed { options } => {
                reviewed += 1;
                listed += options;
            }
            Outcome::NotChecked { why } => skipped.push(format!("{name}: {why}")),
            Outcome::Unclassified { options } => {
                problems.push(format!("{name}: {}", options.join(" ")))
            }
        }
    }
    eprintln!(
        "{reviewed} local programs' help ({listed} options) checked against their tables; not checked here: {}",
        skipped.join("; ")
    );
    assert!(
        problems.is_empty(),
        "options nobody reviewed (add each to the program's table in analyzer/options/, and to its escapes if it runs code, reaches the network or writes):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_help_reader_finds_option_spellings_and_skips_placeholders() {
    let help = "Usage: x [OPTION]...\n  -a, --all        do not ignore\n      --color[=WHEN]  colour\n  -I, --ignore=PATTERN  skip\n  -NUM   lines\n      --[no-]fork  fork\nThe -z text in prose is not read.\n";
    let found: Vec<String> = check::options_in_help(help).into_iter().collect();
    assert_eq!(
        found,
        [
            "--all",
            "--color",
            "--fork",
            "--ignore",
            "--no-fork",
            "-I",
            "-a"
        ]
    );
}
