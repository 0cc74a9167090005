//! `hooks.json` in two layers. The raw layer is the file's JSON value, checked field by field so
//! that every mistake (an unknown event or handler type, a string where a number belongs) is
//! reported with the file, line and column of the offending key or value: serde's derive cannot
//! point at a key, so the path of the mistake is looked up in the text (`locate`). The resolved
//! layer is a list of [`HookGroup`]s (event, matcher text, handlers with defaults applied) from
//! `~/.ling/hooks.json` then, in a trusted project, `.ling/hooks.json`, with identical handlers
//! listed twice kept once.
//! Matchers stay text here; the hook engine compiles them (an invalid regex is reported with the
//! position kept in [`HookGroup::matcher_at`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

pub(crate) mod locate;
pub(crate) mod schema;

use super::ProjectFiles;
use super::claude::{self, CLAUDE_SETTINGS_FILES};
use super::{ConfigError, Paths, read_json_value};
use locate::{Seg, locate};

pub const HOOKS_FILE: &str = "hooks.json";
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
}

impl HookEventName {
    pub const ALL: [Self; 11] = [
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
        )
    }

    /// The tool events, whose handlers may carry an `if` rule.
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            Self::PreToolUse | Self::PostToolUse | Self::PostToolUseFailure
        )
    }

    fn valid_list() -> String {
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
    pub code: Option<std::sync::Arc<super::code_check::CodeCheck>>,
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
    /// Reads `~/.ling/hooks.json` then, when `project` is trusted, `.ling/hooks.json` (the text
    /// read when trust was decided) and the `hooks` of `.claude/settings.json` and
    /// `.claude/settings.local.json`, then with `claudeCompat.userHooks` those of
    /// `~/.claude/settings.json`; `layers` switches the user's or the project's off. A missing
    /// file contributes nothing.
    /// [`HooksConfig::load`], then the `hooks` of `--settings` (in Claude Code's format) when
    /// the user's layer is on.
    pub fn load_with(
        paths: &Paths,
        project: &ProjectFiles,
        layers: HookLayers,
        flag: Option<&super::FlagSettings>,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::load(paths, project, layers)?;
        if let Some(flag) = flag.filter(|_| layers.user) {
            config.merge(Self::parse_claude(&flag.source, &flag.text)?);
        }
        Ok(config)
    }

    pub fn load(
        paths: &Paths,
        project: &ProjectFiles,
        layers: HookLayers,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        if layers.user
            && let Some(user) = paths.user_config_file(HOOKS_FILE)
            && let Some((text, value)) = read_json_value(&user)?
        {
            config.merge(Self::parse_value(&user, &text, &value)?);
        }
        if layers.project
            && let Some((path, text)) = project.trusted_text(HOOKS_FILE)
        {
            config.merge(Self::parse(path, text)?);
        }
        // Claude Code's files after Ling's, so that Ling's win a handler both list.
        if layers.project {
            for name in CLAUDE_SETTINGS_FILES {
                if let Some((path, text)) = project.trusted_text(name) {
                    config.merge(Self::parse_claude(path, text)?);
                }
            }
        }
        if layers.user
            && paths.user_config
            && project.claude().user_hooks
            && let Some(path) = claude::user_settings_file()
            && let Some(text) = crate::config::read_config_text(&path)?
        {
            config.merge(Self::parse_claude(&path, &text)?);
        }
        Ok(config)
    }

    /// Parses one file's text.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| crate::config::json::syntax_error(path, &e))?;
        Self::parse_value(path, text, &value)
    }

    /// The `hooks` of a Claude Code settings file (`.claude/settings.json`): the same format,
    /// its other keys left to their own readers. Events and handler types Ling lacks are
    /// warnings, not errors, since the file is written for Claude Code.
    pub fn parse_claude(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| crate::config::json::syntax_error(path, &e))?;
        let mut parser = FileParser {
            path,
            dialect: HookDialect::Claude,
            text,
            trail: vec![Seg::Key("hooks".into())],
            out: Self::default(),
        };
        let unused: Vec<&str> = CLAUDE_ONLY_SETTINGS
            .into_iter()
            .filter(|key| value.get(key).is_some())
            .collect();
        if !unused.is_empty() {
            parser.out.warnings.push(format!(
                "{}: Claude Code's {} {} not used by Ling (it loads no plugins and draws no \
                 status line); ignored",
                path.display(),
                unused
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(" and "),
                if unused.len() == 1 { "is" } else { "are" }
            ));
        }
        match value.get("hooks") {
            Some(hooks) => parser.events(hooks)?,
            None if value.is_object() => {}
            None => {
                parser.trail.clear();
                return Err(parser.error(format!(
                    "a Claude Code settings file must be a JSON object, found {}",
                    kind_of(&value)
                )));
            }
        }
        Ok(parser.out)
    }

    fn parse_value(path: &Path, text: &str, value: &Value) -> Result<Self, ConfigError> {
        let mut parser = FileParser {
            path,
            dialect: HookDialect::Ling,
            text,
            trail: Vec::new(),
            out: Self::default(),
        };
        parser.file(value)?;
        Ok(parser.out)
    }

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

fn dedupe_within(handlers: &mut Vec<HookHandler>) {
    let mut kept: Vec<HookHandler> = Vec::with_capacity(handlers.len());
    for h in handlers.drain(..) {
        if !kept.contains(&h) {
            kept.push(h);
        }
    }
    *handlers = kept;
}

const HANDLER_TYPES: &str = "command, http";
/// Keys of a Claude Code settings file that do something in Claude Code and nothing in Ling:
/// said once, when the file loads.
const CLAUDE_ONLY_SETTINGS: [&str; 2] = ["enabledPlugins", "statusLine"];
/// Claude Code handler fields Ling does not implement: warned about rather than unknown.
const UNSUPPORTED_FIELDS: [&str; 6] = [
    "args",
    "shell",
    "statusMessage",
    "once",
    "asyncRewake",
    "allowedEnvVars",
];

/// Walks one file's JSON, keeping the path to the current value for error positions.
struct FileParser<'a> {
    path: &'a Path,
    /// A Claude Code settings file: its events and handler types Ling lacks are warnings.
    dialect: HookDialect,
    text: &'a str,
    trail: Vec<Seg>,
    out: HooksConfig,
}

impl FileParser<'_> {
    fn file(&mut self, value: &Value) -> Result<(), ConfigError> {
        let root = self.object(
            value,
            "the file must be a JSON object like {\"hooks\": {...}}",
        )?;
        for (key, value) in root {
            match key.as_str() {
                "hooks" => {
                    self.trail.push(Seg::Key(key.clone()));
                    self.events(value)?;
                    self.trail.pop();
                }
                // For editors: the file's JSON Schema (docs/schemas/hooks.schema.json).
                "$schema" if value.is_string() => {}
                "$schema" => {
                    self.trail.push(Seg::Key(key.clone()));
                    return Err(self.error(format!(
                        "`$schema` must be a string (the path or URL of the file's JSON Schema), found {}",
                        kind_of(value)
                    )));
                }
                _ => self.warn_key(key, "unknown top-level field"),
            }
        }
        Ok(())
    }

    fn events(&mut self, value: &Value) -> Result<(), ConfigError> {
        let events = self.object(value, "`hooks` must be an object of event names")?;
        for (name, groups) in events {
            self.trail.push(Seg::Key(name.clone()));
            let Some(event) = HookEventName::parse(name) else {
                if self.dialect == HookDialect::Claude {
                    self.trail.pop();
                    self.warn_key(name, "Claude Code hook event Ling does not have:");
                    continue;
                }
                return Err(self.error_at_key(format!(
                    "unknown hook event `{name}`; valid events are {}",
                    HookEventName::valid_list()
                )));
            };
            let Value::Array(groups) = groups else {
                return Err(self.error(format!(
                    "`{name}` must be a list of {{\"matcher\": ..., \"hooks\": [...]}} entries, found {}",
                    kind_of(groups)
                )));
            };
            for (i, group) in groups.iter().enumerate() {
                self.trail.push(Seg::Index(i));
                self.group(event, group)?;
                self.trail.pop();
            }
            self.trail.pop();
        }
        Ok(())
    }

    fn group(&mut self, event: HookEventName, value: &Value) -> Result<(), ConfigError> {
        let group = self.object(value, "a hook entry must be an object with `hooks`")?;
        let mut matcher = None;
        let mut matcher_at = self.position(false);
        let mut handlers = None;
        for (key, value) in group {
            self.trail.push(Seg::Key(key.clone()));
            match key.as_str() {
                "matcher" => {
                    matcher_at = self.position(false);
                    matcher = match value {
                        Value::Null => None,
                        Value::String(s) if s.is_empty() || s == "*" => None,
                        Value::String(s) => Some(s.clone()),
                        other => {
                            return Err(self.error(format!(
                                "`matcher` must be a string, found {}",
                                kind_of(other)
                            )));
                        }
                    };
                }
                "hooks" => {
                    let Value::Array(list) = value else {
                        return Err(self.error(format!(
                            "`hooks` must be a list of handlers, found {}",
                            kind_of(value)
                        )));
                    };
                    let mut parsed = Vec::with_capacity(list.len());
                    for (i, handler) in list.iter().enumerate() {
                        self.trail.push(Seg::Index(i));
                        parsed.extend(self.handler(event, handler)?);
                        self.trail.pop();
                    }
                    handlers = Some(parsed);
                }
                _ => {
                    self.trail.pop();
                    self.warn_key(key, "unknown field");
                    continue;
                }
            }
            self.trail.pop();
        }
        let Some(mut handlers) = handlers else {
            return Err(self.error("this entry has no `hooks` list of handlers".to_string()));
        };
        if matcher.is_some() && !event.uses_matcher() {
            let at = matcher_at;
            self.out.warnings.push(format!(
                "{}:{}:{}: `matcher` is ignored for {event}: every {event} hook runs",
                self.path.display(),
                at.line,
                at.column
            ));
        }
        dedupe_within(&mut handlers);
        if handlers.is_empty() && self.dialect == HookDialect::Claude {
            return Ok(());
        }
        self.out.groups.push(HookGroup {
            event,
            matcher,
            matcher_at,
            handlers,
            source: self.path.to_path_buf(),
            dialect: self.dialect,
        });
        Ok(())
    }

    /// `None`: a Claude Code handler type Ling does not run (`prompt`, `agent`), warned about.
    fn handler(
        &mut self,
        event: HookEventName,
        value: &Value,
    ) -> Result<Option<HookHandler>, ConfigError> {
        let fields = self.object(value, "a handler must be an object with a `type`")?;
        let Some(kind) = fields.get("type") else {
            return Err(self.error(format!(
                "this handler has no `type`; valid types are {HANDLER_TYPES}"
            )));
        };
        self.trail.push(Seg::Key("type".into()));
        let kind = match kind {
            Value::String(s) if s == "command" || s == "http" => s.clone(),
            Value::String(s) if self.dialect == HookDialect::Claude => {
                self.trail.pop();
                let at = self.position(false);
                self.out.warnings.push(format!(
                    "{}:{}:{}: a `{s}` handler (Claude Code) is not one Ling runs; it is ignored \
                     (Ling runs {HANDLER_TYPES})",
                    self.path.display(),
                    at.line,
                    at.column
                ));
                return Ok(None);
            }
            Value::String(s) => {
                return Err(self.error(format!(
                    "unknown handler type `{s}`; valid types are {HANDLER_TYPES}"
                )));
            }
            other => {
                return Err(self.error(format!(
                    "`type` must be a string ({HANDLER_TYPES}), found {}",
                    kind_of(other)
                )));
            }
        };
        self.trail.pop();

        let mut handler = HookHandler {
            code: None,
            kind: HandlerKind::Command {
                command: String::new(),
            },
            timeout: DEFAULT_TIMEOUT,
            is_async: false,
            fail_closed: false,
            condition: None,
            condition_at: Position { line: 0, column: 0 },
        };
        let (mut command, mut url, mut headers) = (None, None, Vec::new());
        for (key, value) in fields {
            self.trail.push(Seg::Key(key.clone()));
            match (key.as_str(), kind.as_str()) {
                ("type", _) => {}
                ("timeout", _) => handler.timeout = self.timeout(value)?,
                ("async", _) => handler.is_async = self.boolean(key, value)?,
                ("failClosed", _) => handler.fail_closed = self.boolean(key, value)?,
                ("if", _) if !event.is_tool_event() => {
                    self.trail.pop();
                    self.warn_key(
                        key,
                        &format!("`if` applies to tool events only, not {event}:"),
                    );
                    continue;
                }
                ("if", _) => {
                    handler.condition_at = self.position(false);
                    handler.condition = Some(self.non_empty_string(key, value)?);
                }
                ("command", "command") => command = Some(self.non_empty_string(key, value)?),
                ("url", "http") => url = Some(self.url(value)?),
                ("headers", "http") => headers = self.headers(value)?,
                (key, _) if UNSUPPORTED_FIELDS.contains(&key) => {
                    self.trail.pop();
                    self.warn_key(key, "field not supported by Ling");
                    continue;
                }
                _ => {
                    self.trail.pop();
                    self.warn_key(key, &format!("unknown field for a `{kind}` handler"));
                    continue;
                }
            }
            self.trail.pop();
        }
        handler.kind = match (kind.as_str(), command, url) {
            ("command", Some(command), _) => HandlerKind::Command { command },
            ("http", _, Some(url)) => HandlerKind::Http { url, headers },
            ("command", None, _) => {
                return Err(self.error("a `command` handler needs a `command` string".into()));
            }
            _ => return Err(self.error("an `http` handler needs a `url` string".into())),
        };
        Ok(Some(handler))
    }

    fn timeout(&self, value: &Value) -> Result<Duration, ConfigError> {
        value
            .as_f64()
            .filter(|secs| *secs > 0.0)
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
            .ok_or_else(|| {
                self.error(format!(
                    "`timeout` must be a positive number of seconds, found {}",
                    describe(value)
                ))
            })
    }

    fn boolean(&self, key: &str, value: &Value) -> Result<bool, ConfigError> {
        value.as_bool().ok_or_else(|| {
            self.error(format!(
                "`{key}` must be true or false, found {}",
                describe(value)
            ))
        })
    }

    fn non_empty_string(&self, key: &str, value: &Value) -> Result<String, ConfigError> {
        match value {
            Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
            other => Err(self.error(format!(
                "`{key}` must be a non-empty string, found {}",
                describe(other)
            ))),
        }
    }

    fn url(&self, value: &Value) -> Result<String, ConfigError> {
        let url = self.non_empty_string("url", value)?;
        if url.starts_with("http://") || url.starts_with("https://") {
            Ok(url)
        } else {
            Err(self.error(format!(
                "`url` must start with http:// or https://, found {url:?}"
            )))
        }
    }

    fn headers(&mut self, value: &Value) -> Result<Vec<(String, String)>, ConfigError> {
        let map = self.object(
            value,
            "`headers` must be an object of header names to strings",
        )?;
        let mut headers = Vec::with_capacity(map.len());
        for (name, value) in map {
            let Value::String(s) = value else {
                self.trail.push(Seg::Key(name.clone()));
                let err = self.error(format!(
                    "header `{name}` must be a string, found {}",
                    kind_of(value)
                ));
                return Err(err);
            };
            headers.push((name.clone(), s.clone()));
        }
        Ok(headers)
    }

    fn object<'v>(
        &self,
        value: &'v Value,
        what: &str,
    ) -> Result<&'v Map<String, Value>, ConfigError> {
        value
            .as_object()
            .ok_or_else(|| self.error(format!("{what}, found {}", kind_of(value))))
    }

    fn position(&self, key: bool) -> Position {
        locate(self.text, &self.trail, key)
    }

    fn error(&self, message: String) -> ConfigError {
        self.error_with(message, false)
    }

    fn error_at_key(&self, message: String) -> ConfigError {
        self.error_with(message, true)
    }

    fn error_with(&self, message: String, key: bool) -> ConfigError {
        let at = self.position(key);
        ConfigError::Syntax {
            path: self.path.to_path_buf(),
            line: at.line,
            column: at.column,
            message,
        }
    }

    fn warn_key(&mut self, key: &str, what: &str) {
        self.trail.push(Seg::Key(key.to_string()));
        let at = self.position(true);
        self.trail.pop();
        self.out.warnings.push(format!(
            "{}:{}:{}: {what} `{key}` ignored",
            self.path.display(),
            at.line,
            at.column
        ));
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => kind_of(other).to_string(),
    }
}
