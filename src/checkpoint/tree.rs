//! What a checkpoint knows of one path ([`Entry`]: a folder, a file's content by its hash, a
//! symlink's target) and of the writable folders as a whole ([`Tree`]), and how both are read
//! from the disk: one path by `lstat` (never following a symlink), a folder by a walk that
//! leaves out `.git` and the paths Ling keeps elsewhere (`LING_HOME`, the temp dir).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::blobs::Blobs;

/// The recorded paths of the writable folders and what each was.
pub type Tree = BTreeMap<PathBuf, Entry>;

/// One path as a checkpoint keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "lowercase")]
pub enum Entry {
    Dir {
        mode: u32,
        /// A folder replaced by another of the same name is a new folder.
        #[serde(default)]
        ino: u64,
    },
    File {
        mode: u32,
        size: u64,
        /// The content's SHA-256 in the blob store; `None` for a file over the size bound,
        /// recorded by its size and times only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hash: Option<String>,
        #[serde(flatten)]
        key: StatKey,
    },
    Link {
        target: Bytes,
    },
    /// A socket, fifo or device: recorded so that a rewind can say it cannot make one.
    Other {
        mode: u32,
    },
}

/// What says cheaply that a file is unchanged: its times in nanoseconds and its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StatKey {
    #[serde(rename = "mt")]
    pub mtime: i64,
    #[serde(rename = "ct")]
    pub ctime: i64,
    pub ino: u64,
}

impl StatKey {
    pub fn of(meta: &Metadata) -> Self {
        Self {
            mtime: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
        }
    }
}

impl Entry {
    /// Whether restoring `self` over `other` would change nothing the user can see: the kind,
    /// the permission bits, the content or the link's target (times and inodes aside).
    pub fn same(&self, other: &Entry) -> bool {
        match (self, other) {
            (Entry::Dir { mode: a, .. }, Entry::Dir { mode: b, .. }) => a == b,
            (
                Entry::File {
                    mode: ma,
                    size: sa,
                    hash: ha,
                    key: ka,
                },
                Entry::File {
                    mode: mb,
                    size: sb,
                    hash: hb,
                    key: kb,
                },
            ) => {
                ma == mb
                    && sa == sb
                    && match (ha, hb) {
                        (Some(a), Some(b)) => a == b,
                        // Not kept: the same only if it was not touched at all.
                        _ => ka.mtime == kb.mtime && ka.ino == kb.ino,
                    }
            }
            (Entry::Link { target: a }, Entry::Link { target: b }) => a == b,
            (Entry::Other { mode: a }, Entry::Other { mode: b }) => a == b,
            _ => false,
        }
    }

    pub fn is_dir(&self) -> bool {
        matches!(self, Entry::Dir { .. })
    }
}

/// A path or link target as raw bytes, written in JSON as text when it is UTF-8 and else as
/// `\u0000` and its bytes in hex (no Unix path holds a NUL, so nothing is read wrongly).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub PathBuf);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&encode_path(&self.0))
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        decode_path(&text)
            .map(Bytes)
            .ok_or_else(|| serde::de::Error::custom("a path in hex with an odd digit"))
    }
}

pub fn encode_path(path: &Path) -> String {
    match path.to_str() {
        Some(text) if !text.starts_with('\0') => text.to_string(),
        _ => {
            let mut out = String::from("\0");
            for byte in path.as_os_str().as_bytes() {
                out.push_str(&format!("{byte:02x}"));
            }
            out
        }
    }
}

pub fn decode_path(text: &str) -> Option<PathBuf> {
    let Some(hex) = text.strip_prefix('\0') else {
        return Some(PathBuf::from(text));
    };
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    Some(PathBuf::from(OsString::from_vec(bytes?)))
}

/// How paths are read: where the blobs go, what is too big to keep, what to leave out.
pub struct Scanner<'a> {
    pub blobs: &'a Blobs,
    pub max_file_size: u64,
    /// Paths never recorded, with everything below them.
    pub excluded: &'a [PathBuf],
}

impl Scanner<'_> {
    /// Whether `path` is left out: a `.git` (the repository's own history, which the sandbox
    /// keeps read-only anyway) or beneath an excluded path.
    pub fn leaves_out(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|n| n == ".git")
            || self.excluded.iter().any(|e| path.starts_with(e))
    }

    /// `path` as an entry, from its `lstat` metadata. A file whose [`StatKey`] and size match
    /// `known` (and whose change time is older than `racy_before`, in ns) keeps `known`'s
    /// hash without being read.
    pub fn entry(
        &self,
        path: &Path,
        meta: &Metadata,
        known: Option<&Entry>,
        racy_before: i64,
    ) -> std::io::Result<Entry> {
        let kind = meta.file_type();
        let mode = meta.permissions().mode() & 0o7777;
        if kind.is_symlink() {
            return Ok(Entry::Link {
                target: Bytes(std::fs::read_link(path)?),
            });
        }
        if kind.is_dir() {
            return Ok(Entry::Dir {
                mode,
                ino: meta.ino(),
            });
        }
        if !kind.is_file() {
            return Ok(Entry::Other { mode });
        }
        let key = StatKey::of(meta);
        let size = meta.len();
        if let Some(Entry::File {
            size: known_size,
            hash: Some(hash),
            key: known_key,
            ..
        }) = known
            && *known_size == size
            && *known_key == key
            && key.ctime < racy_before
        {
            return Ok(Entry::File {
                mode,
                size,
                hash: Some(hash.clone()),
                key,
            });
        }
        if size > self.max_file_size {
            return Ok(Entry::File {
                mode,
                size,
                hash: None,
                key,
            });
        }
        let stored = self.blobs.put_file(path, self.max_file_size)?;
        Ok(Entry::File {
            mode,
            size: stored.size,
            hash: stored.hash,
            key,
        })
    }

    /// Every path below `dir` (not `dir` itself) with its metadata, folders before what they
    /// hold; `on_dir` is called for each folder before it is listed (the watch is set first,
    /// so nothing made while listing is missed). More than `max` paths is `Err(TooMany)`.
    pub fn walk(
        &self,
        dir: &Path,
        max: usize,
        on_dir: &mut dyn FnMut(&Path),
    ) -> Result<Vec<(PathBuf, Metadata)>, WalkError> {
        let mut found = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            on_dir(&dir);
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                // Gone, or not ours to read: what it holds is not recorded.
                Err(_) => continue,
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if self.leaves_out(&path) {
                    continue;
                }
                // `DirEntry::metadata` is an `lstat`: a symlink is recorded, not followed.
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_dir() {
                    stack.push(path.clone());
                }
                found.push((path, meta));
                if found.len() > max {
                    return Err(WalkError::TooMany);
                }
            }
        }
        Ok(found)
    }
}

#[derive(Debug)]
pub enum WalkError {
    TooMany,
}

/// The paths at or below `path` in `tree`.
pub fn subtree<'a>(tree: &'a Tree, path: &'a Path) -> impl Iterator<Item = &'a PathBuf> + 'a {
    tree.range(path.to_path_buf()..)
        .map(|(p, _)| p)
        .take_while(move |p| p.starts_with(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_are_not_utf8_survive_the_journal() {
        let odd = PathBuf::from(OsString::from_vec(b"/p/caf\xe9".to_vec()));
        let text = encode_path(&odd);
        assert!(text.starts_with('\0'));
        assert_eq!(decode_path(&text), Some(odd));
        assert_eq!(encode_path(Path::new("/p/a b")), "/p/a b");
        assert_eq!(decode_path("/p/a b"), Some(PathBuf::from("/p/a b")));
    }

    #[test]
    fn a_subtree_is_the_path_and_what_lies_below_it() {
        let mut tree = Tree::new();
        for p in ["/r/a", "/r/a/b", "/r/a/b/c", "/r/a.txt", "/r/ab"] {
            tree.insert(PathBuf::from(p), Entry::Other { mode: 0 });
        }
        let below: Vec<_> = subtree(&tree, Path::new("/r/a")).cloned().collect();
        assert_eq!(
            below,
            ["/r/a", "/r/a/b", "/r/a/b/c"].map(PathBuf::from).to_vec()
        );
    }
}
