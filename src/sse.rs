//! Byte-level Server-Sent Events decoding (the WHATWG `text/event-stream` rules), for the model
//! client's streamed answers and MCP's two HTTP transports. It takes the body in chunks split at
//! arbitrary byte boundaries (inside a line, a `\r\n` pair or a UTF-8 character) and yields whole
//! events: LF, CRLF or CR line ends, `:` comment lines (keep-alives such as `: ping`), several
//! `data:` lines joined with `\n`, an event dispatched on a blank line, a leading byte-order mark
//! dropped. Lines are decoded as UTF-8 only once complete; bytes that are not UTF-8 at all become
//! U+FFFD rather than failing the stream. It remembers the last event id and the server's `retry`
//! delay, which resuming a stream needs even when the event that set them carried no data.
//! Memory can be bounded: a line, or the data of one event, longer than the decoder's limit is an
//! error as soon as it passes the limit, not after it was read whole.

use std::time::Duration;

/// One dispatched event. `data` is empty for an event with an empty `data:` line (MCP servers
/// "prime" a stream with one that only carries an id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type, `message`.
    pub event: Option<String>,
    pub data: String,
    /// The last event id in force when this event was dispatched.
    pub id: Option<String>,
}

impl SseEvent {
    /// The event's type: its `event:` field, or `message`.
    pub fn kind(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }
}

/// A line (or one event's data) grew past the decoder's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an event-stream line is longer than {limit} bytes")]
pub struct LineTooLong {
    pub limit: usize,
}

#[derive(Debug)]
pub struct SseDecoder {
    /// The longest line, and the most data of one event, accepted.
    limit: usize,
    /// Bytes of the line being read, not yet ended.
    line: Vec<u8>,
    /// The previous byte was CR: an LF right after it ends the same line, not a second one.
    after_cr: bool,
    /// A line was read already (a byte-order mark is dropped only from the first).
    started: bool,
    /// `data` lines of the event being built; `None` until its first `data` field.
    data: Option<String>,
    event: Option<String>,
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::with_limit(usize::MAX)
    }
}

impl SseDecoder {
    /// A decoder without a limit: its caller bounds what it feeds (see [`SseDecoder::buffered`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that refuses lines (and events' data) over `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            limit,
            line: Vec::new(),
            after_cr: false,
            started: false,
            data: None,
            event: None,
            last_event_id: None,
            retry: None,
        }
    }

    /// The id of the last event that set one, to send as `Last-Event-ID` when resuming.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection delay the server asked for with `retry:`.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// A decoder for the stream that resumes this one: it starts clean but keeps the limit, the
    /// last event id and the retry delay.
    pub fn next_stream(&self) -> Self {
        Self {
            last_event_id: self.last_event_id.clone(),
            retry: self.retry,
            ..Self::with_limit(self.limit)
        }
    }

    /// How many bytes of an event not yet complete it holds (the unterminated line and the
    /// data so far), for a caller bounding the size of one message.
    pub fn buffered(&self) -> usize {
        self.line.len() + self.data.as_ref().map_or(0, String::len)
    }

    /// Feeds the next piece of the body and returns the events it completed, or the error of a
    /// line over the limit (after which the decoder must not be fed again).
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, LineTooLong> {
        let mut events = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.take(&rest[..end])?;
                    self.after_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    if let Some(event) = self.end_line()? {
                        events.push(event);
                    }
                }
                None => {
                    self.take(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(events)
    }

    fn take(&mut self, bytes: &[u8]) -> Result<(), LineTooLong> {
        if self.line.len() + bytes.len() > self.limit {
            self.line = Vec::new();
            return Err(LineTooLong { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Ends the body. A last line without a line end is taken as complete, and an event whose
    /// blank line never came is still dispatched: some servers close right after the last `data:`
    /// line. Whether what arrived was the whole response is for the caller to judge.
    pub fn finish(&mut self) -> Result<Option<SseEvent>, LineTooLong> {
        let mut last = None;
        if !self.line.is_empty() {
            last = self.end_line()?;
        }
        Ok(last.or_else(|| self.dispatch()))
    }

    fn end_line(&mut self) -> Result<Option<SseEvent>, LineTooLong> {
        let line = std::mem::take(&mut self.line);
        let mut raw = line.as_slice();
        if !self.started {
            self.started = true;
            if let Some(stripped) = raw.strip_prefix("\u{feff}".as_bytes()) {
                raw = stripped;
            }
        }
        if raw.is_empty() {
            return Ok(self.dispatch());
        }
        if raw[0] == b':' {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(raw);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&text[..], ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) if data.len() + 1 + value.len() > self.limit => {
                    self.data = None;
                    return Err(LineTooLong { limit: self.limit });
                }
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "event" => self.event = Some(value.to_string()),
            "id" if !value.contains('\0') => self.last_event_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let data = self.data.take()?;
        Some(SseEvent {
            event: event.filter(|e| !e.is_empty()),
            data,
            id: self.last_event_id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn data(d: &str) -> SseEvent {
        event(None, d, None)
    }

    fn event(kind: Option<&str>, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: kind.map(str::to_string),
            data: data.to_string(),
            id: id.map(str::to_string),
        }
    }

    fn decode_all(pieces: &[&[u8]]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new();
        let mut events: Vec<SseEvent> = pieces
            .iter()
            .flat_map(|p| decoder.feed(p).unwrap())
            .collect();
        events.extend(decoder.finish().unwrap());
        events
    }

    #[test]
    fn splits_events_on_blank_lines() {
        let events = decode_all(&[b"data: {\"a\":1}\n\ndata: [DONE]\n\n"]);
        assert_eq!(events, vec![data("{\"a\":1}"), data("[DONE]")]);
    }

    #[test]
    fn crlf_and_bare_cr_line_ends() {
        let events = decode_all(&[b"data: one\r\n\r\ndata: two\r\rdata: three\n\n"]);
        assert_eq!(events, vec![data("one"), data("two"), data("three")]);
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let events = decode_all(&[b"data: one\r", b"\n", b"\r", b"\ndata: two\r\n\r\n"]);
        assert_eq!(events, vec![data("one"), data("two")]);
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_leaves_them_one_line_end() {
        let mut decoder = SseDecoder::new();
        let mut got = decoder.feed(b"data: a\r").unwrap();
        got.extend(decoder.feed(b"").unwrap());
        got.extend(decoder.feed(b"\nevent: x\r\n").unwrap());
        assert_eq!(got, vec![], "the LF after the CR is no blank line");
        assert_eq!(decoder.feed(b"\r\n"), Ok(vec![event(Some("x"), "a", None)]));
    }

    #[test]
    fn keep_alive_comments_are_skipped() {
        let events = decode_all(&[b": ping\n\n: keep-alive\ndata: x\n\n:\n\n"]);
        assert_eq!(events, vec![data("x")]);
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let events = decode_all(&[b"data: {\"a\":\ndata:  1}\nevent: chunk\n\n"]);
        assert_eq!(events, vec![event(Some("chunk"), "{\"a\":\n 1}", None)]);
    }

    #[test]
    fn byte_by_byte_feed_gives_the_same_events() {
        let body = "data: {\"c\":\"héllo ✓\"}\r\n\r\n: ping\n\ndata: [DONE]\n\n".as_bytes();
        let pieces: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(
            decode_all(&pieces),
            vec![data("{\"c\":\"héllo ✓\"}"), data("[DONE]")]
        );
    }

    #[test]
    fn a_byte_order_mark_and_comments_split_at_every_byte() {
        let body = b"\xEF\xBB\xBF: comment\r\nevent: endpoint\r\ndata: /messages?x=1\r\n\r\ndata: a\rdata: b\r\rdata:c\n\n";
        let pieces: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(
            decode_all(&pieces),
            vec![
                event(Some("endpoint"), "/messages?x=1", None),
                data("a\nb"),
                data("c"),
            ]
        );
    }

    #[test]
    fn utf8_character_split_across_chunks_survives() {
        let check = "✓".as_bytes();
        let events = decode_all(&[b"data: a", &check[..1], &check[1..], b"b\n\n"]);
        assert_eq!(events, vec![data("a✓b")]);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let events = decode_all(&[b"data: a\xff", b"\xfeb\n\n"]);
        assert_eq!(events, vec![data("a\u{fffd}\u{fffd}b")]);
    }

    #[test]
    fn an_unterminated_last_event_waits_for_finish() {
        let mut decoder = SseDecoder::new();
        assert_eq!(
            decoder.feed(b"data: \xFF\n\ndata: cut"),
            Ok(vec![data("\u{fffd}")])
        );
        assert_eq!(decoder.feed(b""), Ok(vec![]));
        assert_eq!(decoder.finish(), Ok(Some(data("cut"))));
        assert_eq!(decode_all(&[b"data: [DONE]"]), vec![data("[DONE]")]);
        assert_eq!(decode_all(&[b"data: last\n"]), vec![data("last")]);
        assert_eq!(decode_all(&[b": only a comment"]), vec![]);
    }

    #[test]
    fn field_without_colon_and_unknown_fields_are_ignored() {
        let events = decode_all(&[b"foo: bar\nretry: soon\ndata\n\n"]);
        assert_eq!(events, vec![data("")]);
    }

    #[test]
    fn ids_and_the_retry_delay_are_kept_for_resuming() {
        let mut decoder = SseDecoder::new();
        let got = decoder
            .feed(b"id: e-1\nretry: 500\ndata: \n\nevent: message\nid: e-2\ndata: {\"a\":1}\n\n")
            .unwrap();
        assert_eq!(
            got,
            vec![
                event(None, "", Some("e-1")),
                event(Some("message"), "{\"a\":1}", Some("e-2")),
            ]
        );
        assert_eq!(decoder.last_event_id(), Some("e-2"));
        assert_eq!(decoder.retry(), Some(Duration::from_millis(500)));
        // An id with a NUL and a retry that is not a number are ignored.
        assert_eq!(decoder.feed(b"id: a\0b\nretry: soon\n"), Ok(vec![]));
        let next = decoder.next_stream();
        assert_eq!(next.last_event_id(), Some("e-2"));
        assert_eq!(next.retry(), Some(Duration::from_millis(500)));
        assert_eq!(next.buffered(), 0);
    }

    #[test]
    fn an_empty_event_name_is_the_default_type() {
        let events = decode_all(&[b"event:\ndata: x\n\n"]);
        assert_eq!(events, vec![data("x")]);
        assert_eq!(events[0].kind(), "message");
    }

    #[test]
    fn a_line_over_the_limit_fails_as_soon_as_it_passes_it() {
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(
            decoder.feed(b"data: 0123456789\n\n"),
            Ok(vec![data("0123456789")])
        );
        // Split over pieces and not yet ended: still caught before the line is whole.
        assert_eq!(decoder.feed(b"data: 0123"), Ok(vec![]));
        assert_eq!(decoder.feed(b"456789abc"), Err(LineTooLong { limit: 16 }));
        assert!(decoder.line.capacity() == 0, "the long line is not kept");
        // Exactly at the limit is fine.
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(
            decoder.feed(b"data: 0123456789\n\n"),
            Ok(vec![data("0123456789")])
        );
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(
            decoder.feed(b"data: 0123456789a\n"),
            Err(LineTooLong { limit: 16 })
        );
    }

    #[test]
    fn many_short_data_lines_cannot_grow_one_event_past_the_limit() {
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(decoder.feed(b"data: 01234\ndata: 56789\n"), Ok(vec![]));
        assert_eq!(
            decoder.feed(b"data: abcde\n"),
            Err(LineTooLong { limit: 16 })
        );
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(
            decoder.feed(b"data: 0123456789a"),
            Err(LineTooLong { limit: 16 })
        );
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(decoder.feed(b"data: ab"), Ok(vec![]));
        assert_eq!(decoder.finish(), Ok(Some(data("ab"))));
    }
}

/// Properties over generated streams: splitting never changes what is decoded (the events, the
/// last id, the retry delay, whether a line was over the limit), and no input panics the decoder.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    use crate::test_support::split_at_cuts as split;

    /// The longest line a model stream may have by default.
    const LIMIT: usize = crate::config::DEFAULT_MAX_STREAM_LINE_BYTES;

    type Decoded = (Vec<SseEvent>, Option<String>, Option<Duration>);

    /// What `pieces` fed in turn then finished decode to, or `None` once a line passed `limit`.
    fn decode(limit: usize, pieces: &[&[u8]]) -> Option<Decoded> {
        let mut decoder = SseDecoder::with_limit(limit);
        let mut events = Vec::new();
        for piece in pieces {
            events.extend(decoder.feed(piece).ok()?);
        }
        events.extend(decoder.finish().ok()?);
        Some((events, decoder.last_event_id, decoder.retry))
    }

    const ENDINGS: [&str; 3] = ["\n", "\r\n", "\r"];

    /// One event as a server writes it: an optional `event:` name, a comment before it, and
    /// one or more `data:` lines.
    fn event() -> impl Strategy<Value = (Option<String>, Option<String>, Vec<String>)> {
        let text = "[^\r\n]{0,12}";
        (
            proptest::option::of(text),
            proptest::option::of(text),
            proptest::collection::vec(text, 1..4),
        )
    }

    /// A valid stream and the events it holds. Each line end is LF, CRLF or CR; an LF right
    /// after a CR would merge with it into one line end, so it is written as CRLF there.
    fn stream() -> impl Strategy<Value = (Vec<u8>, Vec<SseEvent>)> {
        let events = proptest::collection::vec(event(), 0..6);
        let endings = proptest::collection::vec(0..ENDINGS.len(), 64);
        (events, endings, any::<bool>()).prop_map(|(events, endings, close_last)| {
            let mut body = String::new();
            let mut ends = endings.iter().cycle();
            let mut line = |body: &mut String, text: &str| {
                body.push_str(text);
                let mut end = ENDINGS[*ends.next().unwrap_or(&0)];
                if end == "\n" && body.ends_with('\r') {
                    end = "\r\n";
                }
                body.push_str(end);
            };
            let mut expected = Vec::new();
            let count = events.len();
            for (i, (name, comment, data)) in events.into_iter().enumerate() {
                if let Some(comment) = comment {
                    line(&mut body, &format!(":{comment}"));
                }
                if let Some(name) = &name {
                    line(&mut body, &format!("event: {name}"));
                }
                for value in &data {
                    line(&mut body, &format!("data: {value}"));
                }
                if close_last || i + 1 < count {
                    line(&mut body, "");
                }
                expected.push(SseEvent {
                    event: name.filter(|n| !n.is_empty()),
                    data: data.join("\n"),
                    id: None,
                });
            }
            (body.into_bytes(), expected)
        })
    }

    /// Bytes that look like a stream often enough to reach every branch: field names, colons,
    /// both line ends, ids, retry delays, a byte-order mark, multi-byte and invalid UTF-8, mixed
    /// with anything at all.
    fn stream_like_bytes() -> impl Strategy<Value = Vec<u8>> {
        let token = prop_oneof![
            Just(b"data:".to_vec()),
            Just(b"data: ".to_vec()),
            Just(b"data: {\"jsonrpc\":\"2.0\"}".to_vec()),
            Just(b"event:".to_vec()),
            Just(b"event: message".to_vec()),
            Just(b"id: 7".to_vec()),
            Just(b"retry: 250".to_vec()),
            Just(b":".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec()),
            Just("✓".as_bytes().to_vec()),
            Just("\u{feff}".as_bytes().to_vec()),
            Just(b"\xff\0".to_vec()),
            proptest::collection::vec(any::<u8>(), 1..8),
        ];
        proptest::collection::vec(token, 0..40).prop_map(|t| t.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn a_valid_stream_decodes_to_its_events_however_it_is_split(
            (body, expected) in stream(),
            cuts in proptest::collection::vec(any::<usize>(), 0..24),
        ) {
            let whole = decode(LIMIT, &[&body]);
            prop_assert_eq!(whole.as_ref().map(|w| &w.0), Some(&expected));
            let pieces = split(&body, &cuts);
            prop_assert_eq!(decode(LIMIT, &pieces), whole);
        }

        /// Any bytes at all, under any limit: no panic, and the split body decodes to exactly
        /// what the whole one does, including whether a line was over the limit.
        #[test]
        fn any_bytes_decode_the_same_split_or_whole(
            body in prop_oneof![stream_like_bytes(), proptest::collection::vec(any::<u8>(), 0..256)],
            cuts in proptest::collection::vec(any::<usize>(), 0..24),
            limit in prop_oneof![1..48usize, Just(LIMIT), Just(usize::MAX)],
        ) {
            let whole = decode(limit, &[&body]);
            prop_assert_eq!(decode(limit, &split(&body, &cuts)), whole);
        }
    }
}
