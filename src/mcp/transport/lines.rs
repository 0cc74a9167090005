//! Bounded line reading for the stdio transport, and what an overlong line still tells: a line
//! longer than the limit is skipped as it streams by, never buffered whole, but its first and last
//! few KiB are kept, so the id of the JSON-RPC message it was can be read
//! (`Oversized::kind`) and the call it answers failed at once rather than left to its
//! timeout.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::mcp::jsonrpc::RequestId;

/// How much of the start and of the end of an overlong line is kept.
const KEPT: usize = 4096;

/// One line read.
pub(crate) enum Line {
    Text(Vec<u8>),
    /// A line longer than the limit, skipped.
    TooLong(Oversized),
}

/// What is known of a skipped overlong line.
pub(crate) struct Oversized {
    /// Its length in bytes.
    pub(crate) len: usize,
    /// Its first [`KEPT`] bytes.
    head: Vec<u8>,
    /// Its last [`KEPT`] bytes (overlapping `head` only when the line is short).
    tail: Vec<u8>,
}

impl Oversized {
    /// What the line was, as far as its two ends tell: the reply to a request with this id when
    /// the top-level object has a member `"id"` among its first KiB
    /// (`{"jsonrpc":"2.0","id":7,"result":...`) or among its last members
    /// (`...,"jsonrpc":"2.0","id":7}`, the order the TypeScript SDK writes); a message of the
    /// server's own when it has a `"method"`; a reply of unknown id when only a top-level
    /// `"jsonrpc"` shows it is JSON-RPC; otherwise not a message at all.
    pub(crate) fn kind(&self) -> Skipped {
        let head = match scan_head(&self.head) {
            Head::Id(id) => return Skipped::Reply(id),
            Head::Other(seen) => seen,
        };
        if head.method {
            return Skipped::ServerMessage;
        }
        let tail = scan_tail(&self.tail);
        if tail.method {
            return Skipped::ServerMessage;
        }
        match tail.id {
            Some(id) => Skipped::Reply(id),
            None if head.jsonrpc || tail.jsonrpc => Skipped::UnknownReply,
            None => Skipped::NotJsonRpc,
        }
    }
}

/// What a skipped overlong line was ([`Oversized::kind`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Skipped {
    /// The reply to Ling's request with this id.
    Reply(RequestId),
    /// A request or notification of the server's (nothing of Ling's waits for it).
    ServerMessage,
    /// A JSON-RPC message whose id neither end shows: any call in flight may be the one.
    UnknownReply,
    /// Not recognisably JSON-RPC (logged and skipped, as any other line that is not).
    NotJsonRpc,
}

/// Splits a byte stream into lines of at most `limit` bytes, reading in buffer-sized chunks, so
/// memory stays bounded whatever the server writes.
pub(crate) struct LineReader<R> {
    reader: R,
    /// The longest line kept.
    limit: usize,
    line: Vec<u8>,
    /// The overlong line being skipped.
    skipping: Option<Oversized>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn with_limit(reader: R, limit: usize) -> Self {
        Self {
            reader,
            limit,
            line: Vec::new(),
            skipping: None,
        }
    }

    pub(crate) async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                if let Some(skipped) = self.skipping.take() {
                    return Ok(Some(Line::TooLong(skipped)));
                }
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Text(std::mem::take(&mut self.line))));
            }
            let (take, complete) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            let piece = &chunk[..take];
            match self.skipping.as_mut() {
                Some(skipped) => {
                    skipped.len += take;
                    keep_tail(&mut skipped.tail, piece);
                }
                None if self.line.len() + take > self.limit => {
                    let mut line = std::mem::take(&mut self.line);
                    let mut head: Vec<u8> = line.iter().take(KEPT).copied().collect();
                    let room = KEPT - head.len();
                    head.extend_from_slice(&piece[..piece.len().min(room)]);
                    let len = line.len() + take;
                    let from = line.len().saturating_sub(KEPT);
                    line.drain(..from);
                    keep_tail(&mut line, piece);
                    self.skipping = Some(Oversized {
                        len,
                        head,
                        tail: line,
                    });
                }
                None => self.line.extend_from_slice(piece),
            }
            self.reader.consume(take + usize::from(complete));
            if complete {
                if let Some(skipped) = self.skipping.take() {
                    return Ok(Some(Line::TooLong(skipped)));
                }
                return Ok(Some(Line::Text(std::mem::take(&mut self.line))));
            }
        }
    }
}

/// Appends `piece` to `tail`, keeping only the last [`KEPT`] bytes.
fn keep_tail(tail: &mut Vec<u8>, piece: &[u8]) {
    let piece = &piece[piece.len().saturating_sub(KEPT)..];
    tail.extend_from_slice(piece);
    let excess = tail.len().saturating_sub(KEPT);
    tail.drain(..excess);
}

/// What one end of an overlong line shows of its top-level members.
#[derive(Default)]
struct Seen {
    id: Option<RequestId>,
    method: bool,
    jsonrpc: bool,
}

enum Head {
    Id(RequestId),
    Other(Seen),
}

/// Walks the first bytes of a JSON object, tracking depth and strings, for a top-level `"id"`
/// key (stopping at a `"method"` one).
fn scan_head(head: &[u8]) -> Head {
    let mut seen = Seen::default();
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let Some(end) = string_end(head, i) else {
                    return Head::Other(seen);
                };
                let key = &head[i + 1..end];
                let after = skip_space(head, end + 1);
                if depth == 1 && head.get(after) == Some(&b':') {
                    match key {
                        b"method" => {
                            seen.method = true;
                            return Head::Other(seen);
                        }
                        b"jsonrpc" => seen.jsonrpc = true,
                        b"id" => {
                            let start = skip_space(head, after + 1);
                            return match scalar_at(head, start) {
                                Some(id) => Head::Id(id),
                                None => Head::Other(seen),
                            };
                        }
                        _ => {}
                    }
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    Head::Other(seen)
}

/// Reads the last members of a JSON object backwards from its closing brace, for `"id"`. Only
/// simple members (a string or number value) are walked over.
fn scan_tail(tail: &[u8]) -> Seen {
    let mut seen = Seen::default();
    let mut end = trim_end(tail, tail.len());
    if end == 0 || tail[end - 1] != b'}' {
        return seen;
    }
    end -= 1;
    for _ in 0..4 {
        let Some((key, value_start, before)) = member_before(tail, end) else {
            break;
        };
        match key {
            b"\"method\"" => seen.method = true,
            b"\"jsonrpc\"" => seen.jsonrpc = true,
            b"\"id\"" => seen.id = scalar_at(tail, value_start),
            _ => {}
        }
        let comma = trim_end(tail, before);
        if comma == 0 || tail[comma - 1] != b',' {
            break;
        }
        end = comma - 1;
    }
    seen
}

/// The simple member (`"key": "string"` or `"key": number`) ending at `end`: its quoted key, where
/// its value starts, and where the key starts.
fn member_before(tail: &[u8], end: usize) -> Option<(&[u8], usize, usize)> {
    let end = trim_end(tail, end);
    let value_start = if end > 0 && tail[end - 1] == b'"' {
        string_start(tail, end - 1)?
    } else {
        let number = |b: &u8| matches!(b, b'0'..=b'9' | b'-' | b'.' | b'e' | b'E' | b'+');
        let digits = tail[..end].iter().rev().take_while(|b| number(b)).count();
        (digits > 0).then_some(end - digits)?
    };
    let colon = trim_end(tail, value_start);
    if colon == 0 || tail[colon - 1] != b':' {
        return None;
    }
    let key_end = trim_end(tail, colon - 1);
    if key_end == 0 || tail[key_end - 1] != b'"' {
        return None;
    }
    let key_start = string_start(tail, key_end - 1)?;
    Some((&tail[key_start..key_end], value_start, key_start))
}

/// The index of the quote closing the string opened at `open`.
fn string_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The index of the quote opening the string closed at `close` (not preceded by an odd number of
/// backslashes).
fn string_start(bytes: &[u8], close: usize) -> Option<usize> {
    let mut i = close;
    while i > 0 {
        i -= 1;
        if bytes[i] == b'"' {
            let backslashes = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count();
            if backslashes % 2 == 0 {
                return Some(i);
            }
        }
    }
    None
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

fn trim_end(bytes: &[u8], mut end: usize) -> usize {
    while end > 0 && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

/// The JSON number or string starting at `start`, as a request id.
fn scalar_at(bytes: &[u8], start: usize) -> Option<RequestId> {
    let rest = bytes.get(start..)?;
    let mut stream = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
    match stream.next()?.ok()? {
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        Value::String(s) => Some(RequestId::String(s)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn read_all(input: &[u8], limit: usize) -> Vec<Line> {
        let mut lines = LineReader::with_limit(BufReader::with_capacity(4096, input), limit);
        let mut got = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            got.push(line);
        }
        got
    }

    async fn oversized(line: &str) -> Oversized {
        let mut input = line.as_bytes().to_vec();
        input.push(b'\n');
        match read_all(&input, 100).await.pop() {
            Some(Line::TooLong(skipped)) => skipped,
            _ => panic!("not skipped"),
        }
    }

    fn filler(n: usize) -> String {
        "x".repeat(n)
    }

    #[tokio::test]
    async fn splits_lines_and_skips_overlong_ones() {
        let mut input = b"one\n\ntwo".to_vec();
        input.push(b'\n');
        input.extend(std::iter::repeat_n(b'x', 20_000));
        input.extend(b"\nthree");
        let got: Vec<String> = read_all(&input, 10_000)
            .await
            .into_iter()
            .map(|line| match line {
                Line::Text(t) => String::from_utf8(t).unwrap(),
                Line::TooLong(skipped) => format!("<{}>", skipped.len),
            })
            .collect();
        assert_eq!(got, vec!["one", "", "two", "<20000>", "three"]);
    }

    #[tokio::test]
    async fn the_id_of_an_overlong_reply_is_read_at_either_end() {
        let big = filler(50_000);
        let reply = |n: i64| Skipped::Reply(RequestId::Number(n));
        let first = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"text":"{big}"}}}}"#);
        assert_eq!(oversized(&first).await.kind(), reply(7));
        let last = format!(r#"{{"result":{{"text":"{big}","id":1}},"jsonrpc":"2.0","id":"a\"b"}}"#);
        assert_eq!(
            oversized(&last).await.kind(),
            Skipped::Reply(RequestId::String("a\"b".into()))
        );
        let spaced = format!("{{ \"result\": \"{big}\" , \"id\" : 12 }}  ");
        assert_eq!(oversized(&spaced).await.kind(), reply(12));
        let error = format!(r#"{{"error":{{"message":"{big}"}},"id":3,"jsonrpc":"2.0"}}"#);
        assert_eq!(oversized(&error).await.kind(), reply(3));
    }

    #[tokio::test]
    async fn a_nested_id_a_server_request_or_no_message_gives_no_id() {
        let big = filler(50_000);
        // Only an `id` inside the result: not the message's.
        let nested =
            format!(r#"{{"jsonrpc":"2.0","result":{{"id":5,"t":"{big}","x":{{"id":6}}}}}}"#);
        assert_eq!(oversized(&nested).await.kind(), Skipped::UnknownReply);
        let quoted = format!(r#"{{"result":"{big} \"id\":9","jsonrpc":"2.0"}}"#);
        assert_eq!(oversized(&quoted).await.kind(), Skipped::UnknownReply);
        let request =
            format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"t":"{big}"}},"id":4}}"#);
        assert_eq!(oversized(&request).await.kind(), Skipped::ServerMessage);
        let late_method = format!(r#"{{"params":{{"t":"{big}"}},"method":"x","id":4}}"#);
        assert_eq!(oversized(&late_method).await.kind(), Skipped::ServerMessage);
        let other = format!(r#"{{"huge":"{big}"}}"#);
        assert_eq!(oversized(&other).await.kind(), Skipped::NotJsonRpc);
        assert_eq!(oversized(&filler(200)).await.kind(), Skipped::NotJsonRpc);
    }
}
