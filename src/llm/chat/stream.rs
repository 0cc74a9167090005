//! Assembles chat-completion chunks (the `data:` payloads of the event stream) into
//! [`StreamEvent`]s as they arrive and into one [`Completion`] at the end. Tool calls are put
//! together by `index`: ids, names and argument fragments may each be spread over many chunks and
//! interleaved between calls. Also reads the shapes servers really send (docs/configuration.md,
//! "Stream shapes Ling reads"): `[DONE]`, usage chunks with empty `choices`, `reasoning_content`
//! (or `reasoning`) deltas, calls without `index` or `id`, arguments sent as a JSON object instead
//! of a string, an id or name repeated in every chunk of a call, `finish_reason: "stop"` after tool
//! calls, an `{"error":...}` object inside the stream, and a stream that ends early (complete if a
//! `finish_reason` already arrived, cut otherwise).

use serde::Deserialize;
use serde_json::Value;

use crate::llm::stream::{
    StreamError, StreamParser, ToolCalls, error_text, finish_with_calls, parse,
};
use crate::llm::types::{Completion, FinishReason, StreamEvent, Usage};

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<RawUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    /// A non-streamed response (`message`) reads the same way as one big delta.
    #[serde(default, alias = "message")]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    /// `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (OpenRouter, Ollama).
    #[serde(default, alias = "reasoning")]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    /// A fragment of the JSON text, as the API defines it; some proxies and local servers send
    /// the arguments as a JSON object instead, which is taken as its JSON text.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct RawUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl RawUsage {
    fn usage(&self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.unwrap_or(0),
            completion_tokens: self.completion_tokens.unwrap_or(0),
            cache_read_tokens: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
            reasoning_tokens: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            ..Usage::default()
        }
    }
}

#[derive(Debug, Default)]
pub struct ChunkAssembler {
    content: String,
    reasoning: String,
    calls: ToolCalls,
    /// The index the last tool-call delta went to, for servers that leave `index` out.
    last_call: Option<usize>,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
    shown: bool,
}

impl ChunkAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    fn apply_choice(&mut self, choice: Choice, on_event: &mut dyn FnMut(StreamEvent)) {
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.reasoning_content.filter(|t| !t.is_empty()) {
                self.reasoning.push_str(&text);
                self.shown = true;
                on_event(StreamEvent::ReasoningDelta(text));
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.content.push_str(&text);
                self.shown = true;
                on_event(StreamEvent::TextDelta(text));
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.apply_call(call, on_event);
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(parse_finish_reason(&reason));
            self.shown |= self.calls.announce_before(usize::MAX, on_event);
        }
    }

    fn apply_call(&mut self, delta: ToolCallDelta, on_event: &mut dyn FnMut(StreamEvent)) {
        let index = match delta.index {
            Some(index) => index,
            None => self.index_without_one(delta.id.as_deref()),
        };
        // A delta for a later call means the earlier calls' names are complete.
        self.shown |= self.calls.announce_before(index, on_event);
        self.last_call = Some(index);
        let call = self.calls.get_mut(index);
        // Some servers repeat the whole id and name in every chunk of a call: a fragment equal
        // to all that came before is that repeat, not more of it.
        if let Some(id) = delta.id
            && id != call.id
        {
            call.id.push_str(&id);
        }
        let mut arguments_began = false;
        if let Some(function) = delta.function {
            if let Some(name) = function.name
                && name != call.name
            {
                call.name.push_str(&name);
            }
            match function.arguments {
                Some(Value::String(fragment)) => {
                    call.arguments.push_str(&fragment);
                    arguments_began = true;
                }
                Some(Value::Null) | None => {}
                Some(whole) => {
                    call.arguments.push_str(&whole.to_string());
                    arguments_began = true;
                }
            }
        }
        // Arguments stream after the name, so once they begin the name is whole.
        if arguments_began {
            self.shown |= self.calls.announce(index, on_event);
        }
    }

    /// Servers that leave out `index` send one call at a time: a new id starts the next call.
    fn index_without_one(&self, id: Option<&str>) -> usize {
        match (self.last_call, id) {
            (None, _) => 0,
            (Some(last), Some(id)) if !id.is_empty() && !self.calls.contains_id(id) => last + 1,
            (Some(last), _) => last,
        }
    }
}

impl StreamParser for ChunkAssembler {
    fn push(
        &mut self,
        data: &str,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamError> {
        if self.done {
            return Ok(());
        }
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = parse(data)?;
        if let Some(error) = chunk.error {
            return Err(StreamError::Server(error_text(&error)));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.usage());
        }
        // Only `n = 1` is ever requested; other choices would be a different answer.
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index == 0 {
                self.apply_choice(choice, on_event);
            }
        }
        Ok(())
    }

    fn push_whole(
        &mut self,
        body: &str,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamError> {
        self.push(body, on_event)?;
        self.done = true;
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn has_shown_output(&self) -> bool {
        self.shown
    }

    /// Complete if `[DONE]` or a `finish_reason` arrived; otherwise it was cut.
    fn finish(
        mut self: Box<Self>,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Completion, StreamError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(StreamError::Cut);
        }
        self.calls.announce_before(usize::MAX, on_event);
        let this = *self;
        let tool_calls = this.calls.into_calls();
        let finish_reason = finish_with_calls(this.finish_reason, !tool_calls.is_empty());
        Ok(Completion {
            content: this.content,
            reasoning: this.reasoning,
            tool_calls,
            finish_reason,
            usage: this.usage,
            reasoning_items: Vec::new(),
            citations: Vec::new(),
        })
    }
}

fn parse_finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" | "eos" | "end_turn" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::types::ToolCall;
    use crate::sse::SseDecoder;
    use pretty_assertions::assert_eq;

    /// Runs raw body bytes, fed in the given pieces, through the decoder and the assembler.
    fn run(pieces: &[&[u8]]) -> (Vec<StreamEvent>, Result<Completion, StreamError>) {
        let mut events = Vec::new();
        let mut on_event = |e: StreamEvent| events.push(e);
        let mut decoder = SseDecoder::new();
        let mut assembler = Box::new(ChunkAssembler::new());
        let mut result = Ok(());
        for piece in pieces {
            for event in decoder.feed(piece).unwrap() {
                result = result.and_then(|()| assembler.push(&event.data, &mut on_event));
            }
        }
        if let Some(event) = decoder.finish().unwrap() {
            result = result.and_then(|()| assembler.push(&event.data, &mut on_event));
        }
        let completion = result.and_then(|()| assembler.finish(&mut on_event));
        (events, completion)
    }

    fn completion(result: Result<Completion, StreamError>) -> Completion {
        result.expect("stream failed")
    }

    const TOOL_STREAM: &str = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_\",\"type\":\"function\",\"function\":{\"name\":\"read_\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"file\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"pa\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":\\\"a.rs\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34,\"total_tokens\":46}}\n\n",
        "data: [DONE]\n\n",
    );

    #[test]
    fn fragmented_parallel_tool_calls_are_assembled_by_index() {
        let (events, result) = run(&[TOOL_STREAM.as_bytes()]);
        assert_eq!(
            completion(result),
            Completion {
                content: String::new(),
                reasoning: String::new(),
                tool_calls: vec![
                    ToolCall::new("call_a", "read_file", "{\"path\":\"a.rs\"}"),
                    ToolCall::new("call_b", "bash", "{\"command\":\"ls\"}"),
                ],
                finish_reason: FinishReason::ToolCalls,
                usage: Some(Usage::new(12, 34)),
                reasoning_items: Vec::new(),
                citations: Vec::new(),
            }
        );
        assert_eq!(
            events,
            vec![
                StreamEvent::ToolCallStarted {
                    index: 0,
                    id: "call_a".into(),
                    name: "read_file".into()
                },
                StreamEvent::ToolCallStarted {
                    index: 1,
                    id: "call_b".into(),
                    name: "bash".into()
                },
            ]
        );
    }

    #[test]
    fn byte_by_byte_feed_gives_the_same_completion() {
        let pieces: Vec<&[u8]> = TOOL_STREAM.as_bytes().chunks(1).collect();
        let (byte_events, byte_result) = run(&pieces);
        let (events, result) = run(&[TOOL_STREAM.as_bytes()]);
        assert_eq!(byte_events, events);
        assert_eq!(completion(byte_result), completion(result));
    }

    #[test]
    fn text_reasoning_keepalives_and_crlf() {
        let body = concat!(
            ": ping\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"think\"}}]}\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n",
            ": keep-alive\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\r\n\r\n",
            "data: [DONE]\r\n\r\n",
        );
        let (events, result) = run(&[body.as_bytes()]);
        let done = completion(result);
        assert_eq!(
            events,
            vec![
                StreamEvent::ReasoningDelta("think".into()),
                StreamEvent::TextDelta("Hel".into()),
                StreamEvent::TextDelta("lo".into()),
            ]
        );
        assert_eq!(
            (done.content.as_str(), done.reasoning.as_str()),
            ("Hello", "think")
        );
        assert_eq!(done.finish_reason, FinishReason::Stop);
        assert_eq!(done.usage, None);
    }

    #[test]
    fn finish_reasons_are_mapped() {
        for (raw, expected) in [
            ("stop", FinishReason::Stop),
            ("tool_calls", FinishReason::ToolCalls),
            ("length", FinishReason::Length),
            ("content_filter", FinishReason::ContentFilter),
            ("something_new", FinishReason::Other),
        ] {
            let body = format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{raw}\"}}]}}\n\ndata: [DONE]\n\n"
            );
            let (_, result) = run(&[body.as_bytes()]);
            assert_eq!(completion(result).finish_reason, expected, "{raw}");
        }
    }

    #[test]
    fn invalid_utf8_split_across_chunks_does_not_fail_the_stream() {
        let check = "✓".as_bytes();
        let (events, result) = run(&[
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a",
            &check[..2],
            &check[2..],
            b"\xffb\"},\"finish_reason\":\"stop\"}]}\n\n",
        ]);
        assert_eq!(events, vec![StreamEvent::TextDelta("a✓\u{fffd}b".into())]);
        assert_eq!(completion(result).content, "a✓\u{fffd}b");
    }

    #[test]
    fn malformed_json_is_an_error_naming_the_chunk() {
        let (_, result) = run(&[b"data: {\"choices\": [oops\n\n"]);
        match result {
            Err(StreamError::Malformed(message)) => assert!(message.contains("oops"), "{message}"),
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn error_object_inside_the_stream() {
        let (_, result) = run(&[
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
            b"data: {\"error\":{\"message\":\"overloaded, try later\",\"type\":\"server_error\"}}\n\n",
        ]);
        assert_eq!(
            result,
            Err(StreamError::Server("overloaded, try later".into()))
        );
    }

    #[test]
    fn end_without_done_is_cut_unless_a_finish_reason_came() {
        let (events, result) =
            run(&[b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"part\"}}]}\n\n"]);
        assert_eq!(events, vec![StreamEvent::TextDelta("part".into())]);
        assert_eq!(result, Err(StreamError::Cut));

        let (_, result) = run(&[
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"all\"},\"finish_reason\":\"stop\"}]}\n\n",
        ]);
        assert_eq!(completion(result).content, "all");
    }

    #[test]
    fn calls_without_index_or_id_get_their_own_slots() {
        let (events, result) = run(&[concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"x\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"y\",\"function\":{\"name\":\"b\",\"arguments\":\"{\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,\"function\":{\"name\":\"c\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: [DONE]\n\n",
        )
        .as_bytes()]);
        let done = completion(result);
        assert_eq!(
            done.tool_calls,
            vec![
                ToolCall::new("x", "a", "{}"),
                ToolCall::new("y", "b", "{}"),
                ToolCall::new("call_2", "c", "{}"),
            ]
        );
        assert_eq!(done.finish_reason, FinishReason::ToolCalls);
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn a_non_streamed_message_reads_like_one_delta() {
        let mut assembler = Box::new(ChunkAssembler::new());
        let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#;
        let mut events = Vec::new();
        let mut on_event = |e: StreamEvent| events.push(e);
        assert_eq!(assembler.push_whole(body, &mut on_event), Ok(()));
        let done = completion(assembler.finish(&mut on_event));
        assert_eq!(done.content, "hi");
        assert_eq!(done.tool_calls, vec![ToolCall::new("c1", "bash", "{}")]);
    }

    #[test]
    fn data_after_done_is_ignored() {
        let (_, result) = run(&[b"data: [DONE]\n\ndata: {garbage\n\n"]);
        assert_eq!(completion(result).finish_reason, FinishReason::Other);
    }

    // The stream shapes of docs/configuration.md, "Stream shapes Ling reads", one test each
    // (index-less calls, missing ids and reasoning_content have theirs above).

    #[test]
    fn arguments_sent_as_a_json_object_are_taken_as_their_text() {
        // One chunk per call, no index, no id, the arguments an object (as some proxies and
        // local servers send them), and `stop` after the calls.
        let (events, result) = run(&[concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"read_file\",\"arguments\":{\"path\":\"a.rs\"}}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n",
        )
        .as_bytes()]);
        let done = completion(result);
        assert_eq!(
            done.tool_calls,
            vec![
                ToolCall::new("call_0", "read_file", r#"{"path":"a.rs"}"#),
                ToolCall::new("b", "bash", r#"{"command":"ls"}"#),
            ]
        );
        assert_eq!(events.len(), 2, "{events:?}");
    }

    #[test]
    fn finish_reason_stop_after_calls_still_runs_them() {
        let (_, result) = run(&[concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"bash\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        )
        .as_bytes()]);
        let done = completion(result);
        assert_eq!(done.finish_reason, FinishReason::ToolCalls);
        assert_eq!(done.tool_calls, vec![ToolCall::new("c", "bash", "{}")]);
        // Without calls, stop stays stop.
        let (_, result) = run(&[b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n"]);
        assert_eq!(completion(result).finish_reason, FinishReason::Stop);
    }

    #[test]
    fn an_id_and_name_repeated_in_every_chunk_are_not_doubled() {
        let (events, result) = run(&[concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_9\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_9\",\"function\":{\"name\":\"bash\",\"arguments\":\"\\\":\\\"ls\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        )
        .as_bytes()]);
        assert_eq!(
            completion(result).tool_calls,
            vec![ToolCall::new("call_9", "bash", r#"{"command":"ls"}"#)]
        );
        assert_eq!(events.len(), 1, "{events:?}");
    }

    #[test]
    fn cached_and_reasoning_token_details_are_read() {
        let (_, result) = run(&[concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":30,\"prompt_tokens_details\":{\"cached_tokens\":64},\"completion_tokens_details\":{\"reasoning_tokens\":20}}}\n\n",
            "data: [DONE]\n\n",
        )
        .as_bytes()]);
        assert_eq!(
            completion(result).usage,
            Some(Usage {
                cache_read_tokens: 64,
                reasoning_tokens: 20,
                ..Usage::new(100, 30)
            })
        );
    }
}
