//! Helpers shared by the integration suites: the real `ling` binary in a temp project
//! ([`project`]), a scripted model speaking chat completions, Anthropic Messages and OpenAI Responses
//! ([`mock_openai`], [`mock_wire`]), the peer programs
//! ([`peers`]), process checks ([`process`]), a stream-json session driven line by line
//! ([`stream_json`]), and per-area helpers for hooks, MCP and the SQLite server.

pub mod acp;
pub mod chat_history;
pub mod hooks;
pub mod hooks_e2e;
pub mod mcp;
pub mod mcphttp;
pub mod mock_http;
pub mod mock_images;
pub mod mock_openai;
pub mod mock_overflow;
pub mod mock_rules;
pub mod mock_wire;
pub mod oauth;
pub mod peers;
pub mod process;
pub mod project;
pub mod repl;
pub mod serve;
pub mod stream_json;
pub mod web_server;
