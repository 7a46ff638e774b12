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
    let text = std::fs::read_to_string("catalog.toml").expect("analyzer/catalog.toml is readable");
    let value: toml::Value = match toml::from_str(&text) {
        Ok(v) => v,
        Err(e) => panic!("analyzer/catalog.toml is not valid TOML: {e}"),
    };
    if let Some(programs) = value.get("programs").and_then(toml::Value::as_table) {
        for (name, entry) in programs {
            if let Err(e) = entry.clone().try_into::<schema::Entry>() {
                panic!("analyzer/catalog.toml: [programs.{name}]: {e}");
            }
        }
    }
    let json = serde_json::to_string(&value).expect("a TOML value converts to JSON");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("catalog.json"), json).expect("OUT_DIR is writable");
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
    std::fs::write(out.join("persistence.rs"), consts).expect("OUT_DIR is writable");
}
