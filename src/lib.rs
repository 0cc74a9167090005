//! Ling: a coding agent in the terminal for any OpenAI-compatible chat-completions endpoint.
//!
//! Dependencies point one way: `cli`/`ui` → `agent` → `llm`, `tools`, `hooks`, `mcp` → `config`.
//! Library code never prints; only `ui` (and the `cli` entry points that hand output to it) do.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod cli;
pub mod config;
pub mod hooks;
pub mod http_client;
pub mod llm;
pub mod log;
pub mod mcp;
pub mod permissions;
pub mod redact;
pub mod tools;
pub mod ui;

pub use cli::{Exit, run};
