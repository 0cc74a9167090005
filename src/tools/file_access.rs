//! Where the file tools read and write a file's text: the local file system by default, or a
//! front end's own (an ACP editor's `fs/*` methods, so the agent sees and changes the editor's
//! unsaved buffers). The tools still resolve and confine the path, look at its metadata and
//! decide what to do; only the content goes through a [`FileAccess`].

use std::path::Path;

use async_trait::async_trait;

use super::ToolError;
use super::files::{read_text, write_atomic};

/// Reads and writes whole text files for the file tools. `path` is absolute and already checked
/// (inside the project unless the mode allows otherwise); `root` is the canonical project root
/// the local disk reaches it beneath without following a symlink (`tools::beneath`); `shown`
/// is how errors name it.
#[async_trait]
pub trait FileAccess: Send + Sync {
    /// The file's text; a binary, oversized or special file is refused with a message the model
    /// can act on.
    async fn read_text(&self, root: &Path, path: &Path, shown: &str) -> Result<String, ToolError>;
    /// Replaces (or creates) the file with `content`, never leaving it half-written.
    async fn write_text(
        &self,
        root: &Path,
        path: &Path,
        content: &str,
        shown: &str,
    ) -> Result<(), ToolError>;
}

/// The local file system: reads with binary detection, atomic writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalFiles;

#[async_trait]
impl FileAccess for LocalFiles {
    async fn read_text(&self, root: &Path, path: &Path, shown: &str) -> Result<String, ToolError> {
        read_text(root, path, shown).await
    }

    async fn write_text(
        &self,
        root: &Path,
        path: &Path,
        content: &str,
        shown: &str,
    ) -> Result<(), ToolError> {
        write_atomic(root, path, content.as_bytes(), shown).await
    }
}
