//! Converts catalog.toml to JSON at build time: the catalog stays a TOML file
//! people edit, and the binary parses JSON at start-up, which is several
//! times faster (the hook runs once per command, so start-up matters).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=catalog.toml");
    let text = std::fs::read_to_string("catalog.toml").expect("analyzer/catalog.toml is readable");
    let value: toml::Value = match toml::from_str(&text) {
        Ok(v) => v,
        Err(e) => panic!("analyzer/catalog.toml is not valid TOML: {e}"),
    };
    let json = serde_json::to_string(&value).expect("a TOML value converts to JSON");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("catalog.json"), json).expect("OUT_DIR is writable");
}
