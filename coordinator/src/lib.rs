//! Coordinator: runs, scheduling, storage, statistics and dashboard (later issues).
