//! Starting the programs Ling runs for the user: `bash` tool commands, command hooks and stdio
//! MCP servers. [`ChildEnv`] is what they start with (Ling's environment without the model API
//! key, unless settings `shareApiKeyWithTools`), [`exec`] is the trampoline through which
//! the `bash` tool's shell and stdio MCP servers are started so that they die with Ling, and
//! [`sandbox`] is the shell sandbox the trampoline applies to them.

mod env;
pub mod exec;
pub mod sandbox;
pub mod supervise;

pub use env::{ChildEnv, DEFAULT_KEY_VAR, Session};
pub use exec::Trampoline;
