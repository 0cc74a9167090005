//! Permission rules and modes of `spec/tools.md` (owned by the tools work).
