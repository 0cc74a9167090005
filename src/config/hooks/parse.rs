//! The raw layer of the hook files: one file's JSON value (Ling's `hooks.json`, or the
//! `hooks` of a Claude Code settings file) checked field by field into a [`HooksConfig`], every
//! mistake reported with the file, line and column of the offending key or value (looked up
//! in the text by `locate`, since serde's derive cannot point at a key).

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::locate::{Seg, locate};
use super::resolved::{
    DEFAULT_TIMEOUT, HandlerKind, HookDialect, HookEventName, HookGroup, HookHandler, HooksConfig,
    Position, dedupe_within,
};
use crate::config::ConfigError;

impl HooksConfig {
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

    pub(super) fn parse_value(path: &Path, text: &str, value: &Value) -> Result<Self, ConfigError> {
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
