//! The resolved layer of the hook files: the events (as Claude Code spells them), the
//! handlers with their defaults applied, the groups they come in and the whole
//! [`HooksConfig`], whose [`merge`](HooksConfig::merge) keeps a handler listed twice once.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::config::code_check::CodeCheck;

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The events of `docs/hooks.md`, spelled as Claude Code spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum HookEventName {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    SubagentStart,
    SubagentStop,
    Notification,
    PreCompact,
    SessionEnd,
    /// A worktree is wanted (`-w`, `isolation: worktree`): a handler that prints a path made it.
    WorktreeCreate,
    /// A worktree Ling made (or a WorktreeCreate hook made) is being removed.
    WorktreeRemove,
}

impl HookEventName {
    pub const ALL: [Self; 13] = [
        Self::SessionStart,
        Self::UserPromptSubmit,
        Self::PreToolUse,
        Self::PostToolUse,
        Self::PostToolUseFailure,
        Self::Stop,
        Self::SubagentStart,
        Self::SubagentStop,
        Self::Notification,
        Self::PreCompact,
        Self::SessionEnd,
        Self::WorktreeCreate,
        Self::WorktreeRemove,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::Stop => "Stop",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::Notification => "Notification",
            Self::PreCompact => "PreCompact",
            Self::SessionEnd => "SessionEnd",
            Self::WorktreeCreate => "WorktreeCreate",
            Self::WorktreeRemove => "WorktreeRemove",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Position in [`Self::ALL`], for per-event tables.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether a matcher is tested on this event: tool events match the tool name, SessionStart
    /// its `source`, PreCompact its `trigger`, the subagent events the `agent_type`,
    /// Notification its `notification_type`; the others run every group.
    pub fn uses_matcher(self) -> bool {
        matches!(
            self,
            Self::PreToolUse
                | Self::PostToolUse
                | Self::PostToolUseFailure
                | Self::SessionStart
                | Self::PreCompact
                | Self::SubagentStart
                | Self::SubagentStop
                | Self::Notification
        )
    }

    /// Whether exit 2 or `decision:"block"` stops something on this event.
    pub fn can_block(self) -> bool {
        matches!(
            self,
            Self::PreToolUse
                | Self::UserPromptSubmit
                | Self::PostToolUse
                | Self::Stop
                | Self::SubagentStop
                | Self::PreCompact
                | Self::WorktreeCreate
        )
    }

    /// The tool events, whose handlers may carry an `if` rule.
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            Self::PreToolUse | Self::PostToolUse | Self::PostToolUseFailure
        )
    }

    pub(super) fn valid_list() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }
}

impl std::fmt::Display for HookEventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum HandlerKind {
    /// Run by `sh -c` in the project root.
    Command { command: String },
    /// POSTed to; header values may hold `${VAR}`, expanded when the hook runs.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A callback of the program driving Ling (the Agent SDK's `hooks` option), asked with a
    /// `hook_callback` control request; never from a file.
    Callback { id: String },
}

/// One handler with its defaults applied. Two equal handlers under the same event and matcher
/// run once.
#[derive(Debug, Clone, PartialEq)]
pub struct HookHandler {
    pub kind: HandlerKind,
    pub timeout: Duration,
    pub is_async: bool,
    /// Turns this handler's own errors and timeouts into a block.
    pub fail_closed: bool,
    /// The files a command handler runs from places a sandboxed command can write, checked
    /// before each run (set by trust when the run is set up; `None`: nothing to check).
    pub code: Option<std::sync::Arc<CodeCheck>>,
    /// `if`: a permission rule (`Bash(git commit*)`) the tool call must match for the handler
    /// to run (tool events only); compiled by the hook engine, which reports a bad one at
    /// `condition_at`.
    pub condition: Option<String>,
    pub condition_at: Position,
}

/// A line and column in a configuration file, both 1-based (columns count bytes, as serde_json's do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// Which tool names a group's handlers are told: Ling's (`.ling/hooks.json`) or Claude Code's
/// (`.claude/settings.json` and the other Claude files), as in `tool_name: "Bash"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HookDialect {
    #[default]
    Ling,
    Claude,
}

/// One `{ "matcher": ..., "hooks": [...] }` entry under an event.
#[derive(Debug, Clone)]
pub struct HookGroup {
    pub event: HookEventName,
    /// `None` when omitted, `""` or `"*"`: every value matches.
    pub matcher: Option<String>,
    pub matcher_at: Position,
    pub handlers: Vec<HookHandler>,
    pub source: PathBuf,
    pub dialect: HookDialect,
}

/// All hook groups in configuration order (user file first), and warnings about ignored fields.
#[derive(Debug, Clone, Default)]
pub struct HooksConfig {
    pub groups: Vec<HookGroup>,
    pub warnings: Vec<String>,
}

/// Which hook files load: the user's (`~/.ling/hooks.json`) and the project's
/// (`.ling/hooks.json`, only ever in a trusted project).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookLayers {
    pub user: bool,
    pub project: bool,
}

impl HookLayers {
    pub const ALL: Self = Self {
        user: true,
        project: true,
    };
    pub const NONE: Self = Self {
        user: false,
        project: false,
    };
}

impl HooksConfig {
    /// Appends `other`'s groups, dropping each handler already present under the same event and
    /// an equivalent matcher (so a handler in both files runs once).
    pub fn merge(&mut self, other: Self) {
        self.warnings.extend(other.warnings);
        for mut group in other.groups {
            group.handlers.retain(|handler| {
                !self.groups.iter().any(|g| {
                    g.event == group.event
                        && g.matcher == group.matcher
                        && g.handlers.contains(handler)
                })
            });
            dedupe_within(&mut group.handlers);
            if !group.handlers.is_empty() {
                self.groups.push(group);
            }
        }
    }
}

pub(super) fn dedupe_within(handlers: &mut Vec<HookHandler>) {
    let mut kept: Vec<HookHandler> = Vec::with_capacity(handlers.len());
    for h in handlers.drain(..) {
        if !kept.contains(&h) {
            kept.push(h);
        }
    }
    *handlers = kept;
}
