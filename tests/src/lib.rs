//! Shared helpers for end-to-end tests (to be written).
