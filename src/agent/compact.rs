//! Compaction, the agent's side: before a request that would fill the context past
//! `autoCompactPercent`, old large tool outputs are elided from what is sent (never from the
//! transcript); when that is not enough, PreCompact fires (it may block), the model is asked for
//! a summary in a request that offers no tools (`src/prompts/compact.md`; in parts when the
//! conversation does not fit one request), the history becomes the summary and the recent
//! messages verbatim (the session's to-do list, which both the summary request and the summary
//! carry, stays as it was), the transcript records it as its own line, SessionStart fires with
//! `source: "compact"`, and the run goes on. A "context too long" answer compacts and retries
//! once, then elides, then fails with an error naming `/compact` and `/clear`.

use tokio_util::sync::CancellationToken;

use super::context::{ContextUsage, estimate, rebuild};
use super::{Agent, AgentError, AgentEvent, EventSink, StartSource, render_todos};
use crate::hooks::HookInput;
use crate::llm::{LlmError, Message, StreamEvent};

/// The instructions of the summary request.
const COMPACT_PROMPT: &str = include_str!("../prompts/compact.md");
/// How many times a summary that overflows is tried again in smaller parts.
const MAX_SPLITS: u32 = 4;

/// What started a compaction, as PreCompact's `trigger` and the stream-json event say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Auto,
    Manual,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Manual => "manual",
        }
    }
}

/// How a compaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compaction {
    Done {
        pre_tokens: u64,
        post_tokens: u64,
    },
    /// A PreCompact hook blocked it, for this reason.
    Blocked(String),
    /// Nothing before the recent messages to summarise.
    TooShort,
    /// The summary request failed; the history is unchanged.
    Failed(String),
    Interrupted,
}

/// Why a summary may not replace `replaced`: one that is not smaller than what it replaces
/// gains nothing, and one over a quarter of the window would leave little room for the
/// conversation that follows (and fill it on the next compaction). `None` when it is fine.
fn oversized(summary: &str, replaced: &[Message], window: u64) -> Option<String> {
    let tokens = estimate::text(summary);
    let before = estimate::messages(replaced);
    if tokens >= before {
        return Some(format!(
            "the model's summary (about {tokens} tokens) is not smaller than the messages it \
             would replace (about {before} tokens), so the history is kept as it was"
        ));
    }
    let cap = window / 4;
    if tokens > cap {
        return Some(format!(
            "the model's summary (about {tokens} tokens) is over a quarter of the context window \
             ({window} tokens), so the history is kept as it was"
        ));
    }
    None
}

/// The summary with the session's to-do list after it, so the model still sees the list it
/// keeps once the calls that wrote it are summarised away.
fn with_todos(summary: String, todos: &[super::Todo]) -> String {
    if todos.is_empty() {
        return summary;
    }
    format!(
        "{summary}\n\nThe current to-do list (todo_write keeps it):\n{}",
        render_todos(todos)
    )
}

impl Agent {
    /// How full the context is now, by part.
    pub async fn context_usage(&mut self) -> ContextUsage {
        let model = self.llm.config().model.clone();
        let specs = self.host.tool_specs();
        self.conversation
            .context
            .usage(
                &model,
                &self.conversation.system_prompt,
                &specs,
                &self.conversation.history,
            )
            .await
    }

    /// REPL `/compact [instructions]`: compacts now, whatever the usage.
    pub async fn compact(
        &mut self,
        instructions: &str,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> Compaction {
        self.compact_with(Trigger::Manual, instructions, None, sink, cancel)
            .await
    }

    /// Before a request: elide, then compact, when the request would pass the threshold.
    pub(super) async fn fit_context(&mut self, sink: &dyn EventSink, cancel: &CancellationToken) {
        if !self.conversation.context.options.auto_compact {
            return;
        }
        let usage = self.context_usage().await;
        let threshold = self.conversation.context.threshold(usage.window);
        if usage.used < threshold {
            return;
        }
        if self.elide_old_outputs(usage.window, threshold).await {
            return;
        }
        if let Compaction::Blocked(reason) | Compaction::Failed(reason) = self
            .compact_with(Trigger::Auto, "", None, sink, cancel)
            .await
        {
            sink.emit(AgentEvent::Warning(format!(
                "the conversation was not compacted ({reason}); the request may not fit the \
                 model's context"
            )));
        }
    }

    /// Elides old large tool outputs, oldest first, until the context is under `target`.
    /// True when that was enough.
    async fn elide_old_outputs(&mut self, window: u64, target: u64) -> bool {
        let protect_from = rebuild::cut_point(&self.conversation.history, self.keep_budget(window))
            .unwrap_or(self.conversation.history.len());
        let candidates = rebuild::elidable(
            &self.conversation.history,
            protect_from,
            &self.conversation.context.elided,
        );
        if candidates.is_empty() {
            return false;
        }
        // From here the count is the estimate: what the server counted had the outputs whole.
        self.conversation.context.forget_count();
        let mut used = self.context_usage().await.used;
        for id in candidates {
            let saved = self.conversation.history.iter().find_map(|m| match m {
                Message::Tool {
                    tool_call_id,
                    content,
                    ..
                } if *tool_call_id == id => {
                    let note = Message::tool(id.clone(), rebuild::elision_note(content));
                    Some(estimate::message(m).saturating_sub(estimate::message(&note)))
                }
                _ => None,
            });
            self.conversation.context.elided.insert(id);
            used = used.saturating_sub(saved.unwrap_or(0));
            if used < target {
                tracing::debug!(
                    "context: elided {} old tool outputs",
                    self.conversation.context.elided.len()
                );
                return true;
            }
        }
        false
    }

    /// Elides every long tool output the model has already answered (the last resort before
    /// giving up on a request that does not fit). True when anything was elided.
    fn elide_all_answered(&mut self) -> bool {
        let protect_from = self
            .conversation
            .history
            .iter()
            .rposition(|m| matches!(m, Message::Assistant { .. }))
            .unwrap_or(0);
        let candidates = rebuild::elidable(
            &self.conversation.history,
            protect_from,
            &self.conversation.context.elided,
        );
        let any = !candidates.is_empty();
        self.conversation.context.elided.extend(candidates);
        self.conversation.context.forget_count();
        any
    }

    /// The tokens of recent messages kept verbatim by a compaction.
    fn keep_budget(&self, window: u64) -> u64 {
        self.conversation.context.threshold(window) / 3
    }

    /// Compacts as if the window were at most `window_cap` (after the server refused a
    /// request, what it holds is less than was sent).
    pub(super) async fn compact_with(
        &mut self,
        trigger: Trigger,
        instructions: &str,
        window_cap: Option<u64>,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> Compaction {
        let before = self.context_usage().await;
        let window = window_cap.map_or(before.window, |cap| cap.min(before.window));
        let keep = self.keep_budget(window);
        let cut = rebuild::cut_point(&self.conversation.history, keep).or_else(|| {
            // Asked for by hand: summarise all before the latest request.
            let last = self
                .conversation
                .history
                .iter()
                .rposition(|m| matches!(m, Message::User { .. }))?;
            (trigger == Trigger::Manual && last > 0).then_some(last)
        });
        let Some(cut) = cut else {
            return Compaction::TooShort;
        };
        let hooks = self
            .fire_cancellable(
                HookInput::PreCompact {
                    trigger: trigger.as_str().to_string(),
                    custom_instructions: instructions.to_string(),
                },
                sink,
                cancel,
            )
            .await;
        if cancel.is_cancelled() {
            return Compaction::Interrupted;
        }
        if hooks.is_blocked() || hooks.stop.is_some() {
            let reason = hooks
                .reason
                .or(hooks.stop)
                .unwrap_or_else(|| "a PreCompact hook blocked it".into());
            return Compaction::Blocked(reason);
        }
        sink.emit(AgentEvent::CompactStarted {
            trigger: trigger.as_str().to_string(),
        });
        // Owned: the summary request borrows the agent mutably.
        let prefix = self.conversation.history[..cut].to_vec();
        let summary = match self.summarise(&prefix, instructions, window, cancel).await {
            Ok(Some(summary)) => summary,
            Ok(None) => return Compaction::Interrupted,
            Err(e) => return Compaction::Failed(e.to_string()),
        };
        if let Some(refusal) = oversized(&summary, &prefix, window) {
            return Compaction::Failed(refusal);
        }
        let summary = with_todos(summary, &self.conversation.session.todos());
        let rebuilt = rebuild::rebuild(&self.conversation.history, cut, &summary);
        let (old, new) = (
            estimate::messages(&self.conversation.history),
            estimate::messages(&rebuilt),
        );
        if new >= old {
            // A compaction must not grow the conversation: keep it as it was.
            return Compaction::Failed(format!(
                "the summary was not shorter than what it would replace (about {old} → {new} \
                 tokens), so the conversation is kept as it was"
            ));
        }
        self.conversation.history = rebuilt;
        self.conversation.context.elided.clear();
        self.conversation.context.forget_count();
        let after = self.context_usage().await;
        self.conversation.session.record_compaction(
            trigger.as_str(),
            before.used,
            after.used,
            &self.conversation.history,
        );
        // SessionStart cannot stop a compaction; its context is the new system prompt's.
        let _ = self.fire_session_start(StartSource::Compact, sink).await;
        let post_tokens = self.context_usage().await.used;
        sink.emit(AgentEvent::Compacted {
            trigger: trigger.as_str().to_string(),
            pre_tokens: before.used,
            post_tokens,
        });
        Compaction::Done {
            pre_tokens: before.used,
            post_tokens,
        }
    }

    /// The model's summary of `messages`; in parts when they do not fit one request.
    /// `Ok(None)` when interrupted.
    async fn summarise(
        &mut self,
        messages: &[Message],
        instructions: &str,
        window: u64,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, AgentError> {
        let overhead = estimate::text(COMPACT_PROMPT) + estimate::text(instructions) + 200;
        // Two thirds of the window for the conversation, the rest for the prompt and the answer.
        let mut part_tokens = (window * 65 / 100).saturating_sub(overhead).max(256);
        let mut splits = 0;
        'split: loop {
            let parts = rebuild::render_parts(messages, part_tokens);
            let mut summaries = Vec::with_capacity(parts.len());
            for (index, part) in parts.iter().enumerate() {
                let which = if parts.len() > 1 {
                    format!(" (part {} of {})", index + 1, parts.len())
                } else {
                    String::new()
                };
                match self
                    .summary_request(part, &which, instructions, cancel)
                    .await
                {
                    Ok(Some(summary)) => summaries.push(summary),
                    Ok(None) => return Ok(None),
                    Err(AgentError::Llm(LlmError::ContextOverflow { window, .. }))
                        if splits < MAX_SPLITS =>
                    {
                        if let Some(window) = window {
                            self.conversation.context.learn_window(window);
                            self.llm.remember_window(window);
                        }
                        splits += 1;
                        part_tokens = (part_tokens / 2).max(128);
                        continue 'split;
                    }
                    Err(e) => return Err(e),
                }
            }
            return Ok(Some(match summaries.len() {
                1 => summaries.remove(0),
                n => summaries
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("Part {} of {n}:\n{s}", i + 1))
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            }));
        }
    }

    /// One summary request: no tools, nothing streamed to the user.
    async fn summary_request(
        &mut self,
        conversation: &str,
        which: &str,
        instructions: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, AgentError> {
        let mut request = format!(
            "Summarise this conversation{which}:\n\n<conversation>\n{conversation}</conversation>"
        );
        if !instructions.trim().is_empty() {
            request.push_str(&format!(
                "\n\nThe user's instructions for the summary: {}",
                instructions.trim()
            ));
        }
        let todos = self.conversation.session.todos();
        if !todos.is_empty() {
            request.push_str(&format!(
                "\n\nThe current to-do list (it is kept as it is after the summary):\n{}",
                render_todos(&todos)
            ));
        }
        let messages = [Message::system(COMPACT_PROMPT), Message::user(request)];
        let mut on_event = |_: StreamEvent| {};
        let result = tokio::select! {
            result = self.llm.stream_chat(&messages, &[], &mut on_event) => result,
            () = cancel.cancelled() => return Ok(None),
        };
        let completion = result?;
        if let Some(usage) = completion.usage {
            // A summary is paid for like any request: it counts against the spend cap.
            self.spend_on(usage);
            self.conversation.usage += usage;
        }
        let summary = completion.content.trim().to_string();
        if summary.is_empty() {
            return Err(AgentError::EmptySummary);
        }
        Ok(Some(summary))
    }

    /// After a "context too long" answer to a request of about `refused` tokens (the window
    /// the server stated, if it did): the next step of recovery. False when none is left.
    pub(super) async fn recover_overflow(
        &mut self,
        step: u32,
        refused: u64,
        window: Option<u64>,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> bool {
        // What the server holds is less than what it refused.
        let cap = window.unwrap_or(refused * 9 / 10);
        self.conversation.context.learn_window(cap);
        if let Some(window) = window {
            self.llm.remember_window(window);
        }
        if step == 1 {
            sink.emit(AgentEvent::Warning(
                "the request did not fit the model's context; compacting the conversation".into(),
            ));
            if let Compaction::Done { .. } = self
                .compact_with(Trigger::Auto, "", Some(cap), sink, cancel)
                .await
            {
                return true;
            }
        }
        if step <= 2 && self.elide_all_answered() {
            sink.emit(AgentEvent::Warning(
                "the request still did not fit; old tool outputs are left out of it".into(),
            ));
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_must_be_smaller_than_what_it_replaces_and_the_window() {
        let replaced: Vec<Message> = (0..40)
            .map(|n| Message::user(format!("message {n}: ").repeat(50)))
            .collect();
        assert_eq!(oversized("a short summary", &replaced, 32_768), None);
        let huge = "word ".repeat(20_000);
        let why = oversized(&huge, &replaced, 1_000_000).unwrap_or_default();
        assert!(why.contains("not smaller than the messages"), "{why}");
        let big = "word ".repeat(3_000);
        let why = oversized(&big, &replaced, 8_000).unwrap_or_default();
        assert!(why.contains("quarter of the context window"), "{why}");
        assert_eq!(oversized(&big, &replaced, 1_000_000), None);
    }
}
