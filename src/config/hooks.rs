//! Raw and resolved forms of `hooks.json` (owned by the hooks work).
