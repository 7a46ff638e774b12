//! The per-set sections of the report: the own corpus with its lists of
//! mismatches, and each external set with its table, escapes, misses,
//! reviewed exceptions and coverage.

use std::fmt::Write;

use super::{md_code, ratio};
use crate::eval::{Evaluation, Mix, Note, SetResult, Stats};
use crate::external::{Kind, Lift};
use crate::tally::Tally;

/// How many entries the "most common" lists show.
const TOP: usize = 25;

pub(super) fn own(out: &mut String, set: &SetResult) {
    let s = &set.stats;
    let _ = writeln!(out, "## Own corpus\n");
    let _ = writeln!(
        out,
        "{} cases in {} categories, {} of them benign ({}). Mismatches with the \
         labels: **{}**.\n",
        s.records,
        s.groups.len(),
        s.benign,
        Stats::percent(s.benign, s.records),
        s.mismatches.len()
    );
    let _ = writeln!(
        out,
        "| category | cases | safe | unknown | network | mismatches |"
    );
    let _ = writeln!(out, "|---|--:|--:|--:|--:|--:|");
    for (g, m) in &s.groups {
        let bad = s.mismatches.iter().filter(|n| &n.group == g).count();
        let _ = writeln!(
            out,
            "| {g} | {} | {} | {} | {} | {bad} |",
            m.total(),
            m.safe,
            m.unknown,
            m.network
        );
    }
    let _ = writeln!(out);
    own_list(out, "Escapes (labeled not safe, classed safe)", &s.escapes);
    own_list(
        out,
        "Network misses (labeled network, classed otherwise)",
        &s.network_misses,
    );
    own_list(
        out,
        "Friction (labeled safe, classed otherwise)",
        &s.friction,
    );
    let other: Vec<Note> = s
        .mismatches
        .iter()
        .filter(|n| {
            !s.escapes.contains(n) && !s.network_misses.contains(n) && !s.friction.contains(n)
        })
        .cloned()
        .collect();
    own_list(
        out,
        "Other mismatches (labeled unknown, classed network)",
        &other,
    );
    panics(out, s);
}

fn own_list(out: &mut String, title: &str, notes: &[Note]) {
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}: {}\n", notes.len());
    for n in notes {
        let _ = writeln!(
            out,
            "- `{}` #{}: `{}` → {}",
            n.group,
            n.line,
            md_code(&n.detail),
            n.got.map_or("panic", |v| v.as_str())
        );
    }
    let _ = writeln!(out);
}

pub(super) fn external(out: &mut String, set: &SetResult, ev: &Evaluation) {
    let Some(spec) = set.spec else { return };
    let s = &set.stats;
    let _ = writeln!(out, "## {} (`{}`)\n", spec.title, spec.file);
    let _ = writeln!(out, "{} ({}).\n", spec.source, spec.license);
    let _ = writeln!(
        out,
        "{} records; parsed cleanly {}; safe {}, unknown {}, network {}.\n",
        s.records,
        Stats::percent(s.parse_clean, s.records),
        s.mix.safe,
        s.mix.unknown,
        s.mix.network
    );
    match spec.kind {
        Kind::Gtfobins | Kind::GtfobinsLegacy => {
            group_table(out, "function", s, |g| g.to_string());
        }
        Kind::Revshells => {
            group_table(out, "section", s, |g| {
                g.split(" > ").next().unwrap_or(g).to_string()
            });
        }
        Kind::Payloads => {
            group_table(out, "form", s, |g| g.to_string());
        }
        Kind::Tldr | Kind::Nl2bash => coverage(out, s, spec.kind),
        Kind::TsBash => {
            let _ = writeln!(
                out,
                "Inputs tree-sitter-bash parses without error: {} parsed cleanly here too. \
                 Inputs with errors, which must not be `safe`: {} of {} were.\n",
                ratio(s.parse_expected - s.parse_misses.len(), s.parse_expected),
                s.escapes.len(),
                s.never_safe
            );
            notes(
                out,
                "Expected to parse cleanly but did not",
                &s.parse_misses,
            );
        }
        Kind::Aliases => {
            let _ = writeln!(
                out,
                "Alias pairs classed alike when run bare: {} of {}.\n",
                s.alias_pairs - s.alias_differs.len(),
                s.alias_pairs
            );
            for n in &s.alias_differs {
                let _ = writeln!(out, "- line {}: {}", n.line, n.detail);
            }
            if !s.alias_differs.is_empty() {
                let _ = writeln!(out);
            }
        }
    }
    if s.never_safe > 0 {
        let _ = writeln!(
            out,
            "Escapes: **{} of {}**. Network recall: {}.\n",
            s.escapes.len(),
            s.never_safe,
            ratio(
                s.network_expected - s.network_misses.len(),
                s.network_expected
            )
        );
    }
    notes(out, "Escapes", &s.escapes);
    notes(out, "Network misses", &s.network_misses);
    reviewed(out, spec.file, ev);
    panics(out, s);
}

fn group_table(out: &mut String, what: &str, s: &Stats, key: impl Fn(&str) -> String) {
    let mut merged: Vec<(String, Mix)> = Vec::new();
    for (g, m) in &s.groups {
        let k = key(g);
        match merged.iter_mut().find(|(name, _)| *name == k) {
            Some((_, acc)) => {
                acc.safe += m.safe;
                acc.unknown += m.unknown;
                acc.network += m.network;
            }
            None => merged.push((k, *m)),
        }
    }
    merged.sort_by(|a, b| a.0.cmp(&b.0));
    let _ = writeln!(out, "| {what} | records | safe | unknown | network |");
    let _ = writeln!(out, "|---|--:|--:|--:|--:|");
    for (k, m) in merged {
        let _ = writeln!(
            out,
            "| {k} | {} | {} | {} | {} |",
            m.total(),
            m.safe,
            m.unknown,
            m.network
        );
    }
    let _ = writeln!(out);
}

fn coverage(out: &mut String, s: &Stats, kind: Kind) {
    if kind == Kind::Tldr {
        let pages = s.groups.len();
        let all_safe = s.groups.values().filter(|m| m.safe == m.total()).count();
        let any_net = s.groups.values().filter(|m| m.network > 0).count();
        let _ = writeln!(
            out,
            "{pages} pages: every example `safe` on {all_safe}, some example `network` on {any_net}.\n"
        );
    } else {
        let _ = writeln!(
            out,
            "Records marked as duplicates of earlier ones are left out.\n"
        );
    }
    top(
        out,
        "Most common reasons for `unknown` (records per rule)",
        &named_rules(&s.unknown_rules),
    );
    top(
        out,
        "Programs not known to be local (BG201), by records",
        &s.missing_programs,
    );
    top(
        out,
        "All programs in `unknown` records (git, make, sudo... included)",
        &s.unknown_programs,
    );
    top(
        out,
        "Most common programs in `network` records",
        &s.network_programs,
    );
}

/// Rule ids with their names: `BG201 unknown-program`.
fn named_rules(t: &Tally) -> Tally {
    let mut named = Tally::default();
    for (id, n) in t.top(usize::MAX) {
        let name = bashgate_analyzer::rules::lookup(id).map_or("", |r| r.name);
        named.add_n(&format!("{id} {name}"), n);
    }
    named
}

fn top(out: &mut String, title: &str, t: &Tally) {
    if t.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}:\n");
    let items: Vec<String> = t
        .top(TOP)
        .into_iter()
        .map(|(k, n)| format!("`{}` {n}", md_code(k)))
        .collect();
    let _ = writeln!(out, "{}\n", items.join(", "));
}

fn notes(out: &mut String, title: &str, notes: &[Note]) {
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title} ({}):\n", notes.len());
    for n in notes {
        let name = if n.name.is_empty() {
            String::new()
        } else {
            format!("`{}` ", md_code(&n.name))
        };
        let _ = writeln!(
            out,
            "- line {}: {name}{} → {}",
            n.line,
            md_code(&n.group),
            n.got.map_or("panic", |v| v.as_str())
        );
    }
    let _ = writeln!(out);
}

fn reviewed(out: &mut String, file: &str, ev: &Evaluation) {
    let list: Vec<_> = ev.reviewed.for_file(file).collect();
    if list.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Reviewed exceptions (`corpus/external/reviewed.toml`), {}:\n",
        list.len()
    );
    for e in list {
        let lift = match e.lift {
            Lift::NeverSafe => "may be safe",
            Lift::Network => "not counted for recall",
        };
        let _ = writeln!(out, "- line {} ({}), {lift}: {}", e.line, e.group, e.reason);
    }
    let _ = writeln!(out);
}

fn panics(out: &mut String, s: &Stats) {
    if s.panics.is_empty() {
        return;
    }
    let _ = writeln!(out, "Panics ({}):\n", s.panics.len());
    for n in &s.panics {
        let _ = writeln!(
            out,
            "- line {} ({}): {}",
            n.line,
            n.group,
            md_code(&n.detail)
        );
    }
    let _ = writeln!(out);
}
