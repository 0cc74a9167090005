//! One question to the person at the editor: a `session/request_permission` request and its
//! answer ([`ask`]), and who asks during a turn ([`ClientApprover`]: the approvals in
//! `permission.rs`, the model's plan and questions in `questions.rs`).

use agent_client_protocol_schema::v1::{
    Content, ContentBlock, PermissionOption, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionId, ToolCallContent, ToolCallUpdate,
};
use tokio_util::sync::CancellationToken;

use super::updates::UpdateSink;
use crate::rpc::{Peer, RequestError};

/// The editor's answer to one question, by the option's id; `None`: no answer (cancelled,
/// withdrawn, or the client failed the request).
pub(super) async fn ask(
    peer: &Peer,
    session_id: &str,
    tool_call: ToolCallUpdate,
    options: Vec<PermissionOption>,
    cancel: &CancellationToken,
) -> Option<String> {
    let request = RequestPermissionRequest::new(SessionId::new(session_id), tool_call, options);
    let params = serde_json::to_value(&request).ok()?;
    let answer = peer
        .request(
            "session/request_permission",
            params,
            None,
            Some((cancel, "$/cancel_request")),
        )
        .await;
    let value = match answer {
        Ok(value) => value,
        Err(RequestError::Cancelled(_)) => return None,
        Err(e) => {
            tracing::warn!("acp: the permission request failed: {e}");
            return None;
        }
    };
    match serde_json::from_value::<RequestPermissionResponse>(value) {
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) => Some(selected.option_id.0.to_string()),
            RequestPermissionOutcome::Cancelled => None,
            _ => None,
        },
        Err(e) => {
            tracing::warn!("acp: the permission answer is not one: {e}");
            None
        }
    }
}

pub(super) fn text(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::Content(Content::new(ContentBlock::from(text.into())))
}

/// Asks the editor about Ling's tool calls during one turn.
pub(super) struct ClientApprover<'a> {
    pub peer: &'a Peer,
    pub session_id: &'a str,
    pub sink: &'a UpdateSink,
    pub cancel: &'a CancellationToken,
}
