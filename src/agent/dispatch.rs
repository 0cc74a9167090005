//! The one dispatch point every tool call goes through, builtin, the agent's own (`task`,
//! `skill`) or MCP: parse the arguments, PreToolUse hooks, the permission check, the tool,
//! PostToolUse hooks, the output cap. Each step is a named helper; a failure at any step becomes
//! the tool result the model reads. No tool is special here: while one runs, what it asks of its
//! agent and turn over the call's line (`call_line.rs`) is served.

use std::sync::Arc;

use futures::future::join_all;
use serde_json::Value;

use super::call_line::CallLine;
use super::call_result::CallResult;
use super::filter::Refusal;
use super::turn::Turn;
use super::{Agent, AgentEvent, cap_middle};
use crate::hooks::{Decision, HookInput};
use crate::llm::{Message, ToolCall};
use crate::media::ImageRef;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// Why a call has no result from its tool. The message is what the model reads (after
/// `Error: `) and the user sees as the call's outcome.
#[derive(Debug, thiserror::Error)]
pub(super) enum CallError {
    /// The arguments are JSON, but not an object (`got` names what they are).
    #[error("tool arguments must be a JSON object, got {0}")]
    NotAnObject(&'static str),
    #[error("the arguments are not valid JSON ({error}); they were: {snippet}")]
    BadJson {
        #[source]
        error: serde_json::Error,
        /// The start of the argument text.
        snippet: String,
    },
    #[error("unknown tool {name:?}; the available tools are: {available}")]
    UnknownTool { name: String, available: String },
    /// A narrowing (a sub-agent's tools, a command's or skill's `allowed-tools`) leaves it out.
    #[error("not allowed: {0}")]
    NotAdmitted(#[from] Refusal),
    /// A PreToolUse hook blocked the call (or said `continue: false`): its reason.
    #[error("blocked by hook: {0}")]
    BlockedByHook(String),
    /// A deny rule, the mode or a protected path refused it: the reason names the rule or flag.
    #[error("permission denied: {0}")]
    Denied(String),
    /// It needed a question and nobody can be asked: the reason says which flag would allow it.
    #[error("permission denied: {0}. Tell the user what you wanted to do instead of retrying.")]
    NobodyToAsk(String),
    /// The user answered no, which also ends the run.
    #[error(
        "the user denied permission to run {0} and ended this turn. Do not retry it unchanged; \
         wait for the user's next message."
    )]
    UserDenied(String),
    /// The user answered with what to do instead.
    #[error("the user did not allow {tool} and said what to do instead: {words}")]
    UserInstead { tool: String, words: String },
    /// An earlier call of the same response was declined, so this one was not run.
    #[error("not run: the user declined an earlier call of this response")]
    AfterDecline,
    /// The tool failed, or was interrupted.
    #[error(transparent)]
    Tool(#[from] ToolError),
}

impl From<CallError> for CallResult {
    fn from(error: CallError) -> Self {
        let told = match &error {
            CallError::UserDenied(_) => Some("denied by you".to_string()),
            CallError::UserInstead { .. } => Some("not run: you said what to do instead".into()),
            CallError::AfterDecline => Some("not run: you declined an earlier call".into()),
            _ => None,
        };
        let decision = match &error {
            CallError::NotAdmitted(_) | CallError::Denied(_) | CallError::NobodyToAsk(_) => {
                "reject_config"
            }
            CallError::BlockedByHook(_) => "reject_hook",
            CallError::UserDenied(_) | CallError::UserInstead { .. } | CallError::AfterDecline => {
                "reject_user"
            }
            _ => "accept",
        };
        Self {
            content: error.to_string(),
            is_error: true,
            display: None,
            total_lines: None,
            told,
            images: Vec::new(),
            decision,
        }
    }
}

impl Agent {
    /// Runs the calls of one model response and returns their tool messages in call order.
    /// Consecutive read-only calls run concurrently; everything else runs one at a time.
    pub(super) async fn dispatch_all(&self, calls: &[ToolCall], turn: &Turn<'_>) -> Vec<Message> {
        let mut messages = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            let mut end = i + 1;
            if self.host.is_read_call(&calls[i]) {
                while end < calls.len() && self.host.is_read_call(&calls[end]) {
                    end += 1;
                }
            }
            let batch = &calls[i..end];
            let results = join_all(batch.iter().map(|call| self.dispatch_one(call, turn))).await;
            for (call, (content, images)) in batch.iter().zip(results) {
                messages.push(Message::tool_with_images(call.id.clone(), content, images));
            }
            i = end;
        }
        messages
    }

    /// One call through every step; returns what the model reads (its images left out).
    pub(super) async fn dispatch(&self, call: &ToolCall, turn: &Turn<'_>) -> String {
        self.dispatch_one(call, turn).await.0
    }

    /// One call through every step; returns what the model reads, and the images it returned.
    async fn dispatch_one(&self, call: &ToolCall, turn: &Turn<'_>) -> (String, Vec<ImageRef>) {
        let span = crate::telemetry::Span::start("ling.tool_call", || {
            super::telemetry_glue::tool_attributes(call)
        });
        let started = std::time::Instant::now();
        let result = span.run(self.dispatch_result(call, turn)).await;
        super::telemetry_glue::tool_outcome(&span, call, &result, started);
        drop(span);
        self.finish_call(call, turn, result)
    }

    async fn dispatch_result(&self, call: &ToolCall, turn: &Turn<'_>) -> CallResult {
        match parse_arguments(call.arguments()) {
            Err(error) => {
                begin(call, &Value::String(call.arguments().to_string()), turn);
                error.into()
            }
            Ok(input) if turn.is_cancelled() => {
                begin(call, &input, turn);
                CallError::Tool(ToolError::Interrupted).into()
            }
            Ok(input) if turn.is_declined() => {
                begin(call, &input, turn);
                CallError::AfterDecline.into()
            }
            Ok(input) => {
                self.checkpointed(call, turn, self.run_call(call, input, turn))
                    .await
            }
        }
    }

    /// The call's result as the model reads it, and its end told.
    fn finish_call(
        &self,
        call: &ToolCall,
        turn: &Turn<'_>,
        result: CallResult,
    ) -> (String, Vec<ImageRef>) {
        // MCP results are cut by the manager, which also saves the whole output to a file.
        let content = if self
            .host
            .tools
            .get(call.name())
            .is_some_and(|t| t.caps_own_output())
        {
            result.content
        } else {
            cap_middle(&result.content, self.options.tool_output_limit)
        };
        turn.emit(AgentEvent::ToolCallEnd {
            id: call.id.clone(),
            name: call.name().to_string(),
            content: content.clone(),
            is_error: result.is_error,
            display: result.display,
            total_lines: result.total_lines,
            told: result.told,
        });
        if result.is_error {
            (format!("Error: {content}"), Vec::new())
        } else {
            (content, result.images)
        }
    }

    async fn run_call(&self, call: &ToolCall, input: Value, turn: &Turn<'_>) -> CallResult {
        let Some(tool) = self.host.tools.get(call.name()).cloned() else {
            begin(call, &input, turn);
            return CallError::UnknownTool {
                name: call.name().to_string(),
                available: self.host.tools.names().join(", "),
            }
            .into();
        };
        if let Err(why) = self
            .host
            .admitted(tool.as_ref(), &input, true, &self.options)
        {
            begin(call, &input, turn);
            return CallError::NotAdmitted(why).into();
        }
        let pre = match self.pre_tool_hooks(call, input.clone(), turn).await {
            Ok(pre) => pre,
            Err(error) => {
                begin(call, &input, turn);
                return if turn.is_cancelled() {
                    CallError::Tool(ToolError::Interrupted).into()
                } else {
                    error.into()
                };
            }
        };
        // Shown after PreToolUse, so the user sees (and approves) the input that will really run.
        begin(call, &pre.input, turn);
        if let Err(why) = self
            .host
            .admitted(tool.as_ref(), &pre.input, false, &self.options)
        {
            return CallError::NotAdmitted(why).into();
        }
        let mut pre = pre;
        match self.authorize(tool.as_ref(), &call.id, &pre, turn).await {
            Ok(Some(edited)) => {
                // The approver's change is narrowed as the model's call was.
                if let Err(why) = self
                    .host
                    .admitted(tool.as_ref(), &edited, false, &self.options)
                {
                    return CallError::NotAdmitted(why).into();
                }
                pre.input = edited;
            }
            Ok(None) => {}
            Err(error) => return error.into(),
        }
        let mut result = self.run_tool(tool.as_ref(), call, &pre.input, turn).await;
        for context in pre.context {
            append_note(&mut result.content, "PreToolUse hook context", &context);
        }
        self.post_tool_hooks(call, pre.input, &mut result, turn)
            .await;
        result
    }

    /// The tool, and what may follow it: the question to run a command the sandbox stopped
    /// once outside.
    async fn run_tool(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        input: &Value,
        turn: &Turn<'_>,
    ) -> CallResult {
        match self.call_tool(tool, call, input.clone(), turn).await {
            Ok(output) if output.sandbox_blocked.is_some() && turn.approver.can_ask() => {
                self.outside_sandbox(tool, call, input, output, turn).await
            }
            Ok(ToolOutput {
                content,
                display,
                total_lines,
                images,
                ..
            }) => CallResult {
                content,
                is_error: false,
                display,
                total_lines,
                told: None,
                decision: "accept",
                images,
            },
            Err(e) => CallError::Tool(e).into(),
        }
    }

    /// PreToolUse: a block ends the call with the hook's reason; otherwise the (possibly
    /// rewritten) input and the hook's permission decision go on to the permission step.
    async fn pre_tool_hooks(
        &self,
        call: &ToolCall,
        input: Value,
        turn: &Turn<'_>,
    ) -> Result<PreHook, CallError> {
        let outcome = self
            .fire_in(
                HookInput::PreToolUse {
                    tool_name: call.name().to_string(),
                    tool_input: input.clone(),
                    tool_use_id: call.id.clone(),
                },
                turn,
            )
            .await;
        if turn.is_cancelled() {
            return Err(CallError::Tool(ToolError::Interrupted));
        }
        if let Some(reason) = outcome.stop.clone() {
            // `continue: false` wins over any decision: the tool does not run, the run stops.
            turn.request_stop(reason.clone());
            return Err(CallError::BlockedByHook(reason));
        }
        if outcome.decision == Some(Decision::Block) {
            return Err(CallError::BlockedByHook(
                outcome
                    .reason
                    .unwrap_or_else(|| "a PreToolUse hook blocked this call".into()),
            ));
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
        turn: &Turn<'_>,
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
        let outcome = self.fire_in(event, turn).await;
        if let Some(reason) = outcome.stop {
            turn.request_stop(reason);
        }
        if let Some(output) = outcome.updated_output
            && !result.is_error
        {
            // `updatedToolOutput`: what the model reads instead (a lint report, say).
            result.content = output;
            result.total_lines = None;
        }
        if outcome.decision == Some(Decision::Block) && !result.is_error {
            let reason = outcome.reason.unwrap_or_default();
            append_note(&mut result.content, "PostToolUse hook feedback", &reason);
        }
        for context in outcome.additional_context {
            append_note(&mut result.content, "PostToolUse hook context", &context);
        }
    }

    /// The tool itself, with its progress reports shown and its line to the agent and the turn
    /// served while it runs.
    pub(super) async fn call_tool(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        input: Value,
        turn: &Turn<'_>,
    ) -> Result<ToolOutput, ToolError> {
        self.call_tool_in(
            tool,
            call,
            input,
            turn,
            self.host
                .tool_context(&self.options, &self.llm, turn.cancel),
        )
        .await
    }

    /// [`Agent::call_tool`] with the given context (the sandbox's escape runs without one).
    pub(super) async fn call_tool_in(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        input: Value,
        turn: &Turn<'_>,
        mut ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        ctx.call_id = Some(call.id.clone());
        ctx.session_id.clone_from(&self.session().id);
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        ctx.progress = Some(Arc::new(move |message| {
            let _ = progress_tx.send(message);
        }));
        let (output_tx, mut output_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        ctx.output_line = Some(Arc::new(move |line| {
            let _ = output_tx.send(line);
        }));
        let (line, mut requests) =
            CallLine::open(turn.approver.can_ask(), turn.approver.orders_questions());
        ctx.caller = Some(Arc::new(line.clone()));
        // A command past its timeout: the user may keep it running in the background.
        let (timeout_tx, mut timeouts) = tokio::sync::mpsc::unbounded_channel();
        if turn.approver.can_ask() {
            ctx.on_timeout = Some(Arc::new(move |command: String| {
                let (reply, answer) = tokio::sync::oneshot::channel::<bool>();
                let _ = timeout_tx.send((command, reply));
                answer
            }));
        }
        let running = tool.call(input, &ctx);
        tokio::pin!(running);
        // Tools stop themselves on cancel (bash kills its group, MCP tells the server); one that
        // does not is dropped after a grace, so Ctrl-C always works. One that runs an agent of
        // its own is waited for: that agent holds each of its own calls to this grace.
        let grace = tokio::time::sleep(CANCEL_GRACE);
        tokio::pin!(grace);
        let mut cancelled = false;
        let result = loop {
            tokio::select! {
                result = &mut running => break result,
                Some(message) = progress_rx.recv(), if !cancelled => {
                    turn.emit(AgentEvent::ToolProgress {
                        id: call.id.clone(),
                        message,
                    });
                }
                Some(line) = output_rx.recv(), if !cancelled => {
                    turn.emit(AgentEvent::ToolOutputLine {
                        id: call.id.clone(),
                        line,
                    });
                }
                Some(request) = requests.recv() => self.serve_line(request, turn).await,
                Some((command, reply)) = timeouts.recv() => {
                    let keep = self.keep_in_background(&command, call, turn).await;
                    let _ = reply.send(keep);
                }
                () = turn.cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
                }
                () = &mut grace, if cancelled && !line.runs_agent() => {
                    break Err(ToolError::Interrupted);
                }
            }
        };
        // What the tool sent just before it ended, before its end is reported.
        while let Ok(request) = requests.try_recv() {
            self.serve_line(request, turn).await;
        }
        result
    }
}

/// How long a cancelled tool may take to stop by itself before it is dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// What PreToolUse hooks leave for the rest of the call.
pub(super) struct PreHook {
    pub input: Value,
    pub decision: Option<Decision>,
    pub reason: Option<String>,
    pub context: Vec<String>,
}

fn append_note(content: &mut String, label: &str, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    content.push_str(&format!("\n\n[{label}]\n{}", text.trim_end()));
}

fn begin(call: &ToolCall, input: &Value, turn: &Turn<'_>) {
    turn.emit(AgentEvent::ToolCallBegin {
        id: call.id.clone(),
        name: call.name().to_string(),
        input: input.clone(),
    });
}

/// The model's argument text as a JSON object; anything else is an error it can fix.
fn parse_arguments(arguments: &str) -> Result<Value, CallError> {
    if arguments.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(CallError::NotAnObject(json_kind(&other))),
        Err(error) => Err(CallError::BadJson {
            error,
            snippet: arguments.chars().take(200).collect(),
        }),
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
        let parsed = |text: &str| parse_arguments(text).ok();
        let error = |text: &str| parse_arguments(text).err().map(|e| e.to_string());
        assert_eq!(parsed(""), Some(serde_json::json!({})));
        assert_eq!(
            parsed(r#"{"path":"a"}"#),
            Some(serde_json::json!({"path":"a"}))
        );
        assert_eq!(
            error("[1]").as_deref(),
            Some("tool arguments must be a JSON object, got an array")
        );
        assert_eq!(
            error(r#"{"path": "a"#).as_deref(),
            Some(
                r#"the arguments are not valid JSON (EOF while parsing a string at line 1 column 11); they were: {"path": "a"#
            )
        );
    }
}
