//! Record and replay of the model's side of a session (`--record FILE`, `--replay FILE`): every
//! model client of the process (the agent's, its sub-agents', MCP sampling's) is pointed at a
//! loopback server of Ling's own, which either forwards each request to the real server and
//! writes the request's hash and the response's bytes to FILE (JSONL, one line a request), or
//! answers from FILE without any model, whichever of the three wire APIs it is. A request the
//! recording did not see is answered with an error naming the first part that differs, and the
//! run exits 3 ([`failure`]).
//!
//! The tape is process-wide on purpose: it must catch every model client the run makes,
//! including those made deep in the agent (sub-agents, side models), without threading a
//! handle through each of them.

mod canonical;
mod http;
mod serve;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde::{Deserialize, Serialize};

pub use canonical::Normaliser;

static TAPE: OnceLock<Arc<Tape>> = OnceLock::new();

/// Why a tape cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TapeError {
    #[error("--replay {path}: {source}")]
    Read { path: String, source: io::Error },
    #[error(
        "--replay {path}: line {line} is not a recorded request ({reason}); record the session \
         again with --record {path}"
    )]
    Parse {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("--record {path}: {source}")]
    Create { path: String, source: io::Error },
    #[error("--record/--replay cannot listen on 127.0.0.1: {0}")]
    Listen(io::Error),
    #[error("--record/--replay: {0}")]
    Http(String),
    #[error("--record and --replay are given together; give one of them")]
    Both,
}

/// What the tape does.
pub enum TapeMode {
    Record(PathBuf),
    Replay(PathBuf),
}

/// One recorded request and its response: a line of the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// The request's path and query at its server (`/v1/chat/completions`).
    path: String,
    /// SHA-256 of the canonical body ([`canonical`]).
    hash: String,
    /// (part, hash) of the body's top-level parts, to say which differs.
    parts: Vec<(String, String)>,
    status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content_type: Option<String>,
    /// The response body as the server streamed it (UTF-8, as SSE and JSON are).
    body: String,
}

enum Kind {
    Record {
        file: Mutex<std::fs::File>,
        http: reqwest::Client,
    },
    Replay {
        path: PathBuf,
        entries: Vec<Entry>,
        served: Mutex<Vec<bool>>,
    },
}

struct Tape {
    port: u16,
    /// The real servers' origins, by the `/u{index}` prefix of the routed base URLs.
    upstreams: Mutex<Vec<String>>,
    norm: Normaliser,
    kind: Kind,
    /// The first request the recording did not see, said for the user.
    mismatch: Mutex<Option<String>>,
    /// Requests received so far.
    seen: AtomicUsize,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the tape's loopback server (in the running tokio runtime) and routes every model
/// client made from now on through it. `norm` says what varies between runs.
pub async fn install(mode: TapeMode, norm: Normaliser) -> Result<(), TapeError> {
    let kind = match mode {
        TapeMode::Record(path) => Kind::Record {
            file: Mutex::new(create(&path)?),
            http: crate::http_client::build(crate::http_client::ClientOptions::new(
                crate::http_client::Target::Model,
            ))
            .map_err(|e| TapeError::Http(e.to_string()))?,
        },
        TapeMode::Replay(path) => {
            let entries = load(&path)?;
            let served = Mutex::new(vec![false; entries.len()]);
            Kind::Replay {
                path,
                entries,
                served,
            }
        }
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(TapeError::Listen)?;
    let port = listener.local_addr().map_err(TapeError::Listen)?.port();
    let tape = Arc::new(Tape {
        port,
        upstreams: Mutex::new(Vec::new()),
        norm,
        kind,
        mismatch: Mutex::new(None),
        seen: AtomicUsize::new(0),
    });
    if TAPE.set(tape.clone()).is_err() {
        return Err(TapeError::Both);
    }
    tokio::spawn(serve::accept(listener, tape));
    Ok(())
}

fn create(path: &Path) -> Result<std::fs::File, TapeError> {
    std::fs::File::create(path).map_err(|source| TapeError::Create {
        path: path.display().to_string(),
        source,
    })
}

fn load(path: &Path) -> Result<Vec<Entry>, TapeError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TapeError::Read {
        path: shown.clone(),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| TapeError::Parse {
                path: shown.clone(),
                line: i + 1,
                reason: e.to_string(),
            })
        })
        .collect()
}

/// The base URL a model client uses: the tape's server, with a prefix naming the real server,
/// when a tape is on; else `base_url` itself.
pub fn route(base_url: &str) -> String {
    let Some(tape) = TAPE.get() else {
        return base_url.to_string();
    };
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return base_url.to_string();
    };
    let origin = url.origin().ascii_serialization();
    if origin == format!("http://127.0.0.1:{}", tape.port) {
        // Already routed (a sub-agent's client is made from its parent's settings).
        return base_url.to_string();
    }
    let index = {
        let mut upstreams = lock(&tape.upstreams);
        match upstreams.iter().position(|o| *o == origin) {
            Some(i) => i,
            None => {
                upstreams.push(origin);
                upstreams.len() - 1
            }
        }
    };
    let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!(
        "http://127.0.0.1:{}/u{index}{}{query}",
        tape.port,
        url.path().trim_end_matches('/')
    )
}

/// The first request a replay did not have, as the user is told it; `None` when every request
/// was in the recording (or no replay is on).
pub fn failure() -> Option<String> {
    TAPE.get().and_then(|tape| lock(&tape.mismatch).clone())
}
