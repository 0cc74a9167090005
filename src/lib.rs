//! Ling: a coding agent in the terminal for any OpenAI-compatible chat-completions endpoint.
//!
//! Dependencies point one way, each module using only modules of the layers below it:
//! `cli` → `acp`, `serve` → `ui` → `setup` → `agent` → `permissions`, `rpc` → `tools`, `hooks`,
//! `mcp`, `llm` (peers, none using another) → `process`, `checkpoint`, `web` → `log`,
//! `http_client`, `sse`, `pending`, `media` → `config`, `redact`.
//! `scripts/module-graph.sh` prints the graph and fails on an edge that runs back up. `setup`
//! assembles the run every frontend drives (the REPL and `ling -p` in `ui`, `ling acp` in `acp`,
//! `ling mcp serve` in `serve`, the last two over `rpc`'s JSON-RPC on stdio); `cli` maps how they
//! end to exit codes; `tools`, `hooks` and `mcp` start their child processes through `process`.
//! Library code never prints; only `ui::output` writes to stdout and stderr, and it neutralises
//! text from outside Ling on the way (`ui::safe_text`).
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

pub mod agent;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod error_chain;
pub mod front;
pub mod hooks;
pub mod http_client;
pub mod llm;
pub mod log;
pub mod mcp;
pub mod media;
pub mod pending;
pub mod permissions;
pub mod process;
pub mod redact;
pub mod rpc;
pub mod session;
pub mod setup;
pub mod sse;
pub mod telemetry;
pub mod tools;
pub mod trust;
pub mod ui;
pub mod web;

#[cfg(test)]
mod test_support;

pub use cli::{Exit, run};
