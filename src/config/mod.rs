//! Configuration: where Ling's files live, how they are parsed (with file, line and column on
//! error), and the raw → resolved settings of `.ling/settings.json` and `~/.ling/settings.json`.
//! Hook and MCP server files have their own raw/resolved pairs in `hooks.rs` and `mcp.rs`.
//! `bounded_read.rs` reads files Ling does not own (regular files only, size-capped) and
//! `private_fs.rs` writes the owner-only files under `LING_HOME`.

pub mod bounded_read;
mod error;
pub mod hooks;
mod json;
pub mod mcp;
mod paths;
pub mod private_fs;
mod settings;

pub use error::ConfigError;
pub use json::{CONFIG_FILE_LIMIT, read_config_text, read_json_file, read_json_value};
pub use paths::{Paths, expand_vars, expand_vars_with};
pub use settings::{
    ElicitationPolicy, PermissionMode, RawPermissions, RawSettings, Settings, SettingsOverrides,
};
