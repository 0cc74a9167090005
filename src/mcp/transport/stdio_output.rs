//! What a stdio server writes: its stdout read as JSON-RPC messages, one a line, and its stderr
//! drained into the server's log (the tail kept for error reports). Lines are bounded
//! ([`MAX_LINE`]): a longer one is skipped as it streams by, never buffered whole, and the call
//! it answers fails at once; lines that are not JSON-RPC are logged and skipped. When stdout
//! closes, the connection closes with the server's exit status and last stderr lines.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncRead, BufReader};
use tokio::sync::{mpsc, watch};

use super::TransportEvent;
use super::lines::{Line, LineReader, Skipped};
use crate::mcp::jsonrpc::Message;
use crate::mcp::log::ServerLog;

/// The longest line accepted from a server's stdout (16 MiB). Longer ones are skipped, and the
/// call they answer fails at once ([`TransportEvent::Oversized`]).
pub const MAX_LINE: usize = 16 * 1024 * 1024;
const MIB: f64 = (1 << 20) as f64;
/// How long the reader waits for the exit status once stdout closed, for the close report.
const EXIT_REPORT_WAIT: Duration = Duration::from_secs(1);
/// How much of a skipped line the log shows.
const LOGGED_PREFIX: usize = 200;

/// Copies the server's stderr into its log until it closes; the receiver turns true then.
pub(super) fn drain_stderr(
    stderr: impl AsyncRead + Unpin + Send + 'static,
    log: Arc<ServerLog>,
) -> watch::Receiver<bool> {
    let (done_tx, done_rx) = watch::channel(false);
    tokio::spawn(async move {
        let mut lines = LineReader::with_limit(BufReader::new(stderr), MAX_LINE);
        while let Ok(Some(line)) = lines.next_line().await {
            match line {
                Line::Text(bytes) => log.stderr(String::from_utf8_lossy(&bytes).trim_end()),
                Line::TooLong(skipped) => log.line(
                    "ling",
                    &format!("skipped a {}-byte stderr line", skipped.len),
                ),
            }
        }
        let _ = done_tx.send(true);
    });
    done_rx
}

/// Reads the server's stdout until it closes, passing each message on; then reports the close,
/// with the exit status (`exited`) and the stderr lines (`stderr_done`) when they come soon.
pub(super) async fn read_stdout<R: AsyncBufRead + Unpin>(
    reader: R,
    events: mpsc::Sender<TransportEvent>,
    log: Arc<ServerLog>,
    command: String,
    mut exited: watch::Receiver<Option<String>>,
    mut stderr_done: watch::Receiver<bool>,
) {
    let mut lines = LineReader::with_limit(reader, MAX_LINE);
    loop {
        match lines.next_line().await {
            Ok(Some(Line::Text(bytes))) => {
                let text = String::from_utf8_lossy(&bytes);
                let text = text.trim();
                if text.is_empty() {
                    continue;
                }
                match Message::parse(text) {
                    Ok(message) => {
                        if events.send(TransportEvent::Message(message)).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let shown: String = text.chars().take(LOGGED_PREFIX).collect();
                        log.line("ling", &format!("skipped a stdout line ({e}): {shown}"));
                    }
                }
            }
            Ok(Some(Line::TooLong(skipped))) => {
                let message = format!(
                    "{:.1} MiB, over the {} MiB limit of one stdio message",
                    skipped.len as f64 / MIB,
                    MAX_LINE / (1 << 20)
                );
                let skipped_line =
                    format!("skipped a {}-byte stdout line ({message})", skipped.len);
                log.line("ling", &skipped_line);
                let id = match skipped.kind() {
                    Skipped::Reply(id) => Some(id),
                    Skipped::UnknownReply => None,
                    // Nothing of Ling's waits for it.
                    Skipped::ServerMessage | Skipped::NotJsonRpc => continue,
                };
                let event = TransportEvent::Oversized { id, message };
                if events.send(event).await.is_err() {
                    return;
                }
            }
            Ok(None) => break,
            Err(e) => {
                log.line("ling", &format!("cannot read the server's stdout: {e}"));
                break;
            }
        }
    }
    // stdout is closed: the server is exiting. Wait briefly for its status and last stderr lines
    // so the report says why.
    let status = tokio::time::timeout(EXIT_REPORT_WAIT, exited.wait_for(|s| s.is_some()))
        .await
        .ok()
        .and_then(|s| s.ok().and_then(|s| s.clone()));
    let _ = tokio::time::timeout(Duration::from_millis(500), stderr_done.wait_for(|d| *d)).await;
    let reason = match status {
        Some(status) => format!("the server `{command}` exited ({status})"),
        None => format!("the server `{command}` closed its stdout"),
    };
    log.line("ling", &reason);
    let _ = events
        .send(TransportEvent::Closed {
            reason: log.with_tail(&reason),
        })
        .await;
}

/// Properties of reading a server's stdout: lines come out the same however the pipe hands
/// them over, and of any mix of lines exactly the JSON-RPC messages are passed on, in order.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod properties {
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use proptest::prelude::*;
    use tokio::io::{AsyncRead, ReadBuf};

    use super::*;
    use crate::mcp::jsonrpc::properties::message;
    use crate::test_support::split_at_cuts;

    /// A pipe that hands the stream over in the given (non-empty) pieces, one per read.
    struct Pieces(VecDeque<Vec<u8>>);

    impl Pieces {
        fn new(bytes: &[u8], cuts: &[usize]) -> Self {
            let pieces = split_at_cuts(bytes, cuts).into_iter();
            // An empty read is the end of the stream.
            Self(
                pieces
                    .filter(|p| !p.is_empty())
                    .map(<[u8]>::to_vec)
                    .collect(),
            )
        }
    }

    impl AsyncRead for Pieces {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            if let Some(mut piece) = self.0.pop_front() {
                let n = piece.len().min(buf.remaining());
                buf.put_slice(&piece[..n]);
                if n < piece.len() {
                    let rest = piece.split_off(n);
                    self.0.push_front(rest);
                }
            }
            Poll::Ready(Ok(()))
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    /// What the reader must give: the pieces between newlines (a last one only if not empty),
    /// each longer than `limit` as its length.
    fn expected_lines(bytes: &[u8], limit: usize) -> Vec<Result<Vec<u8>, usize>> {
        let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let line = |l: &[u8]| match l.len() > limit {
            true => Err(l.len()),
            false => Ok(l.to_vec()),
        };
        lines.into_iter().map(line).collect()
    }

    fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
        let token = prop_oneof![
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"{}".to_vec()),
            proptest::collection::vec(any::<u8>(), 1..12),
        ];
        proptest::collection::vec(token, 0..32).prop_map(|t| t.concat())
    }

    /// A line a misbehaving server may print: no `{`, so never a message.
    fn garbage() -> impl Strategy<Value = Vec<u8>> {
        let byte = any::<u8>().prop_filter("no newline or brace", |b| !b"\n{".contains(b));
        proptest::collection::vec(byte, 0..24)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn lines_are_the_same_however_the_pipe_splits_them(
            bytes in line_bytes(),
            cuts in proptest::collection::vec(any::<usize>(), 0..16),
            capacity in 1..32usize,
            limit in 0..24usize,
        ) {
            let reader = BufReader::with_capacity(capacity, Pieces::new(&bytes, &cuts));
            let mut lines = LineReader::with_limit(reader, limit);
            let got = runtime().block_on(async {
                let mut got = Vec::new();
                while let Some(line) = lines.next_line().await.unwrap() {
                    got.push(match line {
                        Line::Text(text) => Ok(text),
                        Line::TooLong(skipped) => Err(skipped.len),
                    });
                }
                got
            });
            prop_assert_eq!(got, expected_lines(&bytes, limit));
        }

        #[test]
        fn exactly_the_messages_among_the_lines_are_passed_on(
            lines in proptest::collection::vec(
                prop_oneof![
                    message().prop_map(Ok),
                    garbage().prop_map(Err),
                ],
                0..12,
            ),
            crlf in any::<bool>(),
            cuts in proptest::collection::vec(any::<usize>(), 0..16),
        ) {
            let mut stdout = Vec::new();
            for line in &lines {
                match line {
                    Ok(message) => stdout.extend(message.to_line().into_bytes()),
                    Err(garbage) => stdout.extend(garbage),
                }
                stdout.extend(if crlf { &b"\r\n"[..] } else { b"\n" });
            }
            let reader = BufReader::with_capacity(64, Pieces::new(&stdout, &cuts));
            let (tx, mut rx) = mpsc::channel(lines.len() + 1);
            let (_exit_tx, exited) = watch::channel(Some("exit status: 0".to_string()));
            let (_done_tx, stderr_done) = watch::channel(true);
            let log = Arc::new(ServerLog::discard());
            let events = runtime().block_on(async {
                read_stdout(reader, tx, log, "server".into(), exited, stderr_done).await;
                let mut events = Vec::new();
                while let Some(event) = rx.recv().await {
                    events.push(event);
                }
                events
            });
            let (last, messages) = events.split_last().unwrap();
            let closed = matches!(last, TransportEvent::Closed { .. });
            prop_assert!(closed, "the last event is not Closed");
            let messages: Vec<&Message> = messages
                .iter()
                .map(|event| match event {
                    TransportEvent::Message(message) => message,
                    TransportEvent::Closed { .. } => panic!("closed twice"),
                    TransportEvent::Oversized { .. } => panic!("no line is over the limit"),
                })
                .collect();
            let sent: Vec<&Message> = lines.iter().filter_map(|l| l.as_ref().ok()).collect();
            prop_assert_eq!(messages, sent);
        }
    }
}
