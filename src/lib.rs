//! Ling: a coding agent in the terminal for any OpenAI-compatible chat-completions endpoint.
//!
//! Dependencies point one way, each module using only modules of the layers below it:
//! `cli` → `front` → `ui` → `session` → `setup` → `agent`, `trust` → `permissions`, `rpc` →
//! `tools`, `hooks`, `mcp`, `llm` (peers, none using another) → `process`, `checkpoint`, `web` →
//! `log`, `http_client`, `error_chain`, `sse`, `pending`, `media` → `config`, `redact`.
//! `scripts/module-graph.sh` prints the graph and fails on an edge that runs back up. The five
//! front ends (the REPL, `ling -p`, Claude Code's stream-json session, `ling acp`, `ling mcp
//! serve`) each drive one running session through the session host, which alone assembles a run
//! with `setup`; the command line maps how they end to exit codes; `tools`, `hooks` and `mcp`
//! start their child processes through `process`.
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
pub mod program;
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
