//! A fetched PDF's text for `web_fetch`, read by `pdf-extract` (on lopdf) in a child process:
//! Ling's own executable started as `ling __ling-pdf-text SECONDS` (through the trampoline, so
//! it dies with Ling), the PDF on its stdin, one tagged answer on its stdout. A child, not a
//! thread, because the parser reads outside bytes and can panic, loop or balloon on an odd
//! file: release builds abort on a panic (`panic = "abort"`), which `catch_unwind` cannot
//! stop, and a thread can be neither killed nor bounded. The child runs with an empty
//! environment (no API key), within an address-space and a CPU-time limit, and is killed when
//! the fetch's time limit (settings `webFetch.timeoutMs`, which covers fetch and reading) runs
//! out or the turn is interrupted. Nothing here runs unless a PDF came.

use std::ffi::OsString;
use std::io::Read;
use std::process::Stdio;

use thiserror::Error;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use crate::process::Trampoline;

/// The first argument that makes `ling` the PDF reader ([`answer_if_requested`]).
pub const MARKER: &str = "__ling-pdf-text";
/// The most text read back: a PDF's text is seldom larger than the file, which `maxBytes`
/// bounds; the tool-output cap and the `prompt` follow-up cut far below this anyway.
const MAX_TEXT_BYTES: usize = 16 << 20;
/// The reader's address space: room for a large document, not for a decompression bomb.
#[cfg(target_os = "linux")]
const MAX_MEMORY_BYTES: u64 = 2 << 30;
/// The tags of the child's answer, each on the answer's first line.
const TEXT: &str = "text";
const ENCRYPTED: &str = "encrypted";
const DAMAGED: &str = "damaged";

/// Why a PDF gave no text. Messages follow "the PDF at URL ...".
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PdfError {
    #[error(
        "has no text layer (a scan? its pages may be pictures of text), so there is nothing to \
         read without OCR; download it with bash (`curl -o FILE URL`) and use an OCR tool if \
         one is installed"
    )]
    NoText,
    #[error("is encrypted and needs a password, so its text cannot be read")]
    Encrypted,
    #[error(
        "was cut at {max_bytes} bytes (settings webFetch.maxBytes), and a PDF cannot be read \
         without its end; raise webFetch.maxBytes or download it with bash (`curl -o FILE URL`)"
    )]
    Cut { max_bytes: u64 },
    #[error(
        "cannot be read ({reason}): it is damaged or uses something the PDF reader does not \
         handle; download it with bash (`curl -o FILE URL`) and try `pdftotext FILE -`"
    )]
    Unreadable { reason: String },
    #[error(
        "was not read within the {secs} s of settings webFetch.timeoutMs (which covers the \
         fetch and the reading); raise it or download the file with bash (`curl -o FILE URL`)"
    )]
    TooSlow { secs: u64 },
    #[error("cannot be read: the PDF reader did not start ({0})")]
    NoReader(String),
}

/// Whether a body of media type `content_type` is a PDF: by its type, or by its first bytes
/// when the type says nothing (`application/octet-stream`, none).
pub fn is_pdf(content_type: &str, body: &[u8]) -> bool {
    let generic = matches!(
        content_type,
        "" | "application/octet-stream"
            | "binary/octet-stream"
            | "application/download"
            | "application/force-download"
            | "application/x-download"
    );
    matches!(content_type, "application/pdf" | "application/x-pdf")
        || (generic && body.starts_with(b"%PDF-"))
}

/// The text of the PDF `body`, read by a child that is killed at `deadline` (the fetch's own
/// limit, `limit` long in all). `cut`: the body was cut at `max_bytes`. Dropping the future
/// (an interrupted turn) kills the child too.
pub async fn read(
    body: &[u8],
    cut: Option<u64>,
    deadline: Instant,
    limit: std::time::Duration,
) -> Result<String, PdfError> {
    let too_slow = PdfError::TooSlow {
        secs: limit.as_secs().max(1),
    };
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(too_slow);
    }
    let answer = tokio::time::timeout_at(deadline, run_reader(body, left.as_secs() + 1))
        .await
        .map_err(|_| too_slow)??;
    let result = parse_answer(&answer);
    match (result, cut) {
        (Err(PdfError::Unreadable { .. }), Some(max_bytes)) => Err(PdfError::Cut { max_bytes }),
        (result, _) => result,
    }
}

/// Starts the reader, hands it `body`, and returns what it answered.
async fn run_reader(body: &[u8], cpu_secs: u64) -> Result<Vec<u8>, PdfError> {
    let exe = std::env::current_exe().map_err(|e| PdfError::NoReader(e.to_string()))?;
    let args = [OsString::from(MARKER), OsString::from(cpu_secs.to_string())];
    let mut cmd = match Trampoline::current() {
        Some(trampoline) => {
            let mut cmd = trampoline.command(exe.as_os_str());
            cmd.args(&args);
            cmd
        }
        None => {
            let mut cmd = tokio::process::Command::new(&exe);
            cmd.args(&args);
            cmd
        }
    };
    cmd.env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| PdfError::NoReader(e.to_string()))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(PdfError::NoReader("its pipes were not opened".into()));
    };
    // The reader reads all of its input before it writes a byte, so writing first cannot
    // block on a full output pipe. A reader that died early shows in its status below.
    let _ = stdin.write_all(body).await;
    drop(stdin);
    let (answer, errors) = tokio::join!(
        read_bounded(stdout, MAX_TEXT_BYTES),
        read_bounded(stderr, 4096)
    );
    let status = child
        .wait()
        .await
        .map_err(|e| PdfError::NoReader(e.to_string()))?;
    if !status.success() {
        tracing::debug!(
            "web_fetch: the PDF reader ended with {status}: {}",
            String::from_utf8_lossy(&errors)
        );
        return Err(PdfError::Unreadable {
            reason: "the reader stopped on it".into(),
        });
    }
    Ok(answer)
}

/// The first `limit` bytes of `from`, the rest read and dropped so that the writer never
/// blocks on a full pipe.
async fn read_bounded(mut from: impl AsyncRead + Unpin, limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0; 64 * 1024];
    while let Ok(n) = from.read(&mut buf).await
        && n > 0
    {
        let room = limit.saturating_sub(out.len());
        out.extend_from_slice(&buf[..n.min(room)]);
    }
    out
}

/// The reader's answer: a tag line, then the text or why there is none.
fn parse_answer(answer: &[u8]) -> Result<String, PdfError> {
    let answer = String::from_utf8_lossy(answer);
    let (tag, rest) = answer.split_once('\n').unwrap_or((&answer, ""));
    match tag {
        TEXT if rest.trim().is_empty() => Err(PdfError::NoText),
        TEXT => Ok(tidy(rest)),
        ENCRYPTED => Err(PdfError::Encrypted),
        DAMAGED => Err(PdfError::Unreadable {
            reason: rest.trim().to_string(),
        }),
        // Not Ling's reader: the executable is another program (a test harness, say).
        _ => Err(PdfError::NoReader(
            "the executable did not answer as Ling's PDF reader".into(),
        )),
    }
}

/// Lines without trailing blanks, runs of blank lines (pdf-extract's page breaks) as one.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            if blank {
                continue;
            }
            blank = true;
        } else {
            blank = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

/// Called from `main`: when started as the PDF reader, reads a PDF from stdin and returns the
/// answer for stdout (the process then exits). `None` for every ordinary run of `ling`.
pub fn answer_if_requested() -> Option<Vec<u8>> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != MARKER {
        return None;
    }
    let cpu_secs = args
        .next()
        .and_then(|a| a.to_str()?.parse::<u64>().ok())
        .unwrap_or(60);
    limit_self(cpu_secs);
    let mut body = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut body) {
        return Some(format!("{DAMAGED}\ncannot read the input: {e}").into_bytes());
    }
    Some(answer(&body))
}

/// The reader's answer for `body`.
fn answer(body: &[u8]) -> Vec<u8> {
    // Where panics unwind (not in release builds), a panic is an answer like any failure.
    let extracted = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(body));
    match extracted {
        Ok(Ok(text)) => format!("{TEXT}\n{text}"),
        Ok(Err(pdf_extract::OutputError::PdfError(pdf_extract::Error::Decryption(_)))) => {
            format!("{ENCRYPTED}\n")
        }
        Ok(Err(e)) => format!("{DAMAGED}\n{e}"),
        Err(panic) => {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .map(|why| format!(": {why}"))
                .unwrap_or_default();
            format!("{DAMAGED}\nthe reader stopped on it{why}")
        }
    }
    .into_bytes()
}

/// The reader's own bounds, which hold even if Ling is gone: CPU time (the kernel ends it
/// with SIGXCPU, then SIGKILL) and address space (an allocation past it fails, which aborts).
fn limit_self(cpu_secs: u64) {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::resource::{Resource, setrlimit};
        let _ = setrlimit(Resource::RLIMIT_CPU, cpu_secs, cpu_secs + 1);
        let _ = setrlimit(Resource::RLIMIT_AS, MAX_MEMORY_BYTES, MAX_MEMORY_BYTES);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu_secs;
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_pdf_is_known_by_its_type_or_by_its_first_bytes_under_a_generic_type() {
        assert!(is_pdf("application/pdf", b""));
        assert!(is_pdf("application/octet-stream", b"%PDF-1.7\n"));
        assert!(is_pdf("", b"%PDF-1.4"));
        assert!(!is_pdf("application/zip", b"%PDF-1.4"));
        assert!(!is_pdf("application/octet-stream", b"PK\x03\x04"));
        assert!(!is_pdf("text/plain", b"%PDF-1.4"));
    }

    #[test]
    fn answers_become_text_or_the_reason_there_is_none() {
        assert_eq!(
            parse_answer(b"text\n\nHello  \n\n\n\nworld\n"),
            Ok("Hello\n\nworld".to_string())
        );
        assert_eq!(parse_answer(b"text\n\n\n  \n"), Err(PdfError::NoText));
        assert_eq!(parse_answer(b"encrypted\n"), Err(PdfError::Encrypted));
        assert_eq!(
            parse_answer(b"damaged\nInvalid file header\n"),
            Err(PdfError::Unreadable {
                reason: "Invalid file header".into()
            })
        );
        assert!(matches!(parse_answer(b""), Err(PdfError::NoReader(_))));
    }

    #[tokio::test]
    async fn a_deadline_already_past_is_too_slow_before_any_reader_starts() {
        let limit = std::time::Duration::from_secs(30);
        let read = read(b"%PDF-1.4", None, Instant::now(), limit).await;
        assert_eq!(read, Err(PdfError::TooSlow { secs: 30 }));
    }

    #[test]
    fn garbage_after_the_header_is_an_answer_not_a_panic() {
        let answer = String::from_utf8(answer(b"%PDF-1.4\n\xff\xfe garbage")).unwrap();
        assert!(answer.starts_with("damaged\n"), "{answer}");
    }
}
