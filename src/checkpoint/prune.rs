//! Keeping the checkpoints of all sessions within `checkpoints.maxStorage`: the journals of the
//! sessions used longest ago go first (their conversations stay; only their files can no
//! longer be rewound), then every blob no journal names. A blob or journal used in the last
//! hour is never removed, so a session running meanwhile keeps what it has just recorded.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::blobs::Blobs;
use super::journal::Record;
use super::tree::Entry;

/// How recently used a blob or journal must be to be spared.
const GRACE: Duration = Duration::from_secs(3600);
/// How often a session's start checks the bound by itself.
const CHECK_EVERY: Duration = Duration::from_secs(3600);
const EXTENSION: &str = "journal";

/// What a prune did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// Sessions whose checkpoints were removed, oldest first.
    pub sessions: Vec<String>,
    pub blobs_removed: usize,
    pub bytes_freed: u64,
    /// What the checkpoints take now, and the bound.
    pub bytes_used: u64,
    pub max_storage: u64,
}

struct JournalFile {
    id: String,
    path: PathBuf,
    size: u64,
    modified: SystemTime,
}

struct BlobFile {
    path: PathBuf,
    size: u64,
    modified: SystemTime,
}

/// Brings the checkpoints in `dir` within `max_storage` bytes, never touching the
/// sessions of `keep` (the running one); every blob no journal names goes too.
pub fn prune(dir: &Path, max_storage: u64, keep: &[String]) -> std::io::Result<PruneReport> {
    let now = SystemTime::now();
    let recent = |t: SystemTime| now.duration_since(t).unwrap_or_default() < GRACE;
    let mut journals = journal_files(dir);
    journals.sort_by_key(|j| j.modified);
    let blobs = blob_files(&blob_dir(dir));
    let mut used: u64 =
        journals.iter().map(|j| j.size).sum::<u64>() + blobs.values().map(|b| b.size).sum::<u64>();
    let mut refs: HashMap<String, usize> = HashMap::new();
    let mut named: Vec<HashSet<String>> = Vec::new();
    for journal in &journals {
        let hashes = hashes_in(&journal.path);
        for hash in &hashes {
            *refs.entry(hash.clone()).or_default() += 1;
        }
        named.push(hashes);
    }
    let mut report = PruneReport {
        max_storage,
        ..PruneReport::default()
    };
    let mut dropped = vec![false; journals.len()];
    for (index, journal) in journals.iter().enumerate() {
        if used <= max_storage {
            break;
        }
        if keep.contains(&journal.id) || recent(journal.modified) {
            continue;
        }
        std::fs::remove_file(&journal.path)?;
        dropped[index] = true;
        used = used.saturating_sub(journal.size);
        report.bytes_freed += journal.size;
        report.sessions.push(journal.id.clone());
        for hash in &named[index] {
            if let Some(count) = refs.get_mut(hash) {
                *count = count.saturating_sub(1);
            }
        }
    }
    for (hash, blob) in &blobs {
        let named = refs.get(hash).is_some_and(|count| *count > 0);
        if named || recent(blob.modified) {
            continue;
        }
        if std::fs::remove_file(&blob.path).is_ok() {
            used = used.saturating_sub(blob.size);
            report.bytes_freed += blob.size;
            report.blobs_removed += 1;
        }
    }
    report.bytes_used = used;
    Ok(report)
}

/// [`prune`] at most once an hour, for a session's start (in the background); the time of the
/// last check is a marker file's.
pub fn prune_now_and_then(dir: &Path, max_storage: u64, keep: &[String]) {
    let marker = blob_dir(dir).join(".last-prune");
    let due = std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .map(|t| SystemTime::now().duration_since(t).unwrap_or_default() >= CHECK_EVERY)
        .unwrap_or(true);
    if !due {
        return;
    }
    let _ = crate::config::private_fs::write_atomic(&marker, b"");
    // Cheap first: only when over the bound are the journals read.
    let used: u64 = journal_files(dir).iter().map(|j| j.size).sum::<u64>()
        + blob_files(&blob_dir(dir))
            .values()
            .map(|b| b.size)
            .sum::<u64>();
    if used > max_storage {
        let _ = prune(dir, max_storage, keep);
    }
}

pub fn blob_dir(dir: &Path) -> PathBuf {
    dir.join("blobs")
}

fn journal_files(dir: &Path) -> Vec<JournalFile> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != EXTENSION) {
                return None;
            }
            let meta = entry.metadata().ok().filter(|m| m.is_file())?;
            Some(JournalFile {
                id: path.file_stem()?.to_string_lossy().into_owned(),
                size: meta.len(),
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                path,
            })
        })
        .collect()
}

/// Every blob by its hash (temporary files left by a crash count as their own names).
fn blob_files(dir: &Path) -> HashMap<String, BlobFile> {
    let mut blobs = HashMap::new();
    for head in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let head_name = head.file_name().to_string_lossy().into_owned();
        if head_name.len() != 2 {
            continue;
        }
        for blob in std::fs::read_dir(head.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(meta) = blob.metadata() else { continue };
            let name = blob.file_name().to_string_lossy().into_owned();
            blobs.insert(
                format!("{head_name}{name}"),
                BlobFile {
                    path: blob.path(),
                    size: meta.len(),
                    modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                },
            );
        }
    }
    blobs
}

/// The blobs a journal names.
fn hashes_in(path: &Path) -> HashSet<String> {
    let mut hashes = HashSet::new();
    let Ok(text) = std::fs::read(path) else {
        return hashes;
    };
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if let Ok(Record::State { changes, .. }) = serde_json::from_slice::<Record>(line) {
            for change in changes {
                if let Some(Entry::File { hash: Some(h), .. }) = change.entry {
                    hashes.insert(h);
                }
            }
        }
    }
    hashes
}

/// The blob store of `dir`.
pub fn blobs_of(dir: &Path) -> Blobs {
    Blobs::new(blob_dir(dir))
}
