//! Starting the programs Ling runs for the user: `bash` tool commands, command hooks and stdio
//! MCP servers. [`ChildEnv`] is what they start with (Ling's environment without the model API
//! key, unless settings `shareApiKeyWithTools`), [`exec`] is the trampoline through which
//! the `bash` tool's shell and stdio MCP servers are started so that they die with Ling, and
//! [`sandbox`] is the shell sandbox the trampoline applies to them. [`code_vars`] is the one
//! list of the variables that load code, and [`lookup`] finds the program a child outside the
//! sandbox runs without a `PATH` folder a sandboxed command can write.

mod child_error;
pub mod code_vars;
mod env;
pub mod exec;
pub mod lookup;
pub mod sandbox;
pub mod supervise;
pub mod worktree;

pub use child_error::ChildError;
pub use env::{ChildEnv, DEFAULT_KEY_VAR, Outside, Session};
pub use exec::Trampoline;
pub use lookup::Writable;
