//! The mock model's HTTP/1.1, on plain tokio: one request read whole (head and body, by its
//! `Content-Length`), one reply written as its pieces, with its delays, then the connection closed.

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::mock_openai::{Api, InputUsage, Recorded, Reply};

pub(super) async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut piece = [0u8; 4096];
    let header_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = socket.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&piece[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_string();
    let path = request_line.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf[header_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut piece).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&piece[..n]);
    }
    Some(Recorded {
        api: Api::of(&method, &path),
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        at: std::time::Instant::now(),
    })
}

pub(super) async fn write_reply(
    socket: &mut TcpStream,
    reply: &Reply,
    api: Api,
    input: InputUsage,
) -> std::io::Result<()> {
    // A zero sleep still waits for the timer's next tick (a millisecond): none is taken.
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let pieces = reply.pieces(api, input);
    let mut head = format!(
        "HTTP/1.1 {} Mock\r\nContent-Type: {}\r\nConnection: close\r\nCache-Control: no-cache\r\n",
        reply.status, reply.content_type
    );
    if reply.content_type == "application/json" {
        let length: usize = pieces.iter().map(Vec::len).sum();
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await?;
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 && !reply.chunk_delay.is_zero() {
            tokio::time::sleep(reply.chunk_delay).await;
        }
        socket.write_all(piece).await?;
        socket.flush().await?;
    }
    socket.shutdown().await
}
