//! The host daemon's end-to-end suite again, with its state on PostgreSQL:
//! the same tests as `daemon_e2e.rs`, compiled into this binary, where
//! `Daemon::start` gives each daemon a fresh database on a throwaway
//! PostgreSQL server the harness starts (`bashgate_tests::postgres`).
#![cfg(feature = "postgres")]

#[path = "daemon_e2e.rs"]
mod daemon_e2e;
