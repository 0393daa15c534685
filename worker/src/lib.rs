//! Game runner and worker loop (filled in by the worker issue).
