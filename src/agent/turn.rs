//! One run of the loop for one prompt, in its phases: the prompt is submitted (UserPromptSubmit
//! hooks, `@server:uri` mentions), then model requests and their tool calls alternate until the
//! model answers without tools; the Stop hooks (SubagentStop in a subagent) may send it back to
//! work, again and again with `stop_hook_active` set, until they allow the stop (bounded by
//! `--max-turns`, which counts the sub-agents' requests too, and settings `maxStopHookBlocks`),
//! and the run finishes with [`AgentEvent::TurnFinished`]. What the phases share is a
//! [`Turn`]: who hears the events, who is asked, what cancels the run, and a stop a hook asked
//! for along the way.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

use super::{Agent, AgentError, AgentEvent, Approver, EventSink, RunEnd, RunResult, context, mcp};
use crate::hooks::Decision;
use crate::llm::{Completion, FinishReason, LlmError, Message, StreamEvent, ToolCall};

/// The context of one run, handed to every step of it.
pub(super) struct Turn<'a> {
    pub sink: &'a dyn EventSink,
    pub approver: &'a dyn Approver,
    pub cancel: &'a CancellationToken,
    /// A hook's `continue: false` during tool dispatch: the run stops after the current calls.
    stop: Mutex<Option<String>>,
    /// The user said no to a call: the run ends after the current calls, none of which runs.
    declined: AtomicBool,
}

impl<'a> Turn<'a> {
    pub(super) fn new(
        sink: &'a dyn EventSink,
        approver: &'a dyn Approver,
        cancel: &'a CancellationToken,
    ) -> Self {
        Self {
            sink,
            approver,
            cancel,
            stop: Mutex::new(None),
            declined: AtomicBool::new(false),
        }
    }

    pub fn emit(&self, event: AgentEvent) {
        self.sink.emit(event);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Asks the run to stop once the calls of this response are done; the first reason wins.
    pub fn request_stop(&self, reason: String) {
        self.lock_stop().get_or_insert(reason);
    }

    /// The user declined a call: the run hands control back once this response's calls end.
    pub fn decline(&self) {
        self.declined.store(true, Ordering::Relaxed);
    }

    pub fn is_declined(&self) -> bool {
        self.declined.load(Ordering::Relaxed)
    }

    fn take_stop(&self) -> Option<String> {
        self.lock_stop().take()
    }

    fn lock_stop(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.stop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What the run has to show so far: model requests made, the model's last visible text.
#[derive(Default)]
struct Tally {
    num_turns: u32,
    last_text: String,
}

/// What the Stop hooks decided.
enum AfterStop {
    /// The run ends this way.
    End(RunEnd),
    /// A hook blocked the stop: this is sent to the model, which goes on.
    Continue(String),
}

impl Agent {
    /// Runs the loop for one user prompt until the model is done, the turn limit is reached, or
    /// `cancel` fires. The history stays valid for the API whatever happens: every tool call of
    /// an assistant message gets its tool message.
    pub async fn run(
        &mut self,
        prompt: &str,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<RunResult, AgentError> {
        self.run_turn(Some(prompt), sink, approver, cancel).await
    }

    /// A run for `prompt`, or with no prompt for what background sub-agents left (their
    /// answers are taken at the first step), in its telemetry span.
    pub(super) async fn run_turn(
        &mut self,
        prompt: Option<&str>,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<RunResult, AgentError> {
        let span = crate::telemetry::Span::start("ling.turn", || {
            self.turn_attributes(prompt.unwrap_or_default())
        });
        let result = span
            .run(self.run_in_span(prompt, sink, approver, cancel))
            .await;
        super::telemetry_glue::run_outcome(&span, &result);
        result
    }

    async fn run_in_span(
        &mut self,
        prompt: Option<&str>,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<RunResult, AgentError> {
        let turn = Turn::new(sink, approver, cancel);
        let mut tally = Tally::default();
        self.requests.begin(self.options.max_turns);
        let submitted = match prompt {
            Some(prompt) => {
                let before = self.checkpoint_turn(&turn).await;
                self.submit(prompt, &turn, before).await
            }
            None => None,
        };
        let end = match submitted {
            Some(end) => Ok(end),
            None => self.request_loop(&turn, &mut tally).await,
        };
        self.end_narrowing();
        turn.emit(AgentEvent::TurnFinished {
            usage: self.conversation.usage,
            num_turns: tally.num_turns,
        });
        end.map(|end| RunResult {
            end,
            text: tally.last_text,
            num_turns: tally.num_turns,
            requests: self.requests.used(),
        })
    }

    /// UserPromptSubmit hooks, then the prompt (with the hooks' context and the text of its
    /// `@server:uri` mentions) goes into the history. `Some` when the run ends before any request.
    async fn submit(
        &mut self,
        prompt: &str,
        turn: &Turn<'_>,
        before: Option<u32>,
    ) -> Option<RunEnd> {
        // Taken now: a prompt that does not go through drops them with it.
        let images = std::mem::take(&mut self.conversation.pending_images);
        let submitted = self.prompt_hooks(prompt, turn).await;
        if turn.is_cancelled() {
            return Some(RunEnd::Interrupted);
        }
        if let Some(reason) = submitted.stop {
            return Some(RunEnd::Stopped(reason));
        }
        if submitted.decision == Some(Decision::Block) {
            let reason = submitted
                .reason
                .unwrap_or_else(|| "a UserPromptSubmit hook blocked the prompt".into());
            return Some(RunEnd::PromptBlocked(reason));
        }
        let mut content = prompt.to_string();
        for context in &submitted.additional_context {
            content.push_str(&format!(
                "\n\n<hook-context>\n{}\n</hook-context>",
                context.trim_end()
            ));
        }
        if let Some(manager) = self.host.mcp.clone() {
            let (blocks, warnings) = mcp::mentions::resolve_mentions(prompt, &manager).await;
            for warning in warnings {
                turn.emit(AgentEvent::Warning(warning));
            }
            for block in blocks {
                content.push_str("\n\n");
                content.push_str(&block);
            }
        }
        self.push_prompt(Message::user_with_images(content, images), before)
            .await;
        None
    }

    /// Model requests and their tool calls, until the run ends.
    async fn request_loop(
        &mut self,
        turn: &Turn<'_>,
        tally: &mut Tally,
    ) -> Result<RunEnd, AgentError> {
        // How many times the Stop hooks sent the model back to work in this run.
        let mut stop_blocks = 0u32;
        loop {
            // What background sub-agents that ended left: their answers are this step's input.
            self.take_background(turn);
            // What the tools' own requests used is paid for like the agent's.
            self.take_side_usage();
            // Its own limit (a sub-agent definition's `maxTurns`), then the run's, which its
            // sub-agents' requests count toward.
            let own_limit = self
                .options
                .max_turns
                .is_some_and(|max| tally.num_turns >= max);
            if own_limit {
                return Ok(RunEnd::MaxTurns);
            }
            if let Some(end) = self.over_budget() {
                return Ok(end);
            }
            if !self.requests.take() {
                return Ok(RunEnd::MaxTurns);
            }
            tally.num_turns += 1;
            self.conversation.total_turns += 1;
            turn.emit(AgentEvent::RequestStarted {
                turn: tally.num_turns,
            });
            self.sync_tools().await;
            self.fit_context(turn.sink, turn.cancel).await;
            if turn.is_cancelled() {
                self.conversation.push(interrupted(""));
                return Ok(RunEnd::Interrupted);
            }
            let Some(completion) = self.request(turn).await? else {
                return Ok(RunEnd::Interrupted);
            };
            let calls = self.record(completion, turn, tally);
            if calls.is_empty() {
                // Stop hooks may send the model back to work until they allow the stop.
                match self.stop_hooks(turn, tally, stop_blocks > 0).await {
                    // A sub-agent's run ends with its answer: its background children are
                    // waited for first, and it goes on with what they said.
                    AfterStop::End(RunEnd::Completed)
                        if self.is_subagent() && self.wait_background(turn.cancel).await =>
                    {
                        continue;
                    }
                    AfterStop::End(end) => return Ok(end),
                    AfterStop::Continue(reason) => {
                        stop_blocks += 1;
                        if stop_blocks > self.options.stop_hook_limit {
                            return Ok(RunEnd::Stopped(format!(
                                "the {} hooks blocked the end of the turn {} times in a row \
                                 (settings maxStopHookBlocks), so the run stops here; the last \
                                 reason was: {reason}",
                                self.stop_event_name(),
                                self.options.stop_hook_limit
                            )));
                        }
                        self.conversation.push(Message::user(reason));
                        continue;
                    }
                }
            }
            for message in self.dispatch_all(&calls, turn).await {
                self.conversation.push(message);
            }
            self.take_child_usage();
            if turn.is_cancelled() {
                return Ok(RunEnd::Interrupted);
            }
            if let Some(reason) = turn.take_stop() {
                return Ok(RunEnd::Stopped(reason));
            }
            if turn.is_declined() {
                return Ok(RunEnd::Declined);
            }
        }
    }

    /// Takes one model response into the usage, the tally and the history, and says what the
    /// user should know about how it ended. Returns its tool calls.
    fn record(
        &mut self,
        completion: Completion,
        turn: &Turn<'_>,
        tally: &mut Tally,
    ) -> Vec<ToolCall> {
        if let Some(usage) = completion.usage {
            self.spend_on(usage);
            self.conversation.usage += usage;
            self.conversation.context_tokens = usage.prompt_tokens + usage.completion_tokens;
        }
        if !completion.content.is_empty() || completion.tool_calls.is_empty() {
            tally.last_text = completion.content.clone();
        }
        turn.emit(AgentEvent::AssistantMessage {
            text: completion.content.clone(),
            usage: completion.usage,
        });
        match completion.finish_reason {
            FinishReason::Length if completion.tool_calls.is_empty() => {
                turn.emit(AgentEvent::Warning(
                    "the model stopped because it reached its output token limit; the answer may be cut short".into(),
                ));
            }
            FinishReason::ContentFilter => turn.emit(AgentEvent::Warning(
                "the model's provider stopped the answer with its content filter".into(),
            )),
            _ => {}
        }
        let calls = completion.tool_calls;
        self.conversation.push(Message::Assistant {
            content: (!completion.content.is_empty()).then_some(completion.content),
            tool_calls: calls.clone(),
            reasoning: completion.reasoning_items,
        });
        calls
    }

    /// Stop, or SubagentStop in a subagent.
    fn stop_event_name(&self) -> &'static str {
        if self.options.subagent.is_some() {
            "SubagentStop"
        } else {
            "Stop"
        }
    }

    /// The model answered without tools: the Stop hooks (SubagentStop in a subagent) decide
    /// whether that is the end. `stop_hook_active`: they sent it back to work before in this
    /// run.
    async fn stop_hooks(
        &self,
        turn: &Turn<'_>,
        tally: &Tally,
        stop_hook_active: bool,
    ) -> AfterStop {
        let stop = self
            .fire_in(self.stop_input(stop_hook_active, &tally.last_text), turn)
            .await;
        if turn.is_cancelled() {
            return AfterStop::End(RunEnd::Interrupted);
        }
        if let Some(reason) = stop.stop {
            return AfterStop::End(RunEnd::Stopped(reason));
        }
        if stop.decision == Some(Decision::Block) {
            let reason = stop.reason.unwrap_or_else(|| {
                format!("A {} hook asks you to continue.", self.stop_event_name())
            });
            return AfterStop::Continue(reason);
        }
        AfterStop::End(RunEnd::Completed)
    }

    /// One model request, with the recovery from a "context too long" answer: compact and
    /// retry, then elide and retry, then fail naming `/compact` and `/clear`.
    async fn request(&mut self, turn: &Turn<'_>) -> Result<Option<Completion>, AgentError> {
        let mut step = 0;
        loop {
            match self.request_once(turn).await {
                Err(AgentError::Llm(LlmError::ContextOverflow {
                    window, message, ..
                })) => {
                    step += 1;
                    if turn.is_cancelled() {
                        return Ok(None);
                    }
                    let refused = self.context_usage().await.used;
                    if !self
                        .recover_overflow(step, refused, window, turn.sink, turn.cancel)
                        .await
                    {
                        let window = self.context_usage().await.window;
                        return Err(AgentError::ContextFull { window, message });
                    }
                    if turn.is_cancelled() {
                        return Ok(None);
                    }
                }
                other => return other,
            }
        }
    }

    /// One model request, streamed. `Ok(None)` when the user interrupted it.
    async fn request_once(&mut self, turn: &Turn<'_>) -> Result<Option<Completion>, AgentError> {
        let span =
            crate::telemetry::Span::start("ling.model_request", || self.request_attributes());
        let started = std::time::Instant::now();
        let result = span.run(self.request_once_in_span(turn)).await;
        self.request_outcome(&span, &result, started);
        result
    }

    async fn request_once_in_span(
        &mut self,
        turn: &Turn<'_>,
    ) -> Result<Option<Completion>, AgentError> {
        let mut messages = Vec::with_capacity(self.conversation.history.len() + 1);
        messages.push(Message::system(self.conversation.system_prompt.clone()));
        messages.extend(context::rebuild::with_elisions(
            &self.conversation.history,
            &self.conversation.context.elided,
        ));
        let specs = self.host.tool_specs();
        let sent_len = self.conversation.history.len();
        let fixed_estimate = context::estimate::text(&self.conversation.system_prompt)
            + 4
            + context::estimate::tools(&specs);
        tracing::debug!(
            "agent: model request, {} messages, {} tools",
            messages.len(),
            specs.len()
        );
        // What was shown of the answer, kept if the user interrupts it.
        let mut shown = String::new();
        let mut on_event = |event: StreamEvent| match event {
            StreamEvent::TextDelta(text) => {
                shown.push_str(&text);
                turn.emit(AgentEvent::TextDelta(text))
            }
            StreamEvent::ReasoningDelta(text) => turn.emit(AgentEvent::ReasoningDelta(text)),
            StreamEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => turn.emit(AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            }),
            StreamEvent::ToolCallStarted { .. } => {}
        };
        let result = tokio::select! {
            result = self.llm.stream_chat(&messages, &specs, &mut on_event) => Some(result),
            () = turn.cancel.cancelled() => None,
        };
        match &result {
            Some(Ok(c)) => tracing::debug!(
                "agent: model answered, {} chars, {} tool calls, finish {:?}",
                c.content.len(),
                c.tool_calls.len(),
                c.finish_reason
            ),
            Some(Err(e)) => tracing::debug!("agent: model request failed: {e}"),
            None => tracing::debug!("agent: model request interrupted"),
        }
        if result.is_none() {
            // Interrupted: the answer as far as it was shown stays in the conversation, marked
            // as cut, so the model knows (and no two user messages follow each other).
            self.conversation.push(interrupted(&shown));
        }
        if let Some(Ok(Completion {
            usage: Some(usage), ..
        })) = &result
        {
            self.conversation
                .context
                .counted(usage.prompt_tokens, sent_len, fixed_estimate);
        }
        result.transpose().map_err(AgentError::from)
    }
}

/// The assistant's message of a request the user interrupted: what was shown of the answer,
/// marked as cut, so that the model knows and no two user messages follow each other.
fn interrupted(shown: &str) -> Message {
    let content = if shown.trim().is_empty() {
        "[interrupted by the user before answering]".to_string()
    } else {
        format!("{shown}\n\n[interrupted by the user: the answer was cut here]")
    };
    Message::Assistant {
        content: Some(content),
        tool_calls: Vec::new(),
        reasoning: Vec::new(),
    }
}
