// Temporary stand-in with the agreed API; replaced by the real module from the tools branch.
#![allow(dead_code)]
use serde_json::Value;

use crate::config::PermissionMode;
use crate::tools::Tool;

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PermissionError(String);

#[derive(Debug, Clone)]
pub struct Suggestion {
    pub rule: String,
    pub flag: String,
    pub mode_hint: Option<String>,
}

#[derive(Debug, Clone)]
pub enum Check {
    Allow,
    Ask { suggestion: Suggestion },
    Deny { reason: String },
}

#[derive(Debug, Clone)]
pub struct Permissions {
    mode: PermissionMode,
}

impl Permissions {
    pub fn new(
        mode: PermissionMode,
        _allow: &[String],
        _deny: &[String],
    ) -> Result<Self, PermissionError> {
        Ok(Self { mode })
    }
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }
    pub fn set_mode(&mut self, m: PermissionMode) {
        self.mode = m;
    }
    pub fn check(&self, _tool: &dyn Tool, _input: &Value) -> Check {
        Check::Allow
    }
    pub fn allow_for_session(&mut self, _rule: String) {}
    pub fn denied_by_rule(&self, _tool: &dyn Tool, _input: &Value) -> Option<String> {
        None
    }
}

pub fn session_rule_for(tool: &dyn Tool, _input: &Value) -> String {
    tool.name().to_string()
}
