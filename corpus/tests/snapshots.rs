//! Pins the full analysis of every case, one snapshot per category file.
//! A behaviour change shows as a diff in `tests/snapshots/`; review it with
//! `cargo insta review` (or accept with `INSTA_UPDATE=always`). With
//! `CI=true` a mismatched or missing snapshot fails the test.

use bashgate_corpus::eval::analyze_guarded;
use bashgate_corpus::{case, render};

#[test]
fn every_category_matches_its_snapshot() {
    let files = case::load_all().expect("the case files load and validate");
    let mut failed = Vec::new();
    for file in &files {
        let items: Vec<_> = file
            .cases
            .iter()
            .map(|c| (c, analyze_guarded(&c.command).result))
            .collect();
        let text = render::cases(&items);
        // Check every file before failing so one run shows every diff.
        let result = std::panic::catch_unwind(|| {
            insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
                insta::assert_snapshot!(file.name.as_str(), text);
            });
        });
        if result.is_err() {
            failed.push(file.name.clone());
        }
    }
    assert!(failed.is_empty(), "snapshots differ: {}", failed.join(", "));
}
