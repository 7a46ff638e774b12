//! The external command sets in `$BASHGATE_EXTERNAL_CORPORA` and what
//! each record is expected to be, per the corpora README.
//!
//! Nothing from these files is copied into the project: they are read at
//! evaluation time, and reports name records by file and line.

mod decode;
mod load;
mod reviewed;

use std::path::Path;

use bashgate_analyzer::Verdict;

pub use decode::{html_unescape, percent_decode};
pub use load::{load, LoadError};
pub use reviewed::{Lift, Reviewed};

/// How a set's records are read and labeled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// GTFOBins, current layout: `code` labeled by `function`.
    Gtfobins,
    /// GTFOBins, old layout: old function names, `sudo`/`./` prefixes.
    GtfobinsLegacy,
    /// GTFOBins binaries that are aliases of others.
    Aliases,
    /// PayloadsAllTheThings cheat sheets: `command` labeled by `section`.
    Revshells,
    /// Injection fuzz payloads, some URL- or HTML-encoded: no label.
    Payloads,
    /// tldr-pages examples: no label, one `page` per program.
    Tldr,
    /// NL2Bash one-liners: no label.
    Nl2bash,
    /// tree-sitter-bash's test inputs, labeled by whether they parse.
    TsBash,
}

/// One external set.
#[derive(Debug)]
pub struct SetSpec {
    pub file: &'static str,
    pub title: &'static str,
    pub source: &'static str,
    pub license: &'static str,
    pub kind: Kind,
}

/// Every external set, in report order.
pub const SETS: &[SetSpec] = &[
    SetSpec {
        file: "gtfobins.jsonl",
        title: "GTFOBins",
        source: "GTFOBins/GTFOBins.github.io at 7382261e",
        license: "GPL-3.0",
        kind: Kind::Gtfobins,
    },
    SetSpec {
        file: "gtfobins_legacy.jsonl",
        title: "GTFOBins (old layout)",
        source: "GTFOBins/GTFOBins.github.io at b2f22e1f",
        license: "GPL-3.0",
        kind: Kind::GtfobinsLegacy,
    },
    SetSpec {
        file: "gtfobins_aliases.jsonl",
        title: "GTFOBins aliases",
        source: "GTFOBins/GTFOBins.github.io",
        license: "GPL-3.0",
        kind: Kind::Aliases,
    },
    SetSpec {
        file: "revshells.jsonl",
        title: "Reverse-shell and injection cheat sheets",
        source: "swisskyrepo/PayloadsAllTheThings (05f441ac, c852118e, f9fa5141)",
        license: "MIT",
        kind: Kind::Revshells,
    },
    SetSpec {
        file: "cmdinj_payloads.jsonl",
        title: "Command-injection payloads",
        source: "swisskyrepo/PayloadsAllTheThings fuzz lists (f9fa5141)",
        license: "MIT",
        kind: Kind::Payloads,
    },
    SetSpec {
        file: "tldr.jsonl",
        title: "tldr-pages",
        source: "tldr-pages/tldr at 08e345f4, by tldr-pages contributors",
        license: "CC-BY-4.0",
        kind: Kind::Tldr,
    },
    SetSpec {
        file: "nl2bash.jsonl",
        title: "NL2Bash",
        source: "TellinaTool/nl2bash at 466c5fe8",
        license: "MIT (Copyright (c) 2020 NL2Bash dataset)",
        kind: Kind::Nl2bash,
    },
    SetSpec {
        file: "tsbash_corpus.jsonl",
        title: "tree-sitter-bash test inputs",
        source: "tree-sitter/tree-sitter-bash at a06c2e44",
        license: "MIT (c) 2017 Max Brunsfeld",
        kind: Kind::TsBash,
    },
];

/// What a record is expected to be. All false: no expectation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expect {
    /// Reaches the network or runs code we cannot see: never `safe`.
    pub never_safe: bool,
    /// Reaches the network by definition: should be `network`.
    pub network: bool,
    /// Parses without error in tree-sitter-bash.
    pub parse_clean: bool,
    /// Exactly this verdict (the project's own labeled cases).
    pub exact: Option<Verdict>,
}

/// One command to analyze.
#[derive(Debug, Clone)]
pub struct Record {
    /// 1-based line in the set's file.
    pub line: usize,
    /// Function, section, page or test file: what the record is grouped by.
    pub group: String,
    /// The program the record is about (GTFOBins' binary, tldr's page), or
    /// empty.
    pub name: String,
    pub command: String,
    pub expect: Expect,
    /// For aliases: the program this one is an alias of.
    pub alias_of: Option<String>,
}

/// GTFOBins functions (current layout) that run code or reach the network.
const GTFO_NEVER_SAFE: &[&str] = &[
    "reverse-shell",
    "bind-shell",
    "upload",
    "download",
    "shell",
    "command",
    "library-load",
    "privilege-escalation",
];
const GTFO_NETWORK: &[&str] = &["reverse-shell", "bind-shell", "upload", "download"];

/// The same, with the old layout's names.
const LEGACY_NEVER_SAFE: &[&str] = &[
    "reverse-shell",
    "non-interactive-reverse-shell",
    "bind-shell",
    "non-interactive-bind-shell",
    "file-upload",
    "file-download",
    "shell",
    "command",
    "library-load",
];
const LEGACY_NETWORK: &[&str] = &[
    "reverse-shell",
    "non-interactive-reverse-shell",
    "bind-shell",
    "non-interactive-bind-shell",
    "file-upload",
    "file-download",
];

/// Cheat-sheet sections whose records are never `safe`.
const REVSHELL_NEVER_SAFE: &[&str] = &[
    "Reverse Shell",
    "Socat",
    "Netcat",
    "Perl",
    "Python",
    "PHP",
    "Ruby",
    "Meterpreter",
    "Data Exfiltration",
];
/// The reverse- and bind-shell sections: each record opens a connection.
/// (Meterpreter sections only generate payload files; data exfiltration
/// by timing uses no connection of its own.)
const REVSHELL_NETWORK: &[&str] = &[
    "Reverse Shell",
    "Socat",
    "Netcat",
    "Perl",
    "Python",
    "PHP",
    "Ruby",
];

/// The expectation for a record of `kind` in `group`.
pub fn expectation(kind: Kind, group: &str) -> Expect {
    let starts = |list: &[&str]| list.iter().any(|p| group.starts_with(p));
    match kind {
        Kind::Gtfobins => Expect {
            never_safe: GTFO_NEVER_SAFE.contains(&group),
            network: GTFO_NETWORK.contains(&group),
            ..Expect::default()
        },
        Kind::GtfobinsLegacy => Expect {
            never_safe: LEGACY_NEVER_SAFE.contains(&group),
            network: LEGACY_NETWORK.contains(&group),
            ..Expect::default()
        },
        Kind::Revshells => Expect {
            never_safe: starts(REVSHELL_NEVER_SAFE),
            network: starts(REVSHELL_NETWORK),
            ..Expect::default()
        },
        Kind::Aliases | Kind::Payloads | Kind::Tldr | Kind::Nl2bash | Kind::TsBash => {
            Expect::default()
        }
    }
}

/// Loads one set and applies the reviewed exceptions to its records.
pub fn load_set(dir: &Path, spec: &SetSpec, reviewed: &Reviewed) -> Result<Vec<Record>, LoadError> {
    let mut records = load(&dir.join(spec.file), spec.kind)?;
    reviewed
        .apply(spec.file, &mut records)
        .map_err(LoadError::Reviewed)?;
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtfobins_functions_are_labeled() {
        let e = expectation(Kind::Gtfobins, "reverse-shell");
        assert!(e.never_safe && e.network);
        let e = expectation(Kind::Gtfobins, "shell");
        assert!(e.never_safe && !e.network);
        assert_eq!(expectation(Kind::Gtfobins, "file-read"), Expect::default());
        let e = expectation(Kind::GtfobinsLegacy, "non-interactive-bind-shell");
        assert!(e.never_safe && e.network);
        assert_eq!(expectation(Kind::GtfobinsLegacy, "sudo"), Expect::default());
    }

    #[test]
    fn revshell_sections_are_labeled_by_prefix() {
        let e = expectation(Kind::Revshells, "Reverse Shell > Bash TCP");
        assert!(e.never_safe && e.network);
        let e = expectation(Kind::Revshells, "Meterpreter Shell > Other platforms");
        assert!(e.never_safe && !e.network);
        let e = expectation(Kind::Revshells, "Filter Bypasses > Bypass With $()");
        assert_eq!(e, Expect::default());
    }
}
