//! Ling: a coding agent in the terminal for any OpenAI-compatible chat-completions endpoint.
//!
//! Dependencies point one way: `cli`/`ui` → `agent` → `llm`, `tools`, `hooks`, `mcp` → `config`;
//! `tools`, `hooks` and `mcp` start their child processes through `process` (→ `config`).
//! Library code never prints; only `ui::output` writes to stdout and stderr, and it neutralises
//! text from outside Ling on the way (`ui::safe_text`).
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

pub mod agent;
pub mod cli;
pub mod config;
pub mod hooks;
pub mod http_client;
pub mod llm;
pub mod log;
pub mod mcp;
pub mod permissions;
pub mod process;
pub mod redact;
pub mod run;
pub mod tools;
pub mod ui;

pub use cli::{Exit, run};
