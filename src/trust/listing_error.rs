//! Why a project file of a trust listing ([`super::listing`]) lists nothing: what the user
//! must fix in it before its hooks, servers and settings can be listed.

use std::path::{Path, PathBuf};

/// Why a project file lists nothing: it cannot be read as what its name says it is. The
/// message names the file and what is wrong in it, for the user to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListingError {
    /// Hooks, MCP servers, Claude Code's rules or an extension manifest its own reader refused
    /// (the reader's message).
    #[error("{0}")]
    Invalid(String),
    /// A server entry whose transport cannot be told.
    #[error("{}: {reason}", path.display())]
    Server { path: PathBuf, reason: String },
    /// A settings file that is not a JSON object.
    #[error("{}: {reason}", path.display())]
    Settings { path: PathBuf, reason: String },
}

impl ListingError {
    pub(super) fn invalid(error: impl std::fmt::Display) -> Self {
        Self::Invalid(error.to_string())
    }

    pub(super) fn settings(path: &Path, reason: impl std::fmt::Display) -> Self {
        Self::Settings {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}
