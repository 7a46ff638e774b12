//! What the quick suite (`cargo test --workspace --no-default-features`)
//! leaves out, said where its output shows it: each test here passes and
//! prints which tests did not run and what they need.

// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

#[cfg(not(feature = "postgres"))]
#[test]
fn left_out_needs_postgresql() {
    println!(
        "left out: daemon_fleet and daemon_e2e_postgres need PostgreSQL (the full suite: cargo test --workspace, or .ci/run)"
    );
}

#[cfg(not(feature = "namespaces"))]
#[test]
fn left_out_needs_network_namespaces() {
    println!(
        "left out: oracle, script_oracle and rewrite_roundtrip need network namespaces (unshare) and the programs .ci/oracle-programs.sh installs"
    );
}

/// With every feature on, nothing is left out.
#[cfg(all(feature = "postgres", feature = "namespaces"))]
#[test]
fn nothing_is_left_out() {}
