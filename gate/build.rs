//! Converts the gate's built-in tables (`data/*.toml`) to JSON at build
//! time: they stay TOML files people edit, and the hook, which starts once
//! per command, parses JSON, several times faster than TOML. The program
//! names the destructive rules are about are listed as well.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=data");
    let mut files: Vec<PathBuf> = std::fs::read_dir("data")
        .expect("gate/data is readable")
        .map(|e| e.expect("gate/data lists").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut consts = String::new();
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).expect("a data file is readable");
        let value: toml::Value = match toml::from_str(&text) {
            Ok(v) => v,
            Err(e) => panic!("gate/{}: {e}", path.display()),
        };
        let json = serde_json::to_string(&value).expect("a TOML value converts to JSON");
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 name");
        let name = stem.to_uppercase();
        writeln!(consts, "/// gate/data/{stem}.toml as JSON.")
            .expect("writing to a String cannot fail");
        writeln!(consts, "pub const {name}: &str = {json:?};")
            .expect("writing to a String cannot fail");
        if stem == "destructive" {
            rule_names(&value, &mut consts);
        }
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("data_tables.rs"), consts).expect("OUT_DIR is writable");
}

/// The programs and program prefixes the destructive rules name, so that a
/// command naming none of them is passed without parsing the table.
fn rule_names(table: &toml::Value, consts: &mut String) {
    for (key, name) in [
        ("programs", "DESTRUCTIVE_PROGRAMS"),
        ("program_prefixes", "DESTRUCTIVE_PROGRAM_PREFIXES"),
    ] {
        let mut names: Vec<&str> = ["rule", "code"]
            .iter()
            .flat_map(|t| {
                table[*t]
                    .as_array()
                    .expect("destructive.toml has [[rule]]s and [[code]]s")
            })
            .filter_map(|r| r.get(key).and_then(toml::Value::as_array))
            .flatten()
            .map(|n| n.as_str().expect("program names are strings"))
            .collect();
        names.sort_unstable();
        names.dedup();
        writeln!(consts, "/// Every rule's `{key}` in destructive.toml.")
            .expect("writing to a String cannot fail");
        writeln!(consts, "pub const {name}: &[&str] = &{names:?};")
            .expect("writing to a String cannot fail");
    }
}
