//! The hook engine of `spec/hooks.md` (owned by the hooks work).
