//! The integration tests of `ling-sqlite-mcp`, one test binary: the server driven in raw JSON-RPC
//! over its stdio (`protocol`), its read-only guarantees and timeout (`readonly`), and the
//! official MCP Inspector as an independent client (`inspector`).

// `unwrap` and `expect` are how a test fails; clippy.toml's `allow-*-in-tests` covers only
// `#[test]` functions, not the helpers around them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod inspector;
mod limits;
mod protocol;
mod readonly;
mod support;
