//! Converts catalog.toml to JSON at build time: the catalog stays a TOML file
//! people edit, and the binary parses JSON at start-up, which is several
//! times faster (the hook runs once per command, so start-up matters).
//!
//! Every program entry is also checked here with the analyzer's own entry
//! types (`src/catalog_schema.rs`), so a misspelt field or value fails the
//! build instead of silently changing what a program is taken to do.

use std::path::PathBuf;

#[allow(dead_code)]
#[path = "src/catalog_schema.rs"]
mod schema;

fn main() {
    println!("cargo:rerun-if-changed=catalog.toml");
    println!("cargo:rerun-if-changed=src/catalog_schema.rs");
    println!("cargo:rerun-if-changed=options");
    let text = std::fs::read_to_string("catalog.toml").expect("analyzer/catalog.toml is readable");
    let mut value: toml::Value = match toml::from_str(&text) {
        Ok(v) => v,
        Err(e) => panic!("analyzer/catalog.toml is not valid TOML: {e}"),
    };
    merge_option_tables(&mut value);
    if let Some(programs) = value.get("programs").and_then(toml::Value::as_table) {
        for (name, entry) in programs {
            if let Err(e) = entry.clone().try_into::<schema::Entry>() {
                panic!("analyzer/catalog.toml: [programs.{name}]: {e}");
            }
        }
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // The program entries as one text and a sorted index into it of
    // (name start, entry start, entry end): looking a name up is a binary
    // search, only the entries a command names are ever parsed, and the
    // index is plain numbers, so the loader relocates nothing for it.
    let mut lists = value.clone();
    let programs = lists
        .as_table_mut()
        .and_then(|t| t.remove("programs"))
        .and_then(|p| p.as_table().cloned())
        .expect("catalog.toml has [programs]");
    let mut sorted: Vec<(&String, &toml::Value)> = programs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut text = String::new();
    let mut index = String::from("pub static INDEX: &[(u32, u32, u32)] = &[\n");
    for (name, entry) in sorted {
        let json = serde_json::to_string(entry).expect("a TOML value converts to JSON");
        let at = text.len();
        text.push_str(name);
        let entry_at = text.len();
        text.push_str(&json);
        index.push_str(&format!("    ({at}, {entry_at}, {}),\n", text.len()));
    }
    index.push_str("];\n");
    index.push_str(&format!("pub static TEXT: &str = {text:?};\n"));
    std::fs::write(out.join("catalog_programs.rs"), index).expect("OUT_DIR is writable");
    let json = serde_json::to_string(&lists).expect("a TOML value converts to JSON");
    std::fs::write(out.join("catalog_lists.json"), json).expect("OUT_DIR is writable");
    // The persistence lists also as constants: the fence needs them on
    // every run and nothing else of the catalog.
    let mut consts = String::new();
    for (key, name) in [
        ("persistence_files", "PERSISTENCE_FILES"),
        ("persistence_dirs", "PERSISTENCE_DIRS"),
    ] {
        let items: Vec<&str> = value
            .get(key)
            .and_then(toml::Value::as_array)
            .map(|a| a.iter().filter_map(toml::Value::as_str).collect())
            .unwrap_or_default();
        consts.push_str(&format!("pub const {name}: &[&str] = &{items:?};\n"));
    }
    // The control places' names with their kinds, for the fence too.
    let control: Vec<(&str, &str)> = value
        .get("places")
        .and_then(|p| p.get("control"))
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| Some((c.get("name")?.as_str()?, c.get("kind")?.as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    consts.push_str(&format!(
        "pub const CONTROL_PLACES: &[(&str, &str)] = &{control:?};\n"
    ));
    std::fs::write(out.join("persistence.rs"), consts).expect("OUT_DIR is writable");
}

/// Puts each reviewed option table (`options/*.toml`, one table per program,
/// or `same_as = "other"` for a program that parses like another) into its
/// program's entry as `options`. A table for a program the catalog does not
/// list fails the build.
fn merge_option_tables(catalog: &mut toml::Value) {
    let mut files: Vec<PathBuf> = std::fs::read_dir("options")
        .expect("analyzer/options is readable")
        .map(|e| e.expect("analyzer/options lists").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut tables: Vec<(String, String, toml::Value)> = Vec::new();
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).expect("an option file is readable");
        let file: toml::Table = match toml::from_str(&text) {
            Ok(t) => t,
            Err(e) => panic!("analyzer/{}: {e}", path.display()),
        };
        for (name, table) in file {
            tables.push((path.display().to_string(), name, table));
        }
    }
    let resolved: Vec<(String, String, toml::Value)> = tables
        .iter()
        .map(|(file, name, table)| {
            let table = match table.get("same_as").and_then(toml::Value::as_str) {
                Some(other) => match tables.iter().find(|(_, n, _)| n == other) {
                    Some((_, _, t)) if t.get("same_as").is_none() => t.clone(),
                    _ => panic!("analyzer/{file}: [{name}] same_as `{other}`, which has no table of its own"),
                },
                None => table.clone(),
            };
            (file.clone(), name.clone(), table)
        })
        .collect();
    let programs = catalog
        .get_mut("programs")
        .and_then(toml::Value::as_table_mut)
        .expect("catalog.toml has [programs]");
    for (file, name, table) in resolved {
        if let Err(e) = table.clone().try_into::<schema::OptionTable>() {
            panic!("analyzer/{file}: [{name}]: {e}");
        }
        let Some(entry) = programs.get_mut(&name).and_then(toml::Value::as_table_mut) else {
            panic!("analyzer/{file}: [{name}] is not a program in catalog.toml");
        };
        if entry.insert("options".into(), table).is_some() {
            panic!("analyzer/{file}: [{name}] has two option tables");
        }
    }
}
