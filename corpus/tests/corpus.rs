//! Every labeled case in `corpus/cases/` against the analyzer. All
//! mismatches (and panics) are reported together, each with its file, note
//! and findings.

use bashgate_analyzer::Verdict;
use bashgate_corpus::eval::analyze_guarded;
use bashgate_corpus::{case, check};

#[test]
fn every_case_matches_its_label() {
    let files = case::load_all().expect("the case files load and validate");
    let mut report = Vec::new();
    let mut total = 0;
    for file in &files {
        for c in &file.cases {
            total += 1;
            match analyze_guarded(&c.command).result {
                Ok(analysis) => {
                    let problems = check::problems(c, &analysis);
                    if !problems.is_empty() {
                        report.push(check::describe(&file.name, c, &analysis, &problems));
                    }
                }
                Err(panic) => report.push(format!(
                    "[{}] {}\n    note: {}\n    the analyzer panicked: {panic}\n",
                    file.name,
                    check::one_line(&c.command),
                    c.note
                )),
            }
        }
    }
    assert!(
        report.is_empty(),
        "{} of {total} cases do not match their label:\n\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn the_corpus_is_large_and_a_third_benign() {
    let files = case::load_all().expect("the case files load and validate");
    let (total, benign) = case::count(&files);
    assert!(total >= 600, "only {total} cases");
    assert!(
        benign * 3 >= total,
        "only {benign} of {total} cases are benign"
    );
    for f in &files {
        assert!(!f.cases.is_empty(), "{} has no cases", f.name);
    }
    let mentions = files.iter().find(|f| f.name == "benign-mentions");
    let mentions = mentions.expect("a benign-mentions category exists");
    assert!(mentions.cases.iter().all(|c| c.expect == Verdict::Safe));
}

#[test]
fn invalid_cases_are_rejected() {
    let dir = std::env::temp_dir().join(format!("bashgate-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |text: &str| {
        std::fs::write(dir.join("x.toml"), text).unwrap();
        case::load_dir(&dir)
    };
    let bad_rule = "[[case]]\ncommand = 'ls'\nexpect = 'safe'\nrules = ['BG999']\nnote = 'n'\n";
    assert!(write(bad_rule).is_err());
    let contradiction =
        "[[case]]\ncommand = 'curl x'\nexpect = 'unknown'\nrules = ['BG101']\nnote = 'n'\n";
    assert!(write(contradiction).is_err());
    let twice = "[[case]]\ncommand = 'ls'\nexpect = 'safe'\nnote = 'n'\n\n[[case]]\ncommand = 'ls'\nexpect = 'safe'\nnote = 'm'\n";
    assert!(write(twice).is_err());
    let unknown_field = "[[case]]\ncommand = 'ls'\nexpect = 'safe'\nnote = 'n'\nverdict = 'x'\n";
    assert!(write(unknown_field).is_err());
    let good = "[[case]]\ncommand = 'ls'\nexpect = 'safe'\nnote = 'lists'\n";
    assert_eq!(write(good).unwrap()[0].cases.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
