//! MCP tools as [`Tool`]s: one adapter per tool a server offers, registered beside the builtins so
//! hooks and permissions apply to them at the same dispatch point.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::mcp::{McpError, McpManager, McpToolInfo, Progress, ProgressCallback};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};

pub struct McpTool {
    info: McpToolInfo,
    manager: Arc<McpManager>,
}

impl McpTool {
    pub fn new(info: McpToolInfo, manager: Arc<McpManager>) -> Self {
        Self { info, manager }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.info.exposed_name
    }

    fn description(&self) -> &str {
        &self.info.description
    }

    fn input_schema(&self) -> Value {
        self.info.input_schema.clone()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn read_only_hint(&self) -> bool {
        self.info.read_only
    }

    fn caps_own_output(&self) -> bool {
        true
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let progress: Option<ProgressCallback> = ctx.progress.clone().map(|report| {
            let callback: ProgressCallback = Arc::new(move |p: Progress| report(describe(&p)));
            callback
        });
        let span = crate::telemetry::Span::start("ling.mcp_call", || {
            vec![
                opentelemetry::KeyValue::new("ling.mcp.server", self.info.server.clone()),
                opentelemetry::KeyValue::new("ling.mcp.tool", self.info.original_name.clone()),
            ]
        });
        let answer = span
            .run(
                self.manager
                    .call_tool(&self.info.exposed_name, input, &ctx.cancel, progress),
            )
            .await;
        match &answer {
            Ok(result) if result.is_error => span.fail("the tool returned isError"),
            Ok(_) => {}
            Err(e) => span.fail(e.to_string()),
        }
        drop(span);
        match answer {
            Ok(result) if result.is_error => Err(ToolError::Failed(result.text)),
            Ok(result) => Ok(ToolOutput::text(result.text)),
            Err(McpError::Cancelled) => Err(ToolError::Interrupted),
            Err(e) => Err(ToolError::Failed(e.to_string())),
        }
    }
}

fn describe(progress: &Progress) -> String {
    let amount = match progress.total {
        Some(total) if total > 0.0 => format!("{:.0}%", progress.progress / total * 100.0),
        _ => format!("{}", progress.progress),
    };
    match &progress.message {
        Some(message) => format!("{amount} {message}"),
        None => amount,
    }
}
