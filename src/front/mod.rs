//! The five front ends, each translating its wire into the session host's commands
//! (`crate::session`): the REPL ([`repl`]), `ling -p` ([`mod@print`]), Claude Code's stream-json
//! session for programs such as the Agent SDK ([`claude`]), the Agent Client Protocol for editors
//! ([`acp`]) and `ling mcp serve` ([`serve`]). The terminal plumbing they share (markdown,
//! rendering, styles, safe text) is `crate::ui`'s.

pub mod acp;
pub mod claude;
mod image_blocks;
pub mod print;
pub mod repl;
pub mod serve;
