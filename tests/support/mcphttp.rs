//! A loopback HTTP/1.1 server for the MCP HTTP transport tests: raw TCP on 127.0.0.1, one request
//! per connection (`Connection: close`), every request recorded, replies scripted by a handler:
//! a JSON body, a bare status, or an SSE stream written step by step (with pauses, waits for a
//! signal, and events relayed from a channel) before it closes.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc};

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of a POSTed message (`"response"` for a response).
    pub fn rpc_method(&self) -> String {
        let json = self.json();
        match json["method"].as_str() {
            Some(m) => m.to_string(),
            None if json.get("result").is_some() || json.get("error").is_some() => {
                "response".to_string()
            }
            None => String::new(),
        }
    }
}

pub enum Step {
    Send(String),
    Sleep(Duration),
    Wait(Arc<Notify>),
    /// Writes every event the channel yields until it closes.
    Relay(mpsc::UnboundedReceiver<String>),
}

pub enum Reply {
    Json {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    Status(u16),
    Sse {
        headers: Vec<(String, String)>,
        steps: Vec<Step>,
    },
}

impl Reply {
    pub fn json(body: Value) -> Self {
        Self::Json {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    pub fn json_with(headers: &[(&str, &str)], body: Value) -> Self {
        Self::Json {
            status: 200,
            headers: pairs(headers),
            body: body.to_string(),
        }
    }

    pub fn error(status: u16, body: &str) -> Self {
        Self::Json {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    pub fn sse(steps: Vec<Step>) -> Self {
        Self::Sse {
            headers: Vec::new(),
            steps,
        }
    }
}

pub fn pairs(headers: &[(&str, &str)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// One SSE `message` event carrying `message`.
pub fn event(id: &str, message: &Value) -> Step {
    Step::Send(format!("event: message\nid: {id}\ndata: {message}\n\n"))
}

pub type Handler = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

pub struct TestServer {
    pub base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl TestServer {
    pub async fn start(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let handler: Handler = Arc::new(handler);
        let recorded = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let handler = Arc::clone(&handler);
                let recorded = Arc::clone(&recorded);
                tokio::spawn(async move {
                    let _ = serve(stream, handler, recorded).await;
                });
            }
        });
        Self { base, requests }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// The requests with this HTTP method, in arrival order.
    pub fn with_method(&self, method: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == method)
            .collect()
    }
}

async fn serve(
    mut stream: TcpStream,
    handler: Handler,
    recorded: Arc<Mutex<Vec<Recorded>>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let head_end = loop {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let path = first.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let request = Recorded {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
        at: Instant::now(),
    };
    recorded.lock().unwrap().push(request.clone());
    match handler(&request) {
        Reply::Status(status) => {
            let head =
                format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            stream.write_all(head.as_bytes()).await?;
        }
        Reply::Json {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (n, v) in headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
        }
        Reply::Sse { headers, steps } => {
            let mut head = String::from(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n",
            );
            for (n, v) in headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes()).await?;
            stream.flush().await?;
            for step in steps {
                match step {
                    Step::Send(text) => {
                        stream.write_all(text.as_bytes()).await?;
                        stream.flush().await?;
                    }
                    Step::Sleep(d) => tokio::time::sleep(d).await,
                    Step::Wait(notify) => notify.notified().await,
                    Step::Relay(mut rx) => {
                        while let Some(text) = rx.recv().await {
                            stream.write_all(text.as_bytes()).await?;
                            stream.flush().await?;
                        }
                    }
                }
            }
        }
    }
    stream.shutdown().await
}
