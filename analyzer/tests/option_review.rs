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

/// Every option the catalog names for a program with a reviewed table
/// (in its escapes, output options, modes, deletions, `local_with` and
/// directory options) is one its table holds, spelled as the table spells
/// it: a name nobody reviewed, or a typo, would match nothing the reader
/// returns, and the rule it carries would never fire.
#[test]
fn options_the_catalog_names_are_in_their_programs_tables() {
    use bashgate_analyzer::catalog::OptionSyntax;
    let catalog = Catalog::builtin();
    let mut missing = Vec::new();
    for name in catalog.names() {
        let Some(entry) = catalog.get(name) else {
            continue;
        };
        let Some(table) = &entry.options else {
            continue;
        };
        if table.syntax == OptionSyntax::Operands {
            continue;
        }
        let holds = |option: &str| -> bool {
            if let Some(long) = option.strip_prefix("--") {
                let long = long.split('=').next().unwrap_or(long);
                return table
                    .long
                    .iter()
                    .chain(&table.long_value)
                    .chain(&table.long_optional)
                    .any(|o| o == long);
            }
            let Some(body) = option.strip_prefix('-') else {
                return true;
            };
            if table.syntax == OptionSyntax::SingleDash {
                let named = table
                    .long
                    .iter()
                    .chain(&table.long_value)
                    .chain(&table.long_optional)
                    .any(|o| o == body);
                if named || body.chars().count() > 1 {
                    return named;
                }
            }
            let mut letters = body.chars();
            match (letters.next(), letters.next()) {
                (Some(c), None) => {
                    table.short.contains(c)
                        || table.short_value.contains(c)
                        || table.short_optional.contains(c)
                }
                // A cluster or a value-bearing spelling (`-W exec`): each
                // letter must exist.
                _ => body.chars().all(|c| {
                    table.short.contains(c)
                        || table.short_value.contains(c)
                        || table.short_optional.contains(c)
                }),
            }
        };
        let mut named: Vec<String> = Vec::new();
        for esc in entry.escapes.iter().chain(&entry.default_escape) {
            named.extend(esc.long.iter().map(|l| format!("--{l}")));
            named.extend(esc.short.iter().map(|s| format!("-{s}")));
            named.extend(esc.unless_dir.iter().cloned());
        }
        named.extend(entry.output_options.iter().cloned());
        named.extend(entry.output_read_modes.iter().cloned());
        named.extend(entry.local_with.iter().cloned());
        named.extend(entry.chdir_options.iter().cloned());
        named.extend(
            entry
                .destructive
                .iter()
                .filter(|d| d.starts_with('-'))
                .cloned(),
        );
        named.extend(entry.modes.iter().flatten().cloned());
        for option in named {
            if !holds(&option) {
                missing.push(format!("{name}: {option}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "options the catalog names that their program's table does not hold:\n{}",
        missing.join("\n")
    );
}
