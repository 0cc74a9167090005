//! What arrives from the server: responses routed to the requests waiting for them, a message
//! dropped for its size failing the call it answers, notifications (progress, cancellation,
//! list changes, log messages), and the server's own requests, each answered in its own task by
//! [`Inner::serve`], which also answers a modern server's `input_required` input requests.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Inner;
use crate::mcp::elicitation::ElicitRequest;
use crate::mcp::handler::{method_not_found, roots_result};
use crate::mcp::jsonrpc::{ErrorObject, INVALID_PARAMS, Message, RequestId};
use crate::mcp::peer::Outcome;
use crate::mcp::sampling::SamplingRequest;
use crate::mcp::transport::TransportEvent;

/// Reads the connection until it closes. Holds the client weakly: once every [`McpClient`](super::McpClient) is
/// dropped, the transport goes too.
pub(super) async fn read_events(inner: Weak<Inner>, mut events: mpsc::Receiver<TransportEvent>) {
    let reason = loop {
        let Some(event) = events.recv().await else {
            break "the connection ended".to_string();
        };
        let Some(inner) = inner.upgrade() else {
            return;
        };
        match event {
            TransportEvent::Message(message) => inner.dispatch(message),
            TransportEvent::Oversized { id, message } => inner.on_oversized(id, message),
            TransportEvent::Closed { reason } => break reason,
        }
    };
    if let Some(inner) = inner.upgrade() {
        inner.pending.close_all(&reason);
        inner.closed.send_if_modified(|r| {
            r.get_or_insert(reason);
            true
        });
    }
}

impl Inner {
    /// A message over the size limit was dropped: the call it answers fails now. When its id
    /// could not be read, every call in flight to this server fails, since any might be the one.
    fn on_oversized(&self, id: Option<RequestId>, message: String) {
        if let Some(id) = id {
            let failed = self.pending.complete(
                &id,
                Outcome::TooLarge(format!("its reply was {message}; it was dropped")),
            );
            if !failed {
                self.options.log.line(
                    "ling",
                    &format!("the dropped message (id {id}) answered no call in flight"),
                );
            }
            return;
        }
        let every = format!(
            "it sent a message of {message}, which was dropped; its id could not be read, so \
             every call in flight to this server failed"
        );
        let failed = self.pending.fail_all(|| Outcome::TooLarge(every.clone()));
        self.options.log.line(
            "ling",
            &format!("a dropped message without a readable id failed {failed} call(s) in flight"),
        );
    }

    fn dispatch(self: &Arc<Self>, message: Message) {
        match message {
            Message::Response { id, result } => {
                self.pending.complete(&id, Outcome::Result(result));
            }
            Message::Error {
                id: Some(id),
                error,
            } => {
                self.pending.complete(&id, Outcome::Error(error));
            }
            Message::Error { id: None, error } => self.options.log.line(
                "ling",
                &format!("server reported error {}: {}", error.code, error.message),
            ),
            Message::Request { id, method, params } => self.answer(id, method, params),
            Message::Notification { method, params } => {
                let params = params.unwrap_or(Value::Null);
                self.on_notification(&method, &params);
            }
        }
    }

    fn on_notification(&self, method: &str, params: &Value) {
        match method {
            "notifications/progress" => self.progress.route(params),
            "notifications/cancelled" => self.incoming.cancel(params),
            "notifications/tools/list_changed" => {
                self.tools_changed.store(true, Ordering::Release);
            }
            "notifications/message" => {
                let level = params["level"].as_str().unwrap_or("info");
                let data = match &params["data"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let text = match params["logger"].as_str() {
                    Some(logger) => format!("[{level}] {logger}: {data}"),
                    None => format!("[{level}] {data}"),
                };
                self.options.log.line("server", &text);
            }
            _ => {}
        }
    }

    /// Answers one server request in its own task, so a slow handler never stalls the reading.
    fn answer(self: &Arc<Self>, id: RequestId, method: String, params: Option<Value>) {
        let inner = self.clone();
        let stop = self.incoming.start(&id);
        tokio::spawn(async move {
            let params = params.unwrap_or(Value::Null);
            let answer = tokio::select! {
                answer = inner.serve(&method, params) => answer,
                () = stop.cancelled() => return,
            };
            inner.incoming.finish(&id);
            let reply = match answer {
                Ok(result) => Message::Response { id, result },
                Err(error) => Message::Error {
                    id: Some(id),
                    error,
                },
            };
            let _ = inner.transport.send(reply).await;
        });
    }

    pub(super) async fn serve(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let server = &self.options.server;
        let support = self.options.handler.as_ref().map(|h| (h, h.support()));
        match (method, support) {
            ("ping", _) => Ok(json!({})),
            ("roots/list", _) => {
                let roots = self.roots.read().map(|r| r.clone()).unwrap_or_default();
                Ok(roots_result(&roots))
            }
            ("sampling/createMessage", Some((handler, support))) if support.sampling => {
                let request = SamplingRequest::parse(&params).map_err(|e| ErrorObject {
                    code: INVALID_PARAMS,
                    message: e.to_string(),
                    data: None,
                })?;
                let result = handler.create_message(server, &request).await?;
                Ok(result.to_value())
            }
            ("elicitation/create", Some((handler, support))) if support.elicitation => {
                let request = ElicitRequest::parse(&params);
                let answer = handler.elicit(server, &request).await?;
                Ok(request.result(&answer))
            }
            _ => Err(method_not_found(method)),
        }
    }
}
