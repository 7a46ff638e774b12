//! The host daemon's end-to-end suite again, with its state on PostgreSQL:
//! the same tests as `daemon_e2e.rs`, compiled into this binary, where
//! `Daemon::start` gives each daemon a fresh database on a throwaway
//! PostgreSQL server the harness starts (`bashgate_tests::postgres`).
#![cfg(feature = "postgres")]
// A test: an `unwrap` that fails is the test failing.
#![allow(clippy::unwrap_used)]

#[path = "daemon_e2e.rs"]
mod daemon_e2e;
