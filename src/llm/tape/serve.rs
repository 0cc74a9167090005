//! The tape's loopback server: each connection carries one request; a model request (a POST to
//! one of the three wire APIs' routes) is recorded (forwarded to the real server, its response
//! streamed back and written down) or replayed (answered from the recording); anything else
//! (the context-window probe's questions) is a 404 in both, so that a recorded and a replayed
//! run see the same.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use super::canonical::{Known, first_difference, known};
use super::http::{Request, read_request, respond, write_head};
use super::{Entry, Kind, Tape, lock};

pub(super) async fn accept(listener: TcpListener, tape: Arc<Tape>) {
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(connection(stream, tape.clone()));
    }
}

async fn connection(mut stream: TcpStream, tape: Arc<Tape>) {
    let Ok(request) = read_request(&mut stream).await else {
        return;
    };
    let (upstream, path) = split(&request.target);
    let route = path.split('?').next().unwrap_or(path);
    let model_request = ["/chat/completions", "/messages", "/responses"]
        .iter()
        .any(|r| route.ends_with(r));
    if request.method != "POST" || !model_request {
        let _ = respond(&mut stream, 404, "text/plain", b"not recorded").await;
        return;
    }
    let number = tape.seen.fetch_add(1, Ordering::SeqCst) + 1;
    let sent = known(&request.body, &tape.norm);
    let done = match &tape.kind {
        Kind::Record { file, http } => {
            let origin = lock(&tape.upstreams).get(upstream).cloned();
            match origin {
                Some(origin) => {
                    record(
                        &mut stream,
                        http,
                        &format!("{origin}{path}"),
                        &request,
                        sent,
                        path,
                        file,
                    )
                    .await
                }
                None => respond(&mut stream, 502, "text/plain", b"unknown upstream").await,
            }
        }
        Kind::Replay {
            path: file,
            entries,
            served,
        } => {
            let found = {
                let mut served = lock(served);
                let at = entries
                    .iter()
                    .enumerate()
                    .position(|(i, e)| !served[i] && e.hash == sent.hash && e.path == path);
                if let Some(i) = at {
                    served[i] = true;
                }
                at
            };
            match found {
                Some(i) => replay(&mut stream, &entries[i]).await,
                None => {
                    let said = unseen(number, path, &sent, entries, &lock(served), file);
                    lock(&tape.mismatch).get_or_insert(said.clone());
                    let body =
                        serde_json::json!({"error": {"message": said, "type": "replay_mismatch"}});
                    respond(
                        &mut stream,
                        400,
                        "application/json",
                        body.to_string().as_bytes(),
                    )
                    .await
                }
            }
        }
    };
    if let Err(e) = done {
        tracing::warn!("tape: request {number}: {e}");
    }
}

/// `/u3/v1/chat/completions` → (3, `/v1/chat/completions`).
fn split(target: &str) -> (usize, &str) {
    let Some(rest) = target.strip_prefix("/u") else {
        return (0, target);
    };
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let index = rest[..digits].parse().unwrap_or(0);
    (index, &rest[digits..])
}

/// Forwards the request, streams the answer back as it comes, and writes it down whole.
async fn record(
    stream: &mut TcpStream,
    http: &reqwest::Client,
    url: &str,
    request: &Request,
    sent: Known,
    path: &str,
    file: &std::sync::Mutex<std::fs::File>,
) -> std::io::Result<()> {
    let mut forward = http.post(url).body(request.body.clone());
    for (name, value) in &request.headers {
        if !matches!(name.as_str(), "host" | "content-length" | "connection") {
            forward = forward.header(name.as_str(), value.as_str());
        }
    }
    let mut response = match forward.send().await {
        Ok(response) => response,
        Err(e) => {
            let message = format!("--record: the model server could not be reached: {e}");
            return respond(stream, 502, "text/plain", message.as_bytes()).await;
        }
    };
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = header("content-type");
    let retry_after = header("retry-after");
    let mut head = Vec::new();
    if let Some(ct) = &content_type {
        head.push(("content-type", ct.as_str()));
    }
    if let Some(ra) = &retry_after {
        head.push(("retry-after", ra.as_str()));
    }
    write_head(stream, status, &head).await?;
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        stream.write_all(&chunk).await?;
        body.extend_from_slice(&chunk);
    }
    let entry = Entry {
        path: path.to_string(),
        hash: sent.hash,
        parts: sent.parts,
        status,
        content_type,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    if let Ok(line) = serde_json::to_string(&entry) {
        use std::io::Write;
        let mut file = lock(file);
        if let Err(e) = writeln!(file, "{line}") {
            tracing::error!("tape: cannot write the recording: {e}");
        }
    }
    stream.shutdown().await
}

async fn replay(stream: &mut TcpStream, entry: &Entry) -> std::io::Result<()> {
    let content_type = entry.content_type.as_deref().unwrap_or("text/event-stream");
    respond(stream, entry.status, content_type, entry.body.as_bytes()).await
}

/// What the user is told of a request the recording did not see: which recorded request it is
/// nearest (the first not yet served to the same path) and the first part that differs.
fn unseen(
    number: usize,
    path: &str,
    sent: &Known,
    entries: &[Entry],
    served: &[bool],
    file: &std::path::Path,
) -> String {
    let file = file.display();
    let nearest = entries
        .iter()
        .enumerate()
        .find(|(i, e)| !served[*i] && e.path == path);
    match nearest {
        None => format!(
            "replay: request {number} (POST {path}) is not in {file}: the recording has no \
             more requests to {path}; record the session again with --record {file}"
        ),
        Some((i, entry)) => {
            let (part, text) = first_difference(sent, &entry.parts);
            let mut shown: String = text.chars().take(300).collect();
            if shown.len() < text.len() {
                shown.push('…');
            }
            format!(
                "replay: request {number} (POST {path}) is not in {file}: it differs from \
                 recorded request {} first at `{part}`, sent as: {shown}; record the session \
                 again with --record {file}",
                i + 1
            )
        }
    }
}
