//! An MCP server living inside the program driving Ling (the Agent SDK's
//! `createSdkMcpServer`): every JSON-RPC message is one `mcp_message` control request to the
//! program, whose answer carries the server's response (`mcp_response`). Notifications and
//! Ling's answers to the server's requests go the same way, their answer unread.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::mpsc;

use super::{Connection, Shutdown, Transport, TransportError, TransportEvent};
use crate::mcp::jsonrpc::Message;
use crate::program::ProgramChannel;

struct SdkTransport {
    server: String,
    program: Arc<dyn ProgramChannel>,
    events: mpsc::Sender<TransportEvent>,
}

/// The connection to the program's server `server`.
pub fn connect(server: &str, program: Arc<dyn ProgramChannel>) -> Connection {
    let (tx, rx) = mpsc::channel(64);
    Connection {
        transport: Arc::new(SdkTransport {
            server: server.to_string(),
            program,
            events: tx,
        }),
        events: rx,
    }
}

#[async_trait]
impl Transport for SdkTransport {
    async fn send(&self, message: Message) -> Result<(), TransportError> {
        let expects_answer = matches!(message, Message::Request { .. });
        let request = json!({
            "subtype": "mcp_message",
            "server_name": self.server,
            "message": message.to_value(),
        });
        let program = self.program.clone();
        let events = self.events.clone();
        // Answers come back as events, as over any other transport; the client matches them.
        tokio::spawn(async move {
            let answer = program.request(request).await;
            if !expects_answer {
                return;
            }
            let event = match answer.map(|a| a.get("mcp_response").cloned()) {
                Ok(Some(response)) => match Message::from_value(response) {
                    Ok(message) => TransportEvent::Message(message),
                    Err(e) => TransportEvent::Closed {
                        reason: format!("the program's server answered no JSON-RPC message: {e}"),
                    },
                },
                Ok(None) => TransportEvent::Closed {
                    reason: "the program answered an mcp_message without `mcp_response`".into(),
                },
                Err(e) => TransportEvent::Closed {
                    reason: format!("the program could not reach its server: {e}"),
                },
            };
            let _ = events.send(event).await;
        });
        Ok(())
    }

    async fn close(&self, _how: Shutdown) {}
}
