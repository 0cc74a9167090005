//! [`Status`]: where a session stands, one value for every front end: the REPL's `/status`, the
//! `init` line of both stream-json formats, ACP's mode and model options, `mcp serve`'s answers.

use std::path::PathBuf;

use crate::config::PermissionMode;
use crate::mcp::ServerStatus;
use crate::process::sandbox::Effective;
use crate::trust::TrustStatus;

#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub mode: PermissionMode,
    /// The model of the current requests.
    pub model: String,
    /// A model chosen while a prompt ran, which the next prompt takes.
    pub pending_model: Option<String>,
    /// What a `bash` command gets now (`read-only` in plan mode).
    pub sandbox: Effective,
    pub servers: Vec<ServerStatus>,
    pub session_id: String,
    /// Whether the project's own config applies.
    pub trust: TrustStatus,
    pub project_root: PathBuf,
}

impl Status {
    /// The model the next request uses: the one chosen last.
    pub fn next_model(&self) -> &str {
        self.pending_model.as_deref().unwrap_or(&self.model)
    }
}
