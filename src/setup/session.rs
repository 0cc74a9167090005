//! The session a run records to: a new one (under `--session-id` when given), or one found
//! again with `--continue` / `--resume ID` (a copy of it under a new id with `--fork-session`),
//! with the history and sub-agents to give the agent; and the checkpoints of the session.

use std::path::Path;

use crate::agent::subagent::ChildTranscript;
use crate::agent::{Resumed, Session, SessionError};
use crate::checkpoint::{self, Checkpoints};
use crate::config::{Paths, Settings};
use crate::llm::Message;

use super::{Resume, RunOptions};

/// The run's session, and what a resumed one brings.
pub(super) struct RunSession {
    pub session: Session,
    /// True when it continues a recorded session.
    pub resumed: bool,
    /// A resumed session's messages and sub-agents' conversations.
    pub messages: Vec<Message>,
    pub children: Vec<(String, ChildTranscript)>,
}

/// The session `options` ask for; a resumed one's warnings (skipped lines, repairs) are added
/// to `warnings`. `model`: a new session's, for its header.
pub(super) fn open(
    options: &RunOptions,
    paths: &Paths,
    model: &str,
    ephemeral: Option<&EphemeralDir>,
    warnings: &mut Vec<String>,
) -> Result<RunSession, SessionError> {
    let resumed = match resume(&options.resume, paths)? {
        Some(found) if options.fork_session => {
            let mut forked = fork(&found.session.transcript_path, paths, warnings)?;
            forked.warnings.splice(0..0, found.warnings);
            Some(forked)
        }
        other => other,
    };
    let opened = match resumed {
        Some(Resumed {
            session,
            messages,
            warnings: found,
            children,
        }) => {
            warnings.extend(found);
            RunSession {
                session,
                resumed: true,
                messages,
                children,
            }
        }
        None => {
            let dir = ephemeral.map_or_else(|| paths.sessions_dir(), |e| e.0.clone());
            let root = &paths.project_root;
            let session = match options.session_id.clone() {
                Some(id) => Session::with_id(&dir, root, model, id),
                None => Session::new(&dir, root, model),
            };
            RunSession {
                session,
                resumed: false,
                messages: Vec::new(),
                children: Vec::new(),
            }
        }
    };
    tracing::info!(
        "session {} ({}), transcript {}",
        opened.session.id,
        if opened.resumed { "resumed" } else { "new" },
        opened.session.transcript_path.display()
    );
    Ok(opened)
}

/// `--ephemeral`'s folder for the session's transcript (hooks read it while the run lasts),
/// under the temp dir and removed when dropped.
#[derive(Debug)]
pub struct EphemeralDir(std::path::PathBuf);

impl EphemeralDir {
    pub(super) fn new() -> Self {
        Self(std::env::temp_dir().join(format!("ling-ephemeral-{}", uuid::Uuid::new_v4())))
    }
}

impl Drop for EphemeralDir {
    fn drop(&mut self) {
        // Nothing to do when the run never wrote it.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The session `--continue` or `--resume ID` asks for; `None` for a new one.
fn resume(resume: &Resume, paths: &Paths) -> Result<Option<Resumed>, SessionError> {
    let dir = paths.sessions_dir();
    let found = match resume {
        Resume::Id(id) => Session::open(&dir, id.trim()),
        Resume::Latest => Session::open_latest(&dir, &paths.project_root),
        Resume::New => return Ok(None),
    };
    found.map(Some)
}

/// The checkpoints of this run's session (`None` with settings `checkpoints: false`): the
/// project root and the writable folders, `LING_HOME` and the temp dir left out. Their first
/// look starts now, in the background, when somebody works in the session (`eager`); in a
/// one-shot run, at its first call that writes.
pub(super) fn checkpoints_of(
    settings: &Settings,
    paths: &Paths,
    session_id: &str,
    eager: bool,
) -> Option<Checkpoints> {
    if !settings.checkpoints.enabled {
        return None;
    }
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let roots = checkpoint::roots_of(&paths.project_root, &settings.sandbox.writable_roots);
    // Left out where they lie inside a recorded folder, not where a folder lies inside them
    // (a project in the temp dir is recorded).
    let excluded = [
        real(&paths.home),
        real(&std::env::temp_dir()),
        real(Path::new("/dev/shm")),
    ]
    .into_iter()
    .filter(|e| !roots.iter().any(|r| r.starts_with(e)))
    .collect();
    Some(Checkpoints::open(checkpoint::OpenOptions {
        dir: paths.checkpoints_dir(),
        session_id: session_id.to_string(),
        roots,
        excluded,
        settings: settings.checkpoints,
        eager,
    }))
}

/// `--fork-session`: a copy of the session found, under a new id, with its checkpoints.
pub(super) fn fork(
    transcript: &Path,
    paths: &Paths,
    warnings: &mut Vec<String>,
) -> Result<Resumed, SessionError> {
    let dir = paths.sessions_dir();
    let forked = Session::fork(&dir, transcript)?;
    let journals = paths.checkpoints_dir();
    let (from, to) = (&forked.from, &forked.resumed.session.id);
    if let Err(e) = checkpoint::fork_journal(&journals, from, to, forked.shift) {
        warnings.push(format!(
            "the checkpoints of session {} could not be copied to its fork ({e}): the fork can \
             rewind its conversation, not the files before it",
            forked.from
        ));
    }
    Ok(forked.resumed)
}
