//! An incremental Server-Sent Events parser (the WHATWG `text/event-stream` rules) for the two HTTP
//! transports. It takes raw body chunks as they arrive, which may split a line, a `\r\n` pair or a
//! UTF-8 sequence anywhere, and yields whole events. It remembers the last event id and the
//! server's `retry` delay, which resuming a stream needs even when the event that set them carried
//! no data (MCP servers open every stream with such a "priming" event).

use std::time::Duration;

/// One dispatched event. `data` is empty for priming events, which callers skip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type, `message`.
    pub event: Option<String>,
    pub data: String,
    /// The last event id in force when this event was dispatched.
    pub id: Option<String>,
}

impl SseEvent {
    pub fn kind(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line not yet terminated.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`, so a leading `\n` in the next one belongs to it.
    after_cr: bool,
    started: bool,
    event: Option<String>,
    data: Option<String>,
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of the last event that set one, to send as `Last-Event-ID` when resuming.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection delay the server asked for with `retry:`.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// A parser for the stream that resumes this one: it starts clean but keeps the last event
    /// id and the retry delay.
    pub fn next_stream(&self) -> Self {
        Self {
            last_event_id: self.last_event_id.clone(),
            retry: self.retry,
            ..Self::default()
        }
    }

    /// How many bytes of an event not yet complete it holds (the unterminated line and the
    /// data so far), for a caller bounding the size of one message.
    pub fn buffered(&self) -> usize {
        self.line.len() + self.data.as_ref().map_or(0, String::len)
    }

    /// Feeds one chunk of the body and returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = chunk;
        // An empty chunk between a `\r` and its `\n` must not forget the `\r`.
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            let crlf = rest[pos] == b'\r';
            rest = &rest[pos + 1..];
            if crlf {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.process_line(&line) {
                events.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        events
    }

    fn process_line(&mut self, raw: &[u8]) -> Option<SseEvent> {
        let mut raw = raw;
        if !self.started {
            self.started = true;
            if let Some(stripped) = raw.strip_prefix("\u{feff}".as_bytes()) {
                raw = stripped;
            }
        }
        if raw.is_empty() {
            return self.dispatch();
        }
        let line = String::from_utf8_lossy(raw);
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "id" if !value.contains('\0') => self.last_event_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        None
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

    fn event(kind: Option<&str>, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: kind.map(str::to_string),
            data: data.to_string(),
            id: id.map(str::to_string),
        }
    }

    #[test]
    fn priming_event_then_message_with_retry() {
        let mut p = SseParser::new();
        let got =
            p.feed(b"id: e-1\nretry: 500\ndata: \n\nevent: message\nid: e-2\ndata: {\"a\":1}\n\n");
        assert_eq!(
            got,
            vec![
                event(None, "", Some("e-1")),
                event(Some("message"), "{\"a\":1}", Some("e-2")),
            ]
        );
        assert_eq!(p.last_event_id(), Some("e-2"));
        assert_eq!(p.retry(), Some(Duration::from_millis(500)));
    }

    #[test]
    fn events_split_at_every_byte_and_crlf_across_chunks() {
        let body = b"\xEF\xBB\xBF: comment\r\nevent: endpoint\r\ndata: /messages?x=1\r\n\r\ndata: a\rdata: b\r\rdata:c\n\n";
        let mut p = SseParser::new();
        let mut got = Vec::new();
        for byte in body.iter() {
            got.extend(p.feed(std::slice::from_ref(byte)));
        }
        assert_eq!(
            got,
            vec![
                event(Some("endpoint"), "/messages?x=1", None),
                event(None, "a\nb", None),
                event(None, "c", None),
            ]
        );
    }

    #[test]
    fn multi_line_data_utf8_split_and_ignored_fields() {
        let mut p = SseParser::new();
        let text = "data\ndata: h\u{e9}llo\nfoo: bar\nretry: soon\nid: a\0b\n\n";
        let (a, b) = text
            .as_bytes()
            .split_at(text.find('\u{e9}').unwrap_or(0) + 1);
        let mut got = p.feed(a);
        got.extend(p.feed(b));
        assert_eq!(got, vec![event(None, "\nh\u{e9}llo", None)]);
        assert_eq!(p.retry(), None);
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_leaves_them_one_line_end() {
        let mut p = SseParser::new();
        let mut got = p.feed(b"data: a\r");
        got.extend(p.feed(b""));
        got.extend(p.feed(b"\nevent: x\r\n"));
        assert_eq!(got, vec![], "the LF after the CR is no blank line");
        assert_eq!(p.feed(b"\r\n"), vec![event(Some("x"), "a", None)]);
    }

    #[test]
    fn unterminated_event_is_not_dispatched_and_bad_utf8_is_replaced() {
        let mut p = SseParser::new();
        assert_eq!(
            p.feed(b"data: \xFF\n\ndata: cut"),
            vec![event(None, "\u{fffd}", None)]
        );
        assert_eq!(p.feed(b""), vec![]);
    }
}

/// Properties: however the body is cut into chunks, the parser yields the same events and ends
/// with the same id and retry delay; no input panics it.
#[cfg(test)]
mod properties {
    use super::*;
    use crate::test_support::split_at_cuts;
    use proptest::prelude::*;

    type Parsed = (Vec<SseEvent>, Option<String>, Option<Duration>);

    fn parse(pieces: &[&[u8]]) -> Parsed {
        let mut parser = SseParser::new();
        let events = pieces.iter().flat_map(|p| parser.feed(p)).collect();
        (events, parser.last_event_id.clone(), parser.retry)
    }

    /// Bytes that look like an MCP event stream often enough to reach every branch.
    fn stream_like_bytes() -> impl Strategy<Value = Vec<u8>> {
        let token = prop_oneof![
            Just(b"data:".to_vec()),
            Just(b"data: {\"jsonrpc\":\"2.0\"}".to_vec()),
            Just(b"event: message".to_vec()),
            Just(b"id: 7".to_vec()),
            Just(b"retry: 250".to_vec()),
            Just(b":".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec()),
            Just("\u{feff}".as_bytes().to_vec()),
            Just(b"\xff\0".to_vec()),
            proptest::collection::vec(any::<u8>(), 1..8),
        ];
        proptest::collection::vec(token, 0..40).prop_map(|t| t.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_bytes_parse_the_same_split_or_whole(
            body in prop_oneof![stream_like_bytes(), proptest::collection::vec(any::<u8>(), 0..256)],
            cuts in proptest::collection::vec(any::<usize>(), 0..24),
        ) {
            prop_assert_eq!(parse(&split_at_cuts(&body, &cuts)), parse(&[&body]));
        }
    }
}
