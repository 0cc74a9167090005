//! Everything that reaches the terminal: the REPL, the outputs of `-p`, rendering of tool calls.
//! Only [`output`] writes to stdout and stderr, and it takes [`term::Term`]s: text from outside
//! Ling is neutralised ([`safe_text`]) before Ling's own colours are added.

mod approval;
mod mcp_dialogs;
pub mod output;
pub mod print;
pub mod render;
pub mod repl;
pub mod safe_text;
mod spinner;
pub mod style;
pub mod term;
pub mod trust;
