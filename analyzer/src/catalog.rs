//! The catalog: what each program can do, kept as data.
//!
//! `catalog.toml` (compiled in) lists programs by name with a class and,
//! for local tools, the arguments that void their locality. Wrappers list
//! their own options so the program they run can be found.
//!
//! A library caller may build a catalog from its own TOML
//! ([`Catalog::from_toml`]), add or replace entries of one
//! ([`Catalog::extend_from_toml`]) and analyze with it
//! ([`crate::analyze_with`]). bashgate's configuration has no such setting:
//! the gate always analyzes with the built-in catalog ([`Catalog::builtin`]).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::places::Places;

// The entry types are shared with build.rs, which checks every entry of
// catalog.toml with them when the analyzer is built.
#[path = "catalog_schema.rs"]
mod schema;
pub use schema::{
    Class, Entry, Escape, EscapeVerdict, OptionSyntax, OptionTable, Removes, ScriptLang, Special,
    Writes,
};

/// A catalog file as written (TOML, or the built-in one converted to JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    #[serde(default)]
    system_dirs: Vec<String>,
    #[serde(default)]
    dangerous_variables: Vec<String>,
    #[serde(default)]
    dangerous_variable_prefixes: Vec<String>,
    #[serde(default)]
    harmless_values: BTreeMap<String, Vec<String>>,
    /// Files whose writing changes what later commands run.
    #[serde(default)]
    persistence_files: Vec<String>,
    /// Directories whose writing changes what later commands run.
    #[serde(default)]
    persistence_dirs: Vec<String>,
    /// Programs that only print.
    #[serde(default)]
    read_only_programs: Vec<String>,
    #[serde(default)]
    harmless_variables: Vec<String>,
    #[serde(default)]
    set_by_bash: Vec<String>,
    #[serde(default)]
    harmless_variable_prefixes: Vec<String>,
    #[serde(default)]
    shell_builtins: Vec<String>,
    #[serde(default)]
    places: Places,
    #[serde(default)]
    programs: BTreeMap<String, Entry>,
}

/// The built-in catalog's lists; its program entries are in
/// [`builtin_programs`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BuiltinLists {
    system_dirs: Vec<String>,
    dangerous_variables: Vec<String>,
    dangerous_variable_prefixes: Vec<String>,
    #[serde(default)]
    harmless_values: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    persistence_files: Vec<String>,
    #[serde(default)]
    persistence_dirs: Vec<String>,
    #[serde(default)]
    read_only_programs: Vec<String>,
    #[serde(default)]
    harmless_variables: Vec<String>,
    #[serde(default)]
    set_by_bash: Vec<String>,
    #[serde(default)]
    harmless_variable_prefixes: Vec<String>,
    #[serde(default)]
    shell_builtins: Vec<String>,
    places: Places,
}

/// The built-in program entries, sorted by name, each as its JSON text
/// (written by build.rs). An entry is parsed when first looked up, so a
/// command pays only for the programs it names.
mod builtin_programs {
    include!(concat!(env!("OUT_DIR"), "/catalog_programs.rs"));

    /// Entry `i`: its name and its JSON.
    pub fn get(i: usize) -> (&'static str, &'static str) {
        let (at, entry_at, end) = INDEX[i];
        (
            &TEXT[at as usize..entry_at as usize],
            &TEXT[entry_at as usize..end as usize],
        )
    }
}

#[derive(Debug, Clone)]
pub struct Catalog {
    /// Directories whose programs count as the tool of that name.
    pub system_dirs: Vec<String>,
    /// Variables that change which code runs.
    pub dangerous_variables: Vec<String>,
    /// Prefixes of such variables (`LD_`, `BASH_FUNC_`).
    pub dangerous_variable_prefixes: Vec<String>,
    /// Values that make a dangerous variable harmless (`PAGER=cat`).
    pub harmless_values: BTreeMap<String, Vec<String>>,
    /// Files whose writing changes what later commands run.
    pub persistence_files: Vec<String>,
    /// Directories whose writing changes what later commands run.
    pub persistence_dirs: Vec<String>,
    /// Programs that write, delete, change permissions and signal nothing,
    /// whatever their options: they only print.
    pub read_only_programs: Vec<String>,
    /// Environment variables no program reads as code or configuration
    /// (locale, time zone, colour, terminal size): any program may be given
    /// them. Any other variable a command puts in a program's environment
    /// must be declared harmless by that program's entry (`harmless_env`).
    pub harmless_variables: Vec<String>,
    pub harmless_variable_prefixes: Vec<String>,
    /// Variables bash itself gives a value that is not a number (what a
    /// command read, matched or ran); arithmetic on them is not proven.
    pub set_by_bash: Vec<String>,
    /// Builtins: they run in the shell and start no program, so their
    /// environment is the shell's own (checked by `dangerous_variables`).
    pub shell_builtins: Vec<String>,
    /// Where a write is proven: the work and the scratch places, less the
    /// control places ([`crate::places`]).
    pub places: Places,
    /// Entries parsed up front: a TOML catalog's, or those added with
    /// [`Catalog::extend_from_toml`], which take precedence over built-in
    /// entries of the same name.
    programs: BTreeMap<String, Entry>,
    /// The built-in entries, parsed when first looked up: slot `i` holds
    /// `builtin_programs::get(i)` once parsed (empty for a catalog
    /// built from TOML, which has no built-in entries).
    builtin: Box<[OnceLock<Option<Box<Entry>>>]>,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("catalog is not valid TOML or has an unknown key: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("catalog entry `{name}`: {problem}")]
    Entry { name: String, problem: String },
}

/// Whether `dir` appears in `arg` as a whole path component (`.git` in
/// `a/.git/x` or `-t.git`, not in `.gitignore`).
fn contains_component(arg: &str, dir: &str) -> bool {
    arg.match_indices(dir).any(|(i, _)| {
        let after = arg[i + dir.len()..].chars().next();
        matches!(after, None | Some('/'))
    })
}

/// Where a name sits in the built-in table, by binary search.
fn builtin_index(name: &str) -> Option<usize> {
    let index = builtin_programs::INDEX;
    let found = index.binary_search_by(|&(at, entry_at, _)| {
        builtin_programs::TEXT[at as usize..entry_at as usize].cmp(name)
    });
    found.ok()
}

/// The built-in catalog's `persistence_files` and `persistence_dirs`, and
/// its control places' names with their kinds (`[places] control`), as
/// constants for callers that need only them (the fence, on every run).
pub mod persistence {
    include!(concat!(env!("OUT_DIR"), "/persistence.rs"));
}

/// catalog.toml's lists (everything but the program entries), converted to
/// JSON by build.rs.
const BUILTIN_LISTS: &str = include_str!(concat!(env!("OUT_DIR"), "/catalog_lists.json"));

impl Catalog {
    /// The catalog compiled into the analyzer.
    pub fn builtin() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            let lists: BuiltinLists = serde_json::from_str(BUILTIN_LISTS)
                .expect("the built-in catalog.toml is valid (checked by tests)");
            Catalog {
                system_dirs: lists.system_dirs,
                dangerous_variables: lists.dangerous_variables,
                dangerous_variable_prefixes: lists.dangerous_variable_prefixes,
                harmless_values: lists.harmless_values,
                persistence_files: lists.persistence_files,
                persistence_dirs: lists.persistence_dirs,
                read_only_programs: lists.read_only_programs,
                harmless_variables: lists.harmless_variables,
                set_by_bash: lists.set_by_bash,
                harmless_variable_prefixes: lists.harmless_variable_prefixes,
                shell_builtins: lists.shell_builtins,
                places: lists.places,
                programs: BTreeMap::new(),
                builtin: builtin_programs::INDEX
                    .iter()
                    .map(|_| OnceLock::new())
                    .collect(),
            }
        })
    }

    pub fn from_toml(text: &str) -> Result<Catalog, CatalogError> {
        let file: CatalogFile = toml::from_str(text)?;
        let catalog = Catalog {
            system_dirs: file.system_dirs,
            dangerous_variables: file.dangerous_variables,
            dangerous_variable_prefixes: file.dangerous_variable_prefixes,
            harmless_values: file.harmless_values,
            persistence_files: file.persistence_files,
            persistence_dirs: file.persistence_dirs,
            read_only_programs: file.read_only_programs,
            harmless_variables: file.harmless_variables,
            set_by_bash: file.set_by_bash,
            harmless_variable_prefixes: file.harmless_variable_prefixes,
            shell_builtins: file.shell_builtins,
            places: file.places,
            programs: file.programs,
            builtin: Box::default(),
        };
        catalog.validate()?;
        Ok(catalog)
    }

    /// Adds or replaces entries and lists from another catalog text.
    pub fn extend_from_toml(&mut self, text: &str) -> Result<(), CatalogError> {
        let more: CatalogFile = toml::from_str(text)?;
        self.system_dirs.extend(more.system_dirs);
        self.dangerous_variables.extend(more.dangerous_variables);
        self.dangerous_variable_prefixes
            .extend(more.dangerous_variable_prefixes);
        for (name, values) in more.harmless_values {
            self.harmless_values.entry(name).or_default().extend(values);
        }
        self.persistence_files.extend(more.persistence_files);
        self.persistence_dirs.extend(more.persistence_dirs);
        self.read_only_programs.extend(more.read_only_programs);
        self.harmless_variables.extend(more.harmless_variables);
        self.set_by_bash.extend(more.set_by_bash);
        self.harmless_variable_prefixes
            .extend(more.harmless_variable_prefixes);
        self.shell_builtins.extend(more.shell_builtins);
        let places = &mut self.places;
        places.scratch.extend(more.places.scratch);
        places.sinks.extend(more.places.sinks);
        places.ordinary_hidden.extend(more.places.ordinary_hidden);
        places.control.extend(more.places.control);
        self.programs.extend(more.programs);
        self.validate()
    }

    fn validate(&self) -> Result<(), CatalogError> {
        for (name, e) in &self.programs {
            let bad = |problem: &str| CatalogError::Entry {
                name: name.clone(),
                problem: problem.into(),
            };
            if let Some(target) = &e.alias {
                match self.entry(target).map(|(_, t)| t) {
                    None => {
                        return Err(bad(&format!(
                            "alias of `{target}`, which is not in the catalog"
                        )))
                    }
                    Some(t) if t.alias.is_some() => return Err(bad("alias of an alias")),
                    _ => {}
                }
            }
            for esc in &e.escapes {
                let forms = [&esc.long, &esc.short, &esc.word, &esc.prefix, &esc.contains];
                if forms.iter().filter(|f| f.is_some()).count() != 1 {
                    return Err(bad(
                        "each escape needs exactly one of long, short, word, prefix, contains",
                    ));
                }
            }
            if e.class == Class::Wrapper
                && e.special.is_none()
                && e.flags.is_empty()
                && e.options_with_value.is_empty()
            {
                // A wrapper with no options at all is fine (nohup), but say so.
            }
        }
        Ok(())
    }

    /// One entry by its exact name: one parsed up front (from TOML) first,
    /// then the built-in one.
    fn entry<'a>(&'a self, name: &str) -> Option<(&'a str, &'a Entry)> {
        if let Some((k, e)) = self.programs.get_key_value(name) {
            return Some((k.as_str(), e));
        }
        let i = builtin_index(name)?;
        let slot = self.builtin.get(i)?;
        let (key, json) = builtin_programs::get(i);
        let parsed = slot.get_or_init(|| serde_json::from_str(json).ok().map(Box::new));
        parsed.as_deref().map(|e| (key, e))
    }

    /// A program's own entry by its exact name (no versions, no aliases).
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entry(name).map(|(_, e)| e)
    }

    /// Every entry, by name.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.names().into_iter().filter_map(|n| self.entry(n))
    }

    /// Every program name in the catalog.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.programs.keys().map(String::as_str).collect();
        if !self.builtin.is_empty() {
            names.extend(
                (0..builtin_programs::INDEX.len())
                    .map(|i| builtin_programs::get(i).0)
                    .filter(|k| !self.programs.contains_key(*k)),
            );
        }
        names.sort_unstable();
        names
    }

    /// Finds a program's entry, following versioned names and aliases.
    /// Returns the canonical name with it.
    pub fn lookup<'a>(&'a self, name: &str) -> Option<(&'a str, &'a Entry)> {
        let (key, entry) = match self.entry(name) {
            Some(kv) => kv,
            None => {
                let base = strip_version(name)?;
                let (k, e) = self.entry(base)?;
                if !e.versioned {
                    return None;
                }
                (k, e)
            }
        };
        match &entry.alias {
            Some(target) => self.entry(target),
            None => Some((key, entry)),
        }
    }

    /// Whether `program` may be given `name` in its environment: declared
    /// harmless globally or by its entry, and not dangerous.
    pub fn is_harmless_variable(&self, name: &str, entry: Option<&Entry>) -> bool {
        !self.is_dangerous_variable(name)
            && (self.harmless_variables.iter().any(|v| v == name)
                || self
                    .harmless_variable_prefixes
                    .iter()
                    .any(|p| name.starts_with(p.as_str()))
                || entry.is_some_and(|e| e.harmless_env.iter().any(|v| v == name || v == "*")))
    }

    /// The protected place an argument names, if any: a persistence path
    /// (`.bashrc`, `.git/hooks`, `/etc/profile.d`) or the hidden directory
    /// one starts with (`.git`, `.ssh`, `.config`), found anywhere in it.
    pub fn names_protected_place<'a>(&'a self, arg: &str) -> Option<&'a str> {
        // Most arguments (`-la`, `main`) hold neither; no entry holding
        // one can then be in it (this skips most of the searching).
        let plain = !arg.contains(['.', '/']);
        for entry in self.persistence_files.iter().chain(&self.persistence_dirs) {
            let rel = entry.strip_prefix("~/").unwrap_or(entry);
            // `~/bin` is home's bin, not every `bin`: matched as written.
            let whole =
                if entry.starts_with("~/") || rel.starts_with("etc/") || rel.starts_with("var/") {
                    &entry[..]
                } else {
                    rel
                };
            // `first` below starts with `.` whenever it is searched for.
            if plain && whole.contains(['.', '/']) {
                continue;
            }
            let first = rel.split('/').next().unwrap_or(rel);
            // (The length test first: setting up a substring search costs
            // more than most arguments are long.)
            if whole.len() <= arg.len() && arg.contains(whole) {
                return Some(whole);
            }
            if first.starts_with('.') && first.len() > 1 && contains_component(arg, first) {
                return Some(first);
            }
        }
        None
    }

    pub fn is_shell_builtin(&self, name: &str) -> bool {
        self.shell_builtins.iter().any(|b| b == name)
    }

    /// Whether assigning `value` (`None`: known only at run time) to
    /// `name` changes which code runs: a dangerous variable, unless the
    /// value is one its entry in `harmless_values` lists.
    pub fn is_dangerous_assignment(&self, name: &str, value: Option<&str>) -> bool {
        self.is_dangerous_variable(name)
            && !value.is_some_and(|v| {
                self.harmless_values
                    .get(name)
                    .is_some_and(|vs| vs.iter().any(|h| h == v))
            })
    }

    pub fn is_dangerous_variable(&self, name: &str) -> bool {
        self.dangerous_variables.iter().any(|v| v == name)
            || self
                .dangerous_variable_prefixes
                .iter()
                .any(|p| name.starts_with(p.as_str()))
    }

    /// Where writing `path` would change what later commands run: a system
    /// directory, a directory on a usual PATH, a shell startup file, git
    /// hooks and config... `path` may hold `*` for parts only known at run
    /// time (`$HOME/.bashrc` is `*/.bashrc`). Returns what it matched.
    pub fn persistence_target(&self, path: &str) -> Option<String> {
        let mut p = path.to_string();
        while p.contains("//") || p.contains("/./") {
            p = p.replace("//", "/").replace("/./", "/");
        }
        let p = p.trim_end_matches('/');
        if self.in_system_dir(p) || self.system_dirs.iter().any(|d| d == p) {
            return Some(p.to_string());
        }
        // Without allocating: this runs for every written path.
        let tail = |t: &str| {
            p.strip_suffix(t)
                .is_some_and(|before| before.is_empty() || before.ends_with('/'))
        };
        let under = |d: &str| p.strip_prefix(d).is_some_and(|r| r.starts_with('/'));
        let inside = |d: &str| {
            p.match_indices(d)
                .any(|(i, _)| p[..i].ends_with('/') && p[i + d.len()..].starts_with('/'))
        };
        if let Some(f) = self
            .persistence_files
            .iter()
            .find(|f| tail(f.trim_start_matches('/')))
        {
            return Some(f.clone());
        }
        self.persistence_dirs
            .iter()
            .find(|d| {
                if d.starts_with("~/") || d.starts_with('/') {
                    p == d.as_str() || under(d)
                } else {
                    tail(d) || under(d) || inside(d)
                }
            })
            .cloned()
    }

    /// Whether a path lies inside one of the system directories.
    pub fn in_system_dir(&self, path: &str) -> bool {
        let mut norm = path.to_string();
        while norm.contains("//") || norm.contains("/./") {
            norm = norm.replace("//", "/").replace("/./", "/");
        }
        self.system_dirs
            .iter()
            .any(|d| norm == *d || norm.starts_with(&format!("{d}/")))
    }

    /// `/usr/bin/curl` → `curl`; `None` for any other path.
    pub fn system_program<'n>(&self, path: &'n str) -> Option<&'n str> {
        let (dir, base) = path.rsplit_once('/')?;
        let dir = if dir.is_empty() { "/" } else { dir };
        if base.is_empty() || base == "." || base == ".." {
            return None;
        }
        self.system_dirs.iter().any(|d| d == dir).then_some(base)
    }
}

/// `python3.11` → `python`, `pip3` → `pip`, `gcc-12` → `gcc`.
fn strip_version(name: &str) -> Option<&str> {
    let base =
        name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == '_');
    (base.len() < name.len() && !base.is_empty()).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_is_the_toml_file() {
        let from_toml = Catalog::from_toml(include_str!("../catalog.toml")).unwrap();
        let builtin = Catalog::builtin();
        assert_eq!(from_toml.names(), builtin.names());
        // Every lazily parsed entry parses, and to the same thing.
        for name in builtin.names() {
            let (_, lazy) = builtin
                .entry(name)
                .unwrap_or_else(|| panic!("`{name}` does not parse"));
            let (_, eager) = from_toml.entry(name).unwrap();
            // The option tables come from analyzer/options/, merged by build.rs.
            let mut lazy = lazy.clone();
            lazy.options = None;
            assert_eq!(format!("{lazy:?}"), format!("{eager:?}"), "{name}");
        }
    }

    #[test]
    fn builtin_catalog_loads() {
        let c = Catalog::builtin();
        assert!(c.names().len() > 100);
        assert_eq!(
            c.lookup("cat").map(|(n, e)| (n, e.class)),
            Some(("cat", Class::Local))
        );
    }

    #[test]
    fn versions_and_aliases() {
        let c = Catalog::builtin();
        assert_eq!(c.lookup("python3.11").map(|(n, _)| n), Some("python"));
        assert_eq!(c.lookup("python3").map(|(n, _)| n), Some("python"));
        assert_eq!(c.lookup("gawk").map(|(n, _)| n), Some("awk"));
        // Only entries marked versioned match a stripped name.
        assert!(c.lookup("cat2").is_none());
        assert_eq!(c.lookup("base64").map(|(n, _)| n), Some("base64"));
    }

    #[test]
    fn persistence_targets() {
        let c = Catalog::builtin();
        for p in [
            "~/.bashrc",
            "*/.bashrc",
            ".bashrc",
            "/root/.profile",
            "~/.local/bin/ls",
            "*/.local/bin/",
            ".git/hooks/pre-commit",
            "repo/.git/config",
            "~/.ssh/config",
            "/etc/profile.d/x.sh",
            "~/bin/ls",
            "/usr/bin/ls",
            "//usr/./local/bin/x",
            "/etc/cron.d/job",
        ] {
            assert!(c.persistence_target(p).is_some(), "{p}");
        }
        for p in [
            "out.txt",
            "src/bin/main.rs",
            "build/bin/tool",
            "notes/.bashrc.bak",
            "*",
            "/tmp/x",
            "./ls",
        ] {
            assert_eq!(c.persistence_target(p), None, "{p}");
        }
    }

    #[test]
    fn system_paths() {
        let c = Catalog::builtin();
        assert_eq!(c.system_program("/usr/bin/curl"), Some("curl"));
        assert_eq!(c.system_program("/bin/sh"), Some("sh"));
        assert_eq!(c.system_program("./curl"), None);
        assert_eq!(c.system_program("bin/grep"), None);
        assert_eq!(c.system_program("/tmp/cat"), None);
    }

    #[test]
    fn bad_entries_are_refused() {
        let err = Catalog::from_toml("[programs.x]\nclass = \"local\"\nbogus = 1\n").unwrap_err();
        assert!(err.to_string().contains("bogus"), "{err}");
        let err =
            Catalog::from_toml("[programs.x]\nclass = \"local\"\nalias = \"nope\"\n").unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn user_extension_replaces_entries() {
        let mut c = Catalog::builtin().clone();
        c.extend_from_toml("[programs.mytool]\nclass = \"local\"\n")
            .unwrap();
        assert_eq!(c.lookup("mytool").map(|(_, e)| e.class), Some(Class::Local));
    }

    #[test]
    fn misspelt_values_are_rejected() {
        for bad in [
            "[programs.x]\nclass = \"wrapper\"\nspecial = \"xarg\"\n",
            "[programs.x]\nclass = \"local\"\nscript = \"perl\"\n",
            "[programs.x]\nclass = \"local\"\nwrites = \"third\"\n",
            "[programs.x]\nclass = \"local\"\nescapes = [{ long = \"y\", verdict = \"netwrk\", why = \"z\" }]\n",
            "[programs.x]\nclass = \"lokal\"\n",
            "[programs.x]\nclass = \"local\"\nspecail = \"find\"\n",
        ] {
            assert!(Catalog::from_toml(bad).is_err(), "{bad}");
        }
        let good = "[programs.x]\nclass = \"wrapper\"\nspecial = \"xargs\"\n";
        assert_eq!(
            Catalog::from_toml(good)
                .unwrap()
                .get("x")
                .and_then(|e| e.special),
            Some(Special::Xargs)
        );
    }

    #[test]
    fn the_persistence_constants_are_the_builtin_catalogs_lists() {
        let c = Catalog::builtin();
        assert!(!c.persistence_files.is_empty() && !c.persistence_dirs.is_empty());
        assert_eq!(c.persistence_files, super::persistence::PERSISTENCE_FILES);
        assert_eq!(c.persistence_dirs, super::persistence::PERSISTENCE_DIRS);
    }
}
