//! The web, as the `web_fetch` and `web_search` tools reach it: one fetch of an http(s) URL
//! through Ling's HTTP client (the user's proxy variables honoured), its redirects followed one
//! hop at a time with each hop's address checked after DNS (`address.rs`: nothing off the
//! public internet unless a rule names the host), its body bounded in size and time
//! (`fetch.rs`); what came back as text the model can read (`convert.rs`: HTML as Markdown,
//! other text as it is); and the search providers of settings `webSearch` (`search.rs`).
//! Nothing here decides whether a call may run: that is the permission check's, with
//! [`HostRules`] carrying what its rules say about hosts down to the fetch.

mod address;
mod convert;
mod fetch;
pub mod search;

pub use address::{HostRules, host_matches, non_public};
pub use convert::{Converted, to_text};
pub use fetch::{FetchOptions, Fetched, check_url, fetch};
pub use search::{SearchHit, search};

use std::time::Duration;

/// Why a fetch or a search failed. The message is what the model reads, so it says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    #[error("{url:?} is not a URL web_fetch can fetch: {reason}")]
    BadUrl { url: String, reason: String },
    #[error(
        "{host} is {what} ({addr}); web_fetch does not reach addresses off the public internet \
         unless a rule names the host. If the user wants it fetched, they can allow it with the \
         rule `web_fetch(domain:{host})` (settings permissions.allow or --allowed-tools)"
    )]
    NotPublic {
        host: String,
        addr: String,
        what: &'static str,
    },
    #[error("cannot find the address of {host}: {detail}")]
    Resolve { host: String, detail: String },
    #[error(
        "{from} redirected to {to}, whose host a deny rule refuses (`web_fetch(domain:...)` in \
         settings permissions.deny or --disallowed-tools)"
    )]
    DeniedRedirect { from: String, to: String },
    #[error("{url} redirected more than {limit} times")]
    TooManyRedirects { url: String, limit: usize },
    #[error("{url} did not answer within {} s (settings webFetch.timeoutMs)", .limit.as_secs())]
    Timeout { url: String, limit: Duration },
    #[error("fetching {url} failed: {detail}")]
    Http { url: String, detail: String },
    #[error(
        "{url} is {kind} ({size} bytes), which web_fetch cannot turn into text; download it with \
         bash (`curl -o FILE URL`) and use a tool that reads it{}",
        if kind == "application/pdf" { " (`pdftotext FILE -` for a PDF)" } else { "" }
    )]
    Binary {
        url: String,
        kind: String,
        size: usize,
    },
    #[error("the search failed: {0}")]
    Search(String),
}
