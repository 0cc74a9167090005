//! The file tools' reads and writes through the editor (`fs/read_text_file`,
//! `fs/write_text_file`) when it offers them, so the agent sees the editor's unsaved buffers and
//! its edits land in them (and in the editor's undo history). The file on disk is still checked
//! first: a binary, oversized or special file is refused the same way as without an editor;
//! and a write's path is checked again when it is sent, as the local write checks it when it
//! writes, since the editor follows a symlink that a command swapped in after the tool call
//! was judged.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    ReadTextFileRequest, ReadTextFileResponse, SessionId, WriteTextFileRequest,
};
use async_trait::async_trait;

use crate::rpc::Peer;
use crate::tools::{FileAccess, LocalFiles, ToolError, check_write_path};

/// A session's files, through its client where the client said it can.
pub(super) struct ClientFiles {
    pub peer: Peer,
    pub session_id: String,
    pub read: bool,
    pub write: bool,
    /// How long the editor may take to answer one read or write.
    pub timeout: Duration,
}

impl ClientFiles {
    pub(super) fn shared(self) -> Arc<dyn FileAccess> {
        Arc::new(self)
    }

    async fn call(
        &self,
        method: &str,
        params: serde_json::Value,
        shown: &str,
    ) -> Result<serde_json::Value, ToolError> {
        self.peer
            .request(method, params, Some(self.timeout), None)
            .await
            .map_err(|e| ToolError::failed(format!("the editor could not {method} {shown}: {e}")))
    }
}

#[async_trait]
impl FileAccess for ClientFiles {
    async fn read_text(&self, root: &Path, path: &Path, shown: &str) -> Result<String, ToolError> {
        // The same refusals as without an editor (and the file must exist on disk).
        let on_disk = LocalFiles.read_text(root, path, shown).await?;
        if !self.read {
            return Ok(on_disk);
        }
        let request = ReadTextFileRequest::new(SessionId::new(self.session_id.as_str()), path);
        let params = serde_json::to_value(&request)
            .map_err(|e| ToolError::failed(format!("cannot ask for {shown}: {e}")))?;
        let answer = self.call("fs/read_text_file", params, shown).await?;
        let response: ReadTextFileResponse = serde_json::from_value(answer).map_err(|e| {
            ToolError::failed(format!("the editor's answer for {shown} has no text: {e}"))
        })?;
        Ok(response.content)
    }

    async fn write_text(
        &self,
        root: &Path,
        path: &Path,
        content: &str,
        shown: &str,
    ) -> Result<(), ToolError> {
        if !self.write {
            return LocalFiles.write_text(root, path, content, shown).await;
        }
        check_write_path(root, path, shown).await?;
        let request = WriteTextFileRequest::new(
            SessionId::new(self.session_id.as_str()),
            path,
            content.to_string(),
        );
        let params = serde_json::to_value(&request)
            .map_err(|e| ToolError::failed(format!("cannot send {shown}: {e}")))?;
        self.call("fs/write_text_file", params, shown)
            .await
            .map(|_| ())
    }
}
