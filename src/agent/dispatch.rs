//! The one dispatch point every tool call goes through, builtin or MCP: parse the arguments,
//! PreToolUse hooks, the permission check, the tool, PostToolUse hooks, the output cap. Each step
//! is a named helper; a failure at any step becomes the tool result the model reads.

use std::sync::Arc;

use futures::future::join_all;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentEvent, Approval, ApprovalRequest, Approver, EventSink, cap_middle};
use crate::hooks::{Decision, HookInput};
use crate::llm::{Message, ToolCall};
use crate::permissions::{Check, Evaluation};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// The result of one call, as the model and the user will see it.
struct CallResult {
    content: String,
    is_error: bool,
    display: Option<String>,
}

impl CallResult {
    fn error(message: impl Into<String>) -> Self {
        Self {
            content: message.into(),
            is_error: true,
            display: None,
        }
    }
}

impl Agent {
    /// Runs the calls of one model response and returns their tool messages in call order.
    /// Consecutive read-only calls run concurrently; everything else runs one at a time.
    pub(super) async fn dispatch_all(
        &self,
        calls: &[ToolCall],
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Vec<Message> {
        let mut messages = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            let mut end = i + 1;
            if self.is_read_call(&calls[i]) {
                while end < calls.len() && self.is_read_call(&calls[end]) {
                    end += 1;
                }
            }
            let batch = &calls[i..end];
            let results = join_all(
                batch
                    .iter()
                    .map(|call| self.dispatch(call, sink, approver, cancel)),
            )
            .await;
            for (call, content) in batch.iter().zip(results) {
                messages.push(Message::tool(call.id.clone(), content));
            }
            i = end;
        }
        messages
    }

    fn is_read_call(&self, call: &ToolCall) -> bool {
        self.tools
            .get(call.name())
            .is_some_and(|tool| tool.kind() == ToolKind::Read)
    }

    /// One call through every step; returns what the model reads.
    async fn dispatch(
        &self,
        call: &ToolCall,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> String {
        let result = match parse_arguments(call.arguments()) {
            Err(message) => {
                begin(call, &Value::String(call.arguments().to_string()), sink);
                CallResult::error(message)
            }
            Ok(input) if cancel.is_cancelled() => {
                begin(call, &input, sink);
                CallResult::error(ToolError::Interrupted.to_string())
            }
            Ok(input) => self.run_call(call, input, sink, approver, cancel).await,
        };
        // MCP results are cut by the manager, which also saves the whole output to a file.
        let content = if self
            .tools
            .get(call.name())
            .is_some_and(|t| t.caps_own_output())
        {
            result.content
        } else {
            cap_middle(&result.content, self.options.tool_output_limit)
        };
        sink.emit(AgentEvent::ToolCallEnd {
            id: call.id.clone(),
            name: call.name().to_string(),
            content: content.clone(),
            is_error: result.is_error,
            display: result.display,
        });
        if result.is_error {
            format!("Error: {content}")
        } else {
            content
        }
    }

    async fn run_call(
        &self,
        call: &ToolCall,
        input: Value,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> CallResult {
        let Some(tool) = self.tools.get(call.name()).cloned() else {
            begin(call, &input, sink);
            return CallResult::error(format!(
                "unknown tool {:?}; the available tools are: {}",
                call.name(),
                self.tools.names().join(", ")
            ));
        };
        let pre = match self.pre_tool_hooks(call, input.clone(), sink, cancel).await {
            Ok(pre) => pre,
            Err(reason) => {
                begin(call, &input, sink);
                return CallResult::error(if cancel.is_cancelled() {
                    ToolError::Interrupted.to_string()
                } else {
                    format!("blocked by hook: {reason}")
                });
            }
        };
        // Shown after PreToolUse, so the user sees (and approves) the input that will really run.
        begin(call, &pre.input, sink);
        if let Err(message) = self
            .authorize(
                tool.as_ref(),
                &pre.input,
                pre.decision,
                pre.reason.as_deref(),
                sink,
                approver,
            )
            .await
        {
            return CallResult::error(message);
        }
        let mut result = match self
            .call_tool(tool.as_ref(), call, pre.input.clone(), sink, cancel)
            .await
        {
            Ok(ToolOutput { content, display }) => CallResult {
                content,
                is_error: false,
                display,
            },
            Err(e) => CallResult::error(e.to_string()),
        };
        for context in pre.context {
            append_note(&mut result.content, "PreToolUse hook context", &context);
        }
        self.post_tool_hooks(call, pre.input, &mut result, sink, cancel)
            .await;
        result
    }

    /// PreToolUse: a block ends the call with the hook's reason; otherwise the (possibly
    /// rewritten) input and the hook's permission decision go on to the permission step.
    async fn pre_tool_hooks(
        &self,
        call: &ToolCall,
        input: Value,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<PreHook, String> {
        let outcome = self
            .fire_cancellable(
                HookInput::PreToolUse {
                    tool_name: call.name().to_string(),
                    tool_input: input.clone(),
                    tool_use_id: call.id.clone(),
                },
                sink,
                cancel,
            )
            .await;
        if cancel.is_cancelled() {
            return Err(ToolError::Interrupted.to_string());
        }
        if let Some(reason) = outcome.stop.clone() {
            // `continue: false` wins over any decision: the tool does not run, the run stops.
            self.request_stop(reason.clone());
            return Err(reason);
        }
        if outcome.decision == Some(Decision::Block) {
            return Err(outcome
                .reason
                .unwrap_or_else(|| "a PreToolUse hook blocked this call".into()));
        }
        Ok(PreHook {
            input: outcome.updated_input.unwrap_or(input),
            decision: outcome.decision,
            reason: outcome.reason,
            context: outcome.additional_context,
        })
    }

    /// PostToolUse after success, PostToolUseFailure after an error; what the hooks say for the
    /// model is added to the tool result.
    async fn post_tool_hooks(
        &self,
        call: &ToolCall,
        input: Value,
        result: &mut CallResult,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) {
        let event = if result.is_error {
            HookInput::PostToolUseFailure {
                tool_name: call.name().to_string(),
                tool_input: input,
                tool_use_id: call.id.clone(),
                error: result.content.clone(),
            }
        } else {
            HookInput::PostToolUse {
                tool_name: call.name().to_string(),
                tool_input: input,
                tool_response: Value::String(result.content.clone()),
                tool_use_id: call.id.clone(),
            }
        };
        let outcome = self.fire_cancellable(event, sink, cancel).await;
        if let Some(reason) = outcome.stop {
            self.request_stop(reason);
        }
        if outcome.decision == Some(Decision::Block) && !result.is_error {
            let reason = outcome.reason.unwrap_or_default();
            append_note(&mut result.content, "PostToolUse hook feedback", &reason);
        }
        for context in outcome.additional_context {
            append_note(&mut result.content, "PostToolUse hook context", &context);
        }
    }

    /// The tool itself, with its progress reports shown while it runs.
    async fn call_tool(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        input: Value,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let mut ctx = self.tool_context(cancel);
        ctx.progress = Some(Arc::new(move |message| {
            let _ = progress_tx.send(message);
        }));
        let running = tool.call(input, &ctx);
        tokio::pin!(running);
        loop {
            tokio::select! {
                result = &mut running => return result,
                Some(message) = progress_rx.recv() => sink.emit(AgentEvent::ToolProgress {
                    id: call.id.clone(),
                    message,
                }),
                () = cancel.cancelled() => {
                    // Tools stop themselves on cancel (bash kills its group, MCP tells the
                    // server); one that does not is dropped after a grace, so Ctrl-C always works.
                    return match tokio::time::timeout(CANCEL_GRACE, &mut running).await {
                        Ok(result) => result,
                        Err(_) => Err(ToolError::Interrupted),
                    };
                }
            }
        }
    }

    fn tool_context(&self, cancel: &CancellationToken) -> ToolContext {
        ToolContext {
            root: self.options.root.clone(),
            confine_to_root: self.lock_permissions().confine_to_root(),
            cancel: cancel.clone(),
            read_files: self.read_files.clone(),
            progress: None,
            child_env: self.options.child_env.clone(),
        }
    }

    /// The permission step. A deny rule always wins; a hook's `allow` skips the question and
    /// its `ask` forces it; otherwise the rules, then the mode. "Ask" goes to the approver, and
    /// with nobody to ask it is a denial that says which flag or rule would allow the call.
    async fn authorize(
        &self,
        tool: &dyn Tool,
        input: &Value,
        hook_decision: Option<Decision>,
        hook_reason: Option<&str>,
        sink: &dyn EventSink,
        approver: &dyn Approver,
    ) -> Result<(), String> {
        let Evaluation {
            check,
            denied_by_rule: rule_denial,
            session_rule,
        } = self.lock_permissions().evaluate(tool, input);
        let deny = |reason: String| {
            sink.emit(AgentEvent::PermissionDenied {
                tool: tool.name().to_string(),
                message: reason.clone(),
            });
            Err(format!("permission denied: {reason}"))
        };
        if let Some(reason) = rule_denial {
            return deny(reason);
        }
        let suggestion = match (check, hook_decision) {
            (Check::Deny { reason }, _) => return deny(reason),
            (_, Some(Decision::Allow)) | (Check::Allow, None) => return Ok(()),
            (Check::Ask { suggestion }, _) => Some(suggestion),
            (Check::Allow, _) => None,
        };
        let request = ApprovalRequest {
            tool: tool.name().to_string(),
            input: input.clone(),
            session_rule,
            reason: hook_reason.map(str::to_string),
            // Only worth a file read when somebody will see it.
            preview: if approver.can_ask() {
                tool.preview(input, &self.tool_context(&CancellationToken::new()))
                    .await
            } else {
                None
            },
        };
        // One question at a time, even when read-only calls run concurrently.
        let _asking = self.approval_turn.lock().await;
        match approver.approve(&request).await {
            Some(Approval::Once) => Ok(()),
            Some(Approval::Always) => {
                self.lock_permissions()
                    .allow_for_session(request.session_rule.clone());
                Ok(())
            }
            Some(Approval::Deny) => Err(format!(
                "the user denied permission to run {}. Do not retry it unchanged; ask the user what they want instead.",
                tool.name()
            )),
            None => {
                let why = match &suggestion {
                    Some(s) => {
                        let mut hint = format!("rerun with {}", s.flag);
                        if let Some(mode) = &s.mode_hint {
                            hint.push_str(&format!(" or {mode}"));
                        }
                        let mut asked = match &s.why {
                            Some(why) => format!(" ({why})"),
                            None => String::new(),
                        };
                        asked.push_str(&match (hook_decision, hook_reason) {
                            (Some(Decision::Ask), Some(reason)) => {
                                format!(" (a PreToolUse hook asked too: {reason})")
                            }
                            _ => String::new(),
                        });
                        format!(
                            "{} needs approval{asked}, and this run is non-interactive, so it was denied; to allow it, {hint}",
                            tool.name()
                        )
                    }
                    None => format!(
                        "a PreToolUse hook asked for confirmation of {} ({}), and this run is non-interactive, so it was denied",
                        tool.name(),
                        hook_reason.unwrap_or("no reason given")
                    ),
                };
                let result: Result<(), String> = deny(why);
                result.map_err(|e| {
                    format!("{e}. Tell the user what you wanted to do instead of retrying.")
                })
            }
        }
    }
}

/// How long a cancelled tool may take to stop by itself before it is dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// What PreToolUse hooks leave for the rest of the call.
struct PreHook {
    input: Value,
    decision: Option<Decision>,
    reason: Option<String>,
    context: Vec<String>,
}

fn append_note(content: &mut String, label: &str, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    content.push_str(&format!("\n\n[{label}]\n{}", text.trim_end()));
}

fn begin(call: &ToolCall, input: &Value, sink: &dyn EventSink) {
    sink.emit(AgentEvent::ToolCallBegin {
        id: call.id.clone(),
        name: call.name().to_string(),
        input: input.clone(),
    });
}

/// The model's argument text as a JSON object; anything else is an error it can fix.
fn parse_arguments(arguments: &str) -> Result<Value, String> {
    if arguments.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "tool arguments must be a JSON object, got {}",
            json_kind(&other)
        )),
        Err(e) => {
            let snippet: String = arguments.chars().take(200).collect();
            Err(format!(
                "the arguments are not valid JSON ({e}); they were: {snippet}"
            ))
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_a_json_object() {
        assert_eq!(parse_arguments(""), Ok(serde_json::json!({})));
        assert_eq!(
            parse_arguments(r#"{"path":"a"}"#),
            Ok(serde_json::json!({"path":"a"}))
        );
        assert!(
            parse_arguments("[1]")
                .err()
                .unwrap_or_default()
                .contains("an array")
        );
        let err = parse_arguments(r#"{"path": "a"#).err().unwrap_or_default();
        assert!(err.starts_with("the arguments are not valid JSON"), "{err}");
        assert!(err.contains(r#"{"path": "a"#), "{err}");
    }
}
