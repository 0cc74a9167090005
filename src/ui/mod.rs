//! Everything that reaches the terminal: the REPL, the outputs of `-p`, rendering of tool calls.
//! The only module allowed to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod mcp_dialogs;
pub mod output;
pub mod print;
pub mod render;
pub mod repl;
mod spinner;
pub mod style;
pub mod trust;
