//! The messages of `--input-format stream-json` as types: the control requests a driver (the
//! Claude Agent SDK) sends Ling ([`Request`], by their `subtype`), `initialize`'s options
//! ([`Initialize`], its `jsonSchema` as an [`OutputSchema`]) and the answers Ling writes back ([`InitializeAnswer`], [`ModeAnswer`],
//! [`McpStatusAnswer`]); and the prompt of a `user` message, its text and images
//! ([`prompt_of`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::front::print::schema::OutputSchema;
use crate::ui::output::stderr_line;

/// A control request, by its `subtype`. A field a request needs is optional here, so that its
/// absence is answered with what to send rather than a parse error.
#[derive(Debug, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum Request {
    Initialize(Box<Initialize>),
    Interrupt,
    SetPermissionMode {
        mode: Option<String>,
    },
    SetModel {
        model: Option<String>,
    },
    McpStatus,
    McpReconnect {
        #[serde(rename = "serverName")]
        server_name: Option<String>,
    },
    McpToggle {
        #[serde(rename = "serverName")]
        server_name: Option<String>,
        enabled: Option<bool>,
    },
    /// A message from one of the program's in-process MCP servers that is not an answer to
    /// Ling (a notification, or a request of its own).
    McpMessage {
        message: Option<Value>,
    },
    /// The Agent SDK's `rewindFiles(userMessageId, {dryRun})`.
    RewindFiles {
        user_message_id: Option<String>,
        #[serde(default)]
        dry_run: Option<bool>,
    },
}

impl Request {
    /// The request in `value`; `Err` with the answer to give when it is not one Ling knows.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let subtype = value
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or_default();
        serde_json::from_value(value.clone()).map_err(|e| {
            if e.to_string().starts_with("unknown variant") {
                format!("Unsupported control request subtype: {subtype}")
            } else {
                format!("{subtype}: {e}")
            }
        })
    }
}

/// `initialize`'s options, as the Agent SDK sends them.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Initialize {
    pub system_prompt: Option<SystemPrompt>,
    pub append_system_prompt: Option<String>,
    pub mcp_servers: Option<Map<String, Value>>,
    /// Hook callbacks: by event, matchers with `hookCallbackIds`.
    pub hooks: Option<Value>,
    /// The names of the program's in-process MCP servers.
    pub sdk_mcp_servers: Option<Vec<String>>,
    /// Sub-agent definitions by name.
    pub agents: Option<Value>,
    /// `disallowedTools` (the SDK's `disallowedToolsDelivery: "initialize"`).
    pub disallowed_tools: Option<Vec<String>>,
    /// The SDK's `outputFormat` schema: [`Initialize::output_schema`].
    pub json_schema: Option<Value>,
    /// The other fields, checked by [`Initialize::refusal`] against [`UNHONOURED`].
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// `initialize` fields that change what the session does and that Ling cannot honour: given
/// (not null, not empty), the session ends with an error naming them instead of running
/// without them.
const UNHONOURED: [(&str, &str); 9] = [
    (
        "skills",
        "a list of the skills to offer (Ling offers every skill it loads)",
    ),
    ("planModeInstructions", "plan mode instructions"),
    ("toolAliases", "tool aliases"),
    (
        "appendSubagentSystemPrompt",
        "a text added to sub-agents' system prompts",
    ),
    (
        "excludeDynamicSections",
        "a system prompt without its dynamic sections",
    ),
    ("systemPromptSnapshot", "system prompt snapshots"),
    (
        "plugins",
        "plugins sent in initialize (leave pluginDelivery at its default, 'argv': Ling loads \
         each --plugin-dir)",
    ),
    ("managedSettings", "managed settings"),
    (
        "settings",
        "settings sent in initialize (pass them with --settings)",
    ),
];

/// `systemPrompt`: a text, or the SDK's list of parts.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum SystemPrompt {
    Text(String),
    Parts(Vec<Value>),
}

impl SystemPrompt {
    /// The prompt as one text (parts that are not text left out).
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Parts(parts) => parts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n\n"),
        }
    }
}

impl Initialize {
    /// What Ling cannot honour of it, said so that the `query()` fails with the reason instead
    /// of running without it.
    pub fn refusal(&self) -> Option<String> {
        let present = |v: &Option<Value>| {
            v.as_ref().is_some_and(|v| match v {
                Value::Null => false,
                Value::Object(m) => !m.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => true,
            })
        };
        if let Err(why) = self.output_schema() {
            return Some(why);
        }
        UNHONOURED
            .iter()
            .find(|(key, _)| present(&self.rest.get(*key).cloned()))
            .map(|(key, what)| format!("Ling does not support {what} (initialize's `{key}`)"))
    }
}

impl Initialize {
    /// `jsonSchema` (the SDK's `outputFormat: {type: 'json_schema', schema}`), when given;
    /// an error saying what to change when it is no schema.
    pub fn output_schema(&self) -> Result<Option<OutputSchema>, String> {
        match self.json_schema.clone() {
            None | Some(Value::Null) => Ok(None),
            Some(schema) => OutputSchema::from_value(schema)
                .map(Some)
                .map_err(|e| format!("initialize's `jsonSchema` (outputFormat's `schema`): {e}")),
        }
    }
}

/// The answer to `initialize`.
#[derive(Debug, Serialize)]
pub struct InitializeAnswer {
    pub commands: Vec<Value>,
    pub agents: Vec<Value>,
    pub output_style: &'static str,
    pub available_output_styles: [&'static str; 1],
    pub models: Vec<ModelInfo>,
    pub account: Map<String, Value>,
    pub claude_code_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_servers_applied: Option<bool>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub value: String,
    pub display_name: String,
    pub description: &'static str,
}

/// The answer to `set_permission_mode`: the mode in Claude Code's name.
#[derive(Debug, Serialize)]
pub struct ModeAnswer {
    pub mode: &'static str,
}

/// The answer to `mcp_status`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpStatusAnswer {
    pub mcp_servers: Vec<McpServerStatus>,
}

/// One server in the SDK's `McpServerStatus` shape.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    pub name: String,
    pub status: &'static str,
    pub tools: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<ServerInfo>,
}

#[derive(Debug, Serialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// The answer to `rewind_files`: the SDK's `RewindFilesResult`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindFilesAnswer {
    pub can_rewind: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_changed: Option<Vec<String>>,
}

impl RewindFilesAnswer {
    pub fn refused(error: String) -> Self {
        Self {
            can_rewind: false,
            error: Some(error),
            files_changed: None,
        }
    }

    /// What a rewind did: the files it put back (or would), relative to `root`; an error
    /// when something was left behind.
    pub fn of(report: &crate::session::RewindReport, root: &std::path::Path) -> Self {
        let shown = |p: &std::path::Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
        let files_changed = report
            .files
            .as_ref()
            .map(|f| f.restored.iter().map(|r| shown(&r.path)).collect());
        Self {
            can_rewind: report.files.is_some(),
            error: report.left_behind(),
            files_changed,
        }
    }
}

/// An answer without fields (`{}`).
#[derive(Debug, Serialize)]
pub struct Empty {}

/// A `user` message as the turn takes it: its text, and its images decoded (or why one
/// cannot go, which refuses the message).
#[derive(Debug, PartialEq)]
pub struct UserInput {
    pub text: String,
    /// Each `image` block: its bytes and a name, or why it cannot be sent.
    pub images: Vec<Result<(Vec<u8>, String), String>>,
}

/// The prompt of a `user` message: its content as text (a string, or its `text` blocks) and
/// its `image` blocks (base64 sources; Ling fetches no image from a URL).
pub fn prompt_of(message: &Value) -> Result<UserInput, String> {
    let content = message
        .get("message")
        .and_then(|m| m.get("content"))
        .ok_or("a user message needs `message.content`")?;
    match content {
        Value::String(text) => Ok(UserInput {
            text: text.clone(),
            images: Vec::new(),
        }),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => texts.push(
                        block
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                    ),
                    Some("image") => images.push(image_of(block, images.len() + 1)),
                    other => stderr_line(format!(
                        "warning: a `{}` content block is not one Ling sends to the model (only \
                         text and image); it was left out",
                        other.unwrap_or("(untyped)")
                    )),
                }
            }
            if texts.is_empty() && images.is_empty() {
                return Err("the user message has no text".into());
            }
            Ok(UserInput {
                text: texts.join("\n\n"),
                images,
            })
        }
        _ => Err("`message.content` must be a string or a list of content blocks".into()),
    }
}

/// The `n`th image block of a message, decoded: only a `base64` source is taken.
fn image_of(block: &Value, n: usize) -> Result<(Vec<u8>, String), String> {
    let source = block.get("source").unwrap_or(&Value::Null);
    let field = |name: &str| source.get(name).and_then(Value::as_str);
    match field("type") {
        Some("base64") => super::super::image_blocks::decoded(
            field("data").unwrap_or_default(),
            field("media_type").unwrap_or_default(),
            n,
        ),
        Some(kind @ ("url" | "file")) => Err(format!(
            "image {n} has a `{kind}` source: Ling does not fetch images; send the picture \
             itself, {{\"type\": \"base64\", \"media_type\": \"image/png\", \"data\": \"...\"}}"
        )),
        other => Err(format!(
            "image {n} has a source of type {}; Ling takes {{\"type\": \"base64\", \
             \"media_type\": ..., \"data\": ...}}",
            other.map_or_else(|| "(none)".to_string(), |t| format!("`{t}`"))
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn prompts_are_the_text_of_user_messages() {
        let text = json!({"type": "user", "message": {"role": "user", "content": "hi"}});
        assert_eq!(prompt_of(&text).unwrap().text, "hi");
        let blocks = json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}});
        assert_eq!(prompt_of(&blocks).unwrap().text, "a\n\nb");
        assert!(prompt_of(&json!({"type": "user"})).is_err());
    }

    #[test]
    fn image_blocks_are_decoded_and_a_url_source_refused() {
        let message = json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                "data": "iVBORw0K"}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]}});
        let input = prompt_of(&message).unwrap();
        assert_eq!(input.text, "");
        assert_eq!(
            input.images[0],
            Ok((b"\x89PNG\r\n".to_vec(), "image 1.png".to_string()))
        );
        let refused = input.images[1].as_ref().unwrap_err();
        assert!(
            refused.contains("`url` source: Ling does not fetch images"),
            "{refused}"
        );
    }

    #[test]
    fn requests_parse_by_subtype_and_an_unknown_one_is_named() {
        assert!(matches!(
            Request::parse(&json!({"subtype": "interrupt"})),
            Ok(Request::Interrupt)
        ));
        assert!(matches!(
            Request::parse(&json!({"subtype": "set_model"})),
            Ok(Request::SetModel { model: None })
        ));
        assert!(matches!(
            Request::parse(&json!({"subtype": "mcp_toggle", "serverName": "db", "enabled": false})),
            Ok(Request::McpToggle { server_name: Some(name), enabled: Some(false) }) if name == "db"
        ));
        assert_eq!(
            Request::parse(&json!({"subtype": "seed_read_state"})).unwrap_err(),
            "Unsupported control request subtype: seed_read_state"
        );
    }

    #[test]
    fn initialize_refuses_what_ling_lacks() {
        let init = |v: Value| match Request::parse(&v) {
            Ok(Request::Initialize(init)) => init,
            other => panic!("{other:?}"),
        };
        let plain = init(json!({"subtype": "initialize", "systemPrompt": [""], "hooks": {}}));
        assert_eq!(plain.refusal(), None);
        assert_eq!(plain.system_prompt.unwrap().text(), "");
        let hooks = init(json!({"subtype": "initialize", "hooks": {"Stop": []}}));
        assert_eq!(hooks.refusal(), None);
        let schema = init(json!({"subtype": "initialize", "jsonSchema": {"type": "object"}}));
        assert_eq!(schema.refusal(), None);
        assert!(schema.output_schema().unwrap().is_some());
        let bad = init(json!({"subtype": "initialize", "jsonSchema": "object"}));
        assert!(bad.refusal().unwrap().contains("`jsonSchema`"));
        let skills = init(json!({"subtype": "initialize", "skills": ["pdf"]}));
        assert!(skills.refusal().unwrap().contains("`skills`"));
        let unknown = init(json!({"subtype": "initialize", "captureSdkMcpManifests": true}));
        assert_eq!(unknown.refusal(), None);
    }
}
