//! Labeled corpus loading (to be written).
