//! The built-in tables (`gate/data/*.toml`), as JSON converted by build.rs:
//! one constant per file, named for it (`DESTRUCTIVE` is destructive.toml).

include!(concat!(env!("OUT_DIR"), "/data_tables.rs"));

/// Parses a built-in table. They are checked by the tests that use them, so
/// a table that does not fit its type is a build defect, not an input error.
pub fn parse<T: serde::de::DeserializeOwned>(json: &str, file: &str) -> T {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("gate/data/{file}.toml: {e}"))
}
