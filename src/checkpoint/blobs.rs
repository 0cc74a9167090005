//! The content-addressed store of file contents every checkpoint points into:
//! `LING_HOME/checkpoints/blobs/<2 hex>/<62 hex>`, one owner-only file per distinct content (its
//! SHA-256), shared by every session and fork, so that a content kept once is never kept
//! twice. A blob is written to a temporary name and renamed, so a reader never sees half of
//! one; it is read back only after its hash is checked.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::config::private_fs;

/// The blob store of one `LING_HOME`.
#[derive(Debug, Clone)]
pub struct Blobs {
    dir: PathBuf,
}

/// What storing a file gave.
pub struct Stored {
    /// `None` when the file grew past the bound while it was read.
    pub hash: Option<String>,
    pub size: u64,
}

impl Blobs {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub fn path(&self, hash: &str) -> PathBuf {
        let (head, tail) = hash.split_at(hash.len().min(2));
        self.dir.join(head).join(tail)
    }

    /// Keeps the content of the regular file `path` (not followed if it became a symlink),
    /// unless it is larger than `max` bytes.
    pub fn put_file(&self, path: &Path, max: u64) -> std::io::Result<Stored> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)?;
        let mut content = Vec::new();
        file.take(max.saturating_add(1)).read_to_end(&mut content)?;
        let size = content.len() as u64;
        if size > max {
            return Ok(Stored { hash: None, size });
        }
        let (hash, _) = self.put(&content)?;
        Ok(Stored {
            hash: Some(hash),
            size,
        })
    }

    /// Keeps `content`; returns its hash and the bytes the store grew by.
    pub fn put(&self, content: &[u8]) -> std::io::Result<(String, u64)> {
        let hash = hex(&Sha256::digest(content));
        let target = self.path(&hash);
        if self.touch(&hash) {
            return Ok((hash, 0));
        }
        let Some(parent) = target.parent() else {
            return Err(std::io::Error::other("a blob path has no folder"));
        };
        private_fs::create_dir(parent)?;
        let tmp = parent.join(format!(".tmp-{}-{}", std::process::id(), fastrand::u64(..)));
        let written = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(private_fs::FILE_MODE)
                .open(&tmp)?;
            file.write_all(content)?;
            std::fs::rename(&tmp, &target)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map(|()| (hash, content.len() as u64))
    }

    /// Marks the blob as in use now (pruning spares recently used blobs that no journal names
    /// yet); false when it is not there.
    pub fn touch(&self, hash: &str) -> bool {
        match File::options().write(true).open(self.path(hash)) {
            Ok(file) => {
                let _ = file.set_modified(SystemTime::now());
                true
            }
            Err(_) => false,
        }
    }

    /// The content of a blob, checked against its hash.
    pub fn read(&self, hash: &str) -> Result<Vec<u8>, BlobError> {
        let content = std::fs::read(self.path(hash)).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                BlobError::Missing
            } else {
                BlobError::Unreadable(e)
            }
        })?;
        if hex(&Sha256::digest(&content)) != hash {
            return Err(BlobError::Damaged);
        }
        Ok(content)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("its recorded content was pruned (`ling sessions prune`, checkpoints.maxStorage)")]
    Missing,
    #[error("its recorded content is damaged (it no longer matches its hash)")]
    Damaged,
    #[error("its recorded content cannot be read: {0}")]
    Unreadable(std::io::Error),
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_content_is_kept_once_and_read_back_checked() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = Blobs::new(dir.path().join("blobs"));
        let (hash, added) = blobs.put(b"hello").unwrap();
        assert_eq!(added, 5);
        assert_eq!(blobs.put(b"hello").unwrap(), (hash.clone(), 0));
        assert_eq!(blobs.read(&hash).unwrap(), b"hello");
        std::fs::write(blobs.path(&hash), b"bye").unwrap();
        assert!(matches!(blobs.read(&hash), Err(BlobError::Damaged)));
        std::fs::remove_file(blobs.path(&hash)).unwrap();
        assert!(matches!(blobs.read(&hash), Err(BlobError::Missing)));
    }
}
