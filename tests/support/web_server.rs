//! A small web server on 127.0.0.1 for the `web_fetch` and `web_search` tests: fixed answers by
//! path (the query ignored), every request recorded (method, path with its query, headers).
//! Plain HTTP/1.1 on std, one connection at a time, `Connection: close`; it stops when dropped.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// One fixed answer.
#[derive(Debug, Clone)]
pub struct Page {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Page {
    pub fn new(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    pub fn redirect(to: &str) -> Self {
        Self {
            status: 302,
            headers: vec![("Location".into(), to.into())],
            body: Vec::new(),
        }
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Hit {
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
}

impl Hit {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct WebServer {
    port: u16,
    pages: Arc<Mutex<HashMap<String, Page>>>,
    hits: Arc<Mutex<Vec<Hit>>>,
    stop: Arc<AtomicBool>,
}

impl WebServer {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let pages: Arc<Mutex<HashMap<String, Page>>> = Arc::default();
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (p, h, s) = (pages.clone(), hits.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    serve(stream, &p, &h);
                }
            }
        });
        Self {
            port,
            pages,
            hits,
            stop,
        }
    }

    /// `http://HOST:PORT` of this server, for a host name that reaches 127.0.0.1.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    pub fn page(&self, path: &str, page: Page) {
        self.pages.lock().unwrap().insert(path.to_string(), page);
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// The paths asked for (without their queries).
    pub fn paths(&self) -> Vec<String> {
        self.hits()
            .into_iter()
            .map(|h| h.path.split('?').next().unwrap_or_default().to_string())
            .collect()
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(mut stream: TcpStream, pages: &Mutex<HashMap<String, Page>>, hits: &Mutex<Vec<Hit>>) {
    let mut buf = Vec::new();
    let mut piece = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut piece) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&piece[..n]),
        }
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_string();
    let path = first.next().unwrap_or_default().to_string();
    let headers = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    hits.lock().unwrap().push(Hit {
        method: method.clone(),
        path: path.clone(),
        headers,
    });
    let bare = path.split('?').next().unwrap_or_default();
    let page = pages.lock().unwrap().get(bare).cloned().unwrap_or(Page {
        status: 404,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        body: b"not found".to_vec(),
    });
    let mut out = format!("HTTP/1.1 {} Test\r\nConnection: close\r\n", page.status);
    for (name, value) in &page.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", page.body.len()));
    let mut bytes = out.into_bytes();
    if method != "HEAD" {
        bytes.extend_from_slice(&page.body);
    }
    let _ = stream.write_all(&bytes);
    let _ = stream.flush();
}
