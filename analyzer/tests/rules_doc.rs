//! docs/rules.md is generated from the rule registry and must be current;
//! every rule's examples must behave as the rule says.

use bashgate_analyzer::{analyze, rules, Verdict};

#[test]
fn rules_page_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.md");
    let want = rules::markdown();
    if std::env::var_os("UPDATE_RULES_DOC").is_some() {
        std::fs::write(path, &want).expect("docs/rules.md is writable");
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/rules.md is out of date: run `UPDATE_RULES_DOC=1 cargo test -p bashgate-analyzer --test rules_doc`"
    );
}

#[test]
fn every_example_triggers_its_rule_and_no_counter_example_does() {
    let mut wrong = Vec::new();
    for r in rules::RULES {
        // Limits are exercised by their own tests: their example is prose.
        if r.id == "BG303" {
            continue;
        }
        let hit = analyze(r.example);
        if !hit.findings.iter().any(|f| f.rule == r.rule) {
            wrong.push(format!(
                "{} example {:?} does not trigger it: {:?}",
                r.id, r.example, hit.findings
            ));
        }
        let miss = analyze(r.counter_example);
        if miss.findings.iter().any(|f| f.rule == r.rule) {
            wrong.push(format!(
                "{} counter-example {:?} triggers it",
                r.id, r.counter_example
            ));
        }
        if r.verdict > Verdict::Safe && hit.verdict < r.verdict {
            wrong.push(format!(
                "{} example {:?} is only {}",
                r.id, r.example, hit.verdict
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
