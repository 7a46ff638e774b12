//! What a command does to the machine besides printing. A command is
//! read-only when it is `safe` (every program that runs is known and local)
//! and every program is one the catalog lists in `read_only_programs` (it
//! writes no file, deletes nothing, changes no permission or owner and
//! signals no process, whatever its options), and its redirects write
//! nowhere but the terminal or `/dev/null`.

use crate::analysis::Analysis;
use crate::catalog::Catalog;
use crate::verdict::Verdict;

/// Where a redirect may write and stay read-only.
const HARMLESS_SINKS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

impl Analysis {
    /// Whether the command only reads and prints (see the module docs),
    /// judged with the built-in catalog.
    pub fn read_only(&self) -> bool {
        self.read_only_with(Catalog::builtin())
    }

    pub fn read_only_with(&self, catalog: &Catalog) -> bool {
        self.verdict == Verdict::Safe
            && !self.invocations.is_empty()
            && self.invocations.iter().all(|inv| {
                inv.via.is_empty()
                    && inv.program.as_deref().is_some_and(|p| {
                        !p.contains('/') && catalog.read_only_programs.iter().any(|r| r == p)
                    })
            })
            && self.redirects.iter().all(|r| {
                !r.writes()
                    || r.target
                        .as_deref()
                        .is_some_and(|t| HARMLESS_SINKS.contains(&t))
            })
    }
}

#[cfg(test)]
mod tests {
    use crate::analyze;

    #[test]
    fn only_printing_commands_are_read_only() {
        for c in [
            "ls -la",
            "cat README.md | grep -n foo | head -5",
            "rg -n TODO src/ 2>/dev/null",
            "wc -l < Cargo.toml",
            "echo hi 2>&1",
            "git_log=1; echo $git_log",
        ] {
            assert!(analyze(c).read_only(), "{c}");
        }
        for c in [
            "touch x",
            "echo hi > notes.txt",
            "cat a >> b",
            "sort -o out in",
            "rm -f x",
            "ls; rm x",
            "git status",
            "sudo ls",
            "env ls",
            "bash -c 'ls'",
            "xargs ls",
            "./ls",
            "cat $(touch x)",
            "curl https://example.com",
            "$cmd",
            "echo x 1<> f",
            "",
        ] {
            assert!(!analyze(c).read_only(), "{c}");
        }
    }

    #[test]
    fn every_read_only_program_is_a_local_tool_in_the_catalog() {
        let c = crate::Catalog::builtin();
        for p in &c.read_only_programs {
            let e = c
                .get(p)
                .unwrap_or_else(|| panic!("`{p}` is not in the catalog"));
            assert_eq!(e.class, crate::catalog::Class::Local, "{p}");
        }
    }
}
