//! Requests a server sends to Ling. `ping` and `roots/list` are always answered; `sampling/
//! createMessage` and `elicitation/create` only when the library user registered a
//! [`ClientHandler`] that serves them (and only then are those capabilities declared); anything
//! else gets `-32601`. The handler gets each request parsed ([`SamplingRequest`],
//! [`ElicitRequest`]); params that do not parse are answered `-32602` without it.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::elicitation::{ElicitAnswer, ElicitRequest};
use super::jsonrpc::{ErrorObject, METHOD_NOT_FOUND};
use super::sampling::{SamplingRequest, SamplingResult};

/// Which of the optional client features a [`ClientHandler`] serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandlerSupport {
    pub sampling: bool,
    /// Form-mode elicitation.
    pub elicitation: bool,
    /// URL-mode elicitation too (only with `elicitation`).
    pub elicitation_url: bool,
}

/// Serves the server → client requests that need a model or a human.
#[async_trait]
pub trait ClientHandler: Send + Sync {
    fn support(&self) -> HandlerSupport;

    /// `sampling/createMessage` from the server named `server`: the model's answer, or the
    /// JSON-RPC error to send (`SAMPLING_REFUSED` when the user or the policy said no).
    async fn create_message(
        &self,
        server: &str,
        request: &SamplingRequest,
    ) -> Result<SamplingResult, ErrorObject>;

    /// `elicitation/create` from the server named `server`: what the user answered.
    async fn elicit(
        &self,
        server: &str,
        request: &ElicitRequest,
    ) -> Result<ElicitAnswer, ErrorObject>;
}

/// The `capabilities` Ling declares in `initialize`.
pub fn client_capabilities(support: HandlerSupport) -> Value {
    let mut caps = json!({ "roots": { "listChanged": true } });
    if support.sampling {
        caps["sampling"] = json!({});
    }
    if support.elicitation {
        caps["elicitation"] = json!({ "form": {} });
        if support.elicitation_url {
            caps["elicitation"]["url"] = json!({});
        }
    }
    caps
}

/// The `roots/list` result: each root as a `file://` URI.
pub fn roots_result(roots: &[PathBuf]) -> Value {
    let roots: Vec<Value> = roots
        .iter()
        .map(|root| {
            let name = root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| root.display().to_string());
            json!({ "uri": file_uri(root), "name": name })
        })
        .collect();
    json!({ "roots": roots })
}

/// `file://` followed by the percent-encoded absolute path.
pub fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

pub(crate) fn method_not_found(method: &str) -> ErrorObject {
    ErrorObject {
        code: METHOD_NOT_FOUND,
        message: format!("Method not found: {method}"),
        data: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declares_optional_capabilities_only_when_served() {
        assert_eq!(
            client_capabilities(HandlerSupport::default()),
            json!({"roots":{"listChanged":true}})
        );
        let all = HandlerSupport {
            sampling: true,
            elicitation: true,
            elicitation_url: true,
        };
        assert_eq!(
            client_capabilities(all),
            json!({"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}})
        );
    }

    #[test]
    fn encodes_roots_as_file_uris() {
        assert_eq!(file_uri(Path::new("/tmp/a b/c")), "file:///tmp/a%20b/c");
        assert_eq!(
            roots_result(&[PathBuf::from("/work/proj")]),
            json!({"roots":[{"uri":"file:///work/proj","name":"proj"}]})
        );
    }
}
