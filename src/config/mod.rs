//! Configuration: where Ling's files live, how they are parsed (with file, line and column on
//! error), and the raw → resolved settings of `.ling/settings.json` and `~/.ling/settings.json`.
//! Hook and MCP server files have their own raw/resolved pairs in `hooks.rs` and `mcp.rs`.
//! The project's own files are read once (`project`); whether they apply at all is decided
//! above config, by the `trust` module.
//! `bounded_read.rs` reads files Ling does not own (regular files only, size-capped),
//! `private_fs.rs` writes the owner-only files under `LING_HOME`, `shared_file.rs` updates the
//! files several Ling processes share (under a lock, replaced atomically), and `schema.rs`
//! generates the JSON Schemas of the three files from their raw types.

pub mod bounded_read;
pub mod checkpoints;
pub mod claude;
pub mod code_check;
pub mod codex;
pub mod codex_rules;
pub mod codex_user;
mod error;
pub mod extensions;
pub mod hooks;
mod json;
pub mod mcp;
pub mod mcp_import;
pub mod model_api;
mod modes;
mod paths;
pub mod plugins;
pub mod private_fs;
pub mod project;
pub mod sandbox;
pub mod schema;
mod settings;
pub mod settings_edit;
mod settings_raw;
mod settings_resolve;
pub mod shared_file;
pub(crate) mod spelled;
pub mod tool_search;
pub mod user_compat;
pub mod web;

pub use error::ConfigError;
pub use json::{CONFIG_FILE_LIMIT, read_config_text, read_json_file, read_json_value};
pub use model_api::{ReasoningEffort, ServerKind, WireApi};
pub use modes::{Access, MODES, ModeMeaning};
pub use paths::{
    ExpandError, PassedOver, Paths, RootFound, expand_vars, expand_vars_with, find_project_root,
    find_root, ling_home, var_names,
};
pub use project::ProjectFiles;
pub use sandbox::{SandboxMode, SandboxSettings};
pub use settings::{ElicitationPolicy, PermissionMode, Settings, SettingsError, ThemeSetting};
pub use settings_raw::{
    DEFAULT_API_KEY_ENV, DEFAULT_AUTO_COMPACT_PERCENT, DEFAULT_CONNECT_TIMEOUT_MS,
    DEFAULT_CONTEXT_WINDOW, DEFAULT_FIRST_BYTE_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS,
    DEFAULT_MAX_AGENT_DEPTH, DEFAULT_MAX_PARALLEL_AGENTS, DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_DELAY_MS, DEFAULT_MAX_STREAM_LINE_BYTES, DEFAULT_TOOL_OUTPUT_LIMIT,
    FlagSettings, Price, RawPermissions, RawProjectState, RawSettings, SETTINGS_FILE,
    SettingsOverrides,
};

pub mod prices;
#[cfg(test)]
#[path = "properties.rs"]
mod properties;
