//! The session a run records to: a new one (under `--session-id` when given), or one found
//! again with `--continue` / `--resume ID`, with the history and sub-agents to give the agent.

use crate::agent::subagent::ChildTranscript;
use crate::agent::{Resumed, Session, SessionError};
use crate::config::Paths;
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
    warnings: &mut Vec<String>,
) -> Result<RunSession, SessionError> {
    let opened = match resume(&options.resume, paths)? {
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
            let (dir, root) = (paths.sessions_dir(), &paths.project_root);
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
