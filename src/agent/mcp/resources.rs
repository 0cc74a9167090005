//! MCP resources for the model: the builtin tools `list_mcp_resources` (resources and resource
//! templates of the connected servers) and `read_mcp_resource` (one resource's text), registered
//! only when MCP servers are configured, and the rendering of `resources/read` contents shared
//! with `@server:uri` mentions. Both tools only read, so plan mode allows them.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::mcp::{McpClient, McpError, McpManager, ServerState};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args};

pub const LIST_RESOURCES: &str = "list_mcp_resources";
pub const READ_RESOURCE: &str = "read_mcp_resource";

/// `list_mcp_resources {server?}`.
pub struct ListMcpResources {
    manager: Arc<McpManager>,
}

/// `read_mcp_resource {server, uri}`.
pub struct ReadMcpResource {
    manager: Arc<McpManager>,
}

impl ListMcpResources {
    pub fn new(manager: Arc<McpManager>) -> Self {
        Self { manager }
    }
}

impl ReadMcpResource {
    pub fn new(manager: Arc<McpManager>) -> Self {
        Self { manager }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// Only this MCP server (default: all)
    #[serde(default)]
    server: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// The MCP server's name
    server: String,
    /// The resource URI
    uri: String,
}

#[async_trait]
impl Tool for ListMcpResources {
    fn name(&self) -> &str {
        LIST_RESOURCES
    }

    fn description(&self) -> &str {
        "List the resources and resource templates the connected MCP servers offer (uri, name, \
         mimeType, description), for one server or all. Read one with read_mcp_resource."
    }

    fn input_schema(&self) -> Value {
        args_schema::<ListArgs>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ListArgs = parse_args(LIST_RESOURCES, normalize(input))?;
        let servers: Vec<String> = match &args.server {
            Some(server) => {
                connected(&self.manager, server)?;
                vec![server.clone()]
            }
            None => self
                .manager
                .statuses()
                .into_iter()
                .filter(|s| s.state == ServerState::Connected)
                .map(|s| s.name)
                .collect(),
        };
        if servers.is_empty() {
            return Ok(ToolOutput::text("no MCP server is connected"));
        }
        let mut sections = Vec::new();
        for server in servers {
            let Some(client) = self.manager.client(&server) else {
                sections.push(format!("## {server}\n(not connected)"));
                continue;
            };
            sections.push(list_server(&server, &client).await);
        }
        Ok(ToolOutput::text(sections.join("\n\n")))
    }
}

#[async_trait]
impl Tool for ReadMcpResource {
    fn name(&self) -> &str {
        READ_RESOURCE
    }

    fn description(&self) -> &str {
        "Read one resource of an MCP server by its URI (from list_mcp_resources, a resource \
         template filled in, or a resource link). Returns its text contents."
    }

    fn input_schema(&self) -> Value {
        args_schema::<ReadArgs>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ReadArgs = parse_args(READ_RESOURCE, input)?;
        let client = connected(&self.manager, &args.server)?;
        match client.read_resource(&args.uri).await {
            Ok(result) => Ok(ToolOutput::text(render_contents(&result))),
            Err(McpError::Cancelled) => Err(ToolError::Interrupted),
            Err(e) => Err(ToolError::Failed(format!(
                "reading {} from {} failed: {e}",
                args.uri, args.server
            ))),
        }
    }
}

/// `null` arguments (a model calling with nothing) mean "all servers".
fn normalize(input: Value) -> Value {
    if input.is_null() { json!({}) } else { input }
}

/// The client of a connected server, or a tool error naming the servers there are.
fn connected(manager: &McpManager, server: &str) -> Result<McpClient, ToolError> {
    if let Some(client) = manager.client(server) {
        return Ok(client);
    }
    let statuses = manager.statuses();
    let names: Vec<String> = statuses
        .iter()
        .filter(|s| s.state == ServerState::Connected)
        .map(|s| s.name.clone())
        .collect();
    let why = if statuses.iter().any(|s| s.name == server) {
        format!("MCP server {server:?} is not connected")
    } else {
        format!("there is no MCP server {server:?}")
    };
    Err(ToolError::Failed(format!(
        "{why}; connected servers: {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// One server's resources and templates, one line each. A server without the `resources`
/// capability says so rather than failing.
async fn list_server(server: &str, client: &McpClient) -> String {
    let offers_resources = client
        .server_info()
        .is_none_or(|info| info.capabilities.get("resources").is_some());
    if !offers_resources {
        return format!("## {server}\n(this server offers no resources)");
    }
    let mut lines = vec![format!("## {server}")];
    match client.list_resources().await {
        Ok(resources) if resources.is_empty() => lines.push("resources: none".into()),
        Ok(resources) => {
            lines.push("resources:".into());
            lines.extend(resources.iter().map(|r| resource_line(r, "uri")));
        }
        Err(e) => lines.push(format!("resources: listing failed: {e}")),
    }
    match client.list_resource_templates().await {
        Ok(templates) if templates.is_empty() => {}
        Ok(templates) => {
            lines.push("resource templates (fill in the {placeholders} to read one):".into());
            lines.extend(templates.iter().map(|t| resource_line(t, "uriTemplate")));
        }
        // Older servers answer -32601 for templates; that only means there are none.
        Err(McpError::Rpc { .. }) => {}
        Err(e) => lines.push(format!("resource templates: listing failed: {e}")),
    }
    lines.join("\n")
}

/// `- uri  name (mimeType): description`.
fn resource_line(item: &Value, uri_key: &str) -> String {
    let text = |key: &str| item[key].as_str().unwrap_or_default();
    let mut line = format!("- {}", text(uri_key));
    let name = if text("title").is_empty() {
        text("name")
    } else {
        text("title")
    };
    if !name.is_empty() {
        line.push_str(&format!("  {name}"));
    }
    if !text("mimeType").is_empty() {
        line.push_str(&format!(" ({})", text("mimeType")));
    }
    if !text("description").is_empty() {
        line.push_str(&format!(": {}", text("description")));
    }
    line
}

/// The text of a `resources/read` result: each content's text under its URI when there are
/// several; a blob as a placeholder with its type and size.
pub fn render_contents(result: &Value) -> String {
    let contents = result["contents"].as_array().cloned().unwrap_or_default();
    if contents.is_empty() {
        return "(the resource is empty)".to_string();
    }
    let single = contents.len() == 1;
    let parts: Vec<String> = contents
        .iter()
        .map(|content| {
            let field = |key: &str| content[key].as_str().unwrap_or_default();
            match content["text"].as_str() {
                Some(text) if single => text.to_string(),
                Some(text) => format!("[{}]\n{text}", field("uri")),
                None => {
                    let blob = field("blob").trim_end();
                    let padding = blob.bytes().rev().take_while(|&b| b == b'=').count();
                    let size = (blob.len() * 3 / 4).saturating_sub(padding);
                    let mime = if field("mimeType").is_empty() {
                        "binary"
                    } else {
                        field("mimeType")
                    };
                    format!("[binary resource {}: {mime}, {size} bytes]", field("uri"))
                }
            }
        })
        .collect();
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn resource_tool_schemas_are_closed_objects() {
        assert_eq!(
            args_schema::<ListArgs>(),
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "Only this MCP server (default: all)"}
                },
                "additionalProperties": false
            })
        );
        assert_eq!(
            args_schema::<ReadArgs>(),
            json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The MCP server's name"},
                    "uri": {"type": "string", "description": "The resource URI"}
                },
                "required": ["server", "uri"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn renders_one_text_content_as_is_and_several_under_their_uris() {
        let one = json!({"contents": [{"uri": "a://x", "text": "hello"}]});
        assert_eq!(render_contents(&one), "hello");
        let two = json!({"contents": [
            {"uri": "a://x", "text": "hello"},
            {"uri": "a://y", "mimeType": "image/png", "blob": "aGVsbG8="}
        ]});
        assert_eq!(
            render_contents(&two),
            "[a://x]\nhello\n\n[binary resource a://y: image/png, 5 bytes]"
        );
        assert_eq!(render_contents(&json!({})), "(the resource is empty)");
    }

    #[test]
    fn lists_a_resource_with_its_name_type_and_description() {
        let item = json!({"uri": "demo://a", "name": "a.md", "mimeType": "text/markdown",
                          "description": "the a file"});
        assert_eq!(
            resource_line(&item, "uri"),
            "- demo://a  a.md (text/markdown): the a file"
        );
        let template = json!({"uriTemplate": "demo://t/{id}", "name": "T"});
        assert_eq!(
            resource_line(&template, "uriTemplate"),
            "- demo://t/{id}  T"
        );
    }
}
