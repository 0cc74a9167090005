//! The integration tests of `ling-sqlite-mcp`, one test binary: the server driven in raw JSON-RPC
//! over its stdio (`protocol`), its read-only guarantees and timeout (`readonly`), and the
//! official MCP Inspector as an independent client (`inspector`).

mod inspector;
mod protocol;
mod readonly;
mod support;
