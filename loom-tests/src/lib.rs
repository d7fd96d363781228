//! Loom and shuttle tests of the threaded runtime (to come).
