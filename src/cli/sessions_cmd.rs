//! `ling sessions list [--json]`: this project's recorded sessions, most recently used first,
//! each with its id (for `--resume ID`), start, last activity, first prompt and message count.
//! `ling sessions prune [--max-storage BYTES] [--json]`: the checkpoints of all sessions
//! brought within their storage bound, oldest sessions first.

use std::path::PathBuf;

use super::args::SessionsCommand;
use super::{CliError, Exit};
use crate::agent::session_list;
use crate::checkpoint::{self, human_bytes};
use crate::config::checkpoints::{CheckpointSettings, RawCheckpoints};
use crate::config::{Paths, SETTINGS_FILE};
use crate::setup::project_root;
use crate::ui::output::{stdout, stdout_json};

pub fn run(command: SessionsCommand, cwd: Option<PathBuf>) -> Result<Exit, CliError> {
    match command {
        SessionsCommand::List { json } => list(json, cwd),
        SessionsCommand::Prune { max_storage, json } => prune(max_storage, json),
    }
}

fn list(json: bool, cwd: Option<PathBuf>) -> Result<Exit, CliError> {
    let paths = Paths::new(project_root(cwd.as_ref())?);
    let sessions = session_list::list(&paths.sessions_dir(), &paths.project_root);
    if json {
        let text = serde_json::to_string_pretty(&sessions)
            .map_err(|e| CliError::Failed(format!("cannot encode the sessions: {e}")))?;
        stdout_json(&format!("{text}\n"));
        return Ok(Exit::Success);
    }
    if sessions.is_empty() {
        stdout(format!(
            "No sessions recorded for {} (in {}).\n",
            paths.project_root.display(),
            paths.sessions_dir().display()
        ));
        return Ok(Exit::Success);
    }
    let mut text = format!(
        "{:<36}  {:<20}  {:<20}  {:>8}  first prompt\n",
        "id", "started", "last activity", "messages"
    );
    for s in &sessions {
        text.push_str(&format!(
            "{:<36}  {:<20}  {:<20}  {:>8}  {}\n",
            s.id, s.started, s.last_activity, s.messages, s.first_prompt
        ));
    }
    text.push_str("Resume one with `ling --resume ID` (or the latest with `ling --continue`).\n");
    stdout(text);
    Ok(Exit::Success)
}

/// The bound: the flag's, else the user's settings `checkpoints.maxStorage` (a project's
/// settings do not decide what `LING_HOME` keeps), else the default.
fn prune(max_storage: Option<u64>, json: bool) -> Result<Exit, CliError> {
    let home = crate::config::ling_home();
    let bound = match max_storage {
        Some(bytes) => bytes,
        None => user_bound(&home.join(SETTINGS_FILE))?,
    };
    let dir = home.join("checkpoints");
    let report = checkpoint::prune(&dir, bound, &[]).map_err(|e| {
        CliError::Failed(format!(
            "cannot prune the checkpoints in {}: {e}",
            dir.display()
        ))
    })?;
    if json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::Failed(format!("cannot encode the report: {e}")))?;
        stdout_json(&format!("{text}\n"));
        return Ok(Exit::Success);
    }
    let mut text = format!(
        "Checkpoints of {} session(s) removed, {} unused content(s); {} freed. They take {} \
         now (bound {}).\n",
        report.sessions.len(),
        report.blobs_removed,
        human_bytes(report.bytes_freed),
        human_bytes(report.bytes_used),
        human_bytes(report.max_storage),
    );
    if report.bytes_used > report.max_storage {
        text.push_str(
            "Still over the bound: what was used in the last hour is kept (a session may be \
             running).\n",
        );
    }
    stdout(text);
    Ok(Exit::Success)
}

fn user_bound(file: &std::path::Path) -> Result<u64, CliError> {
    #[derive(serde::Deserialize)]
    struct OnlyCheckpoints {
        checkpoints: Option<RawCheckpoints>,
    }
    let raw: Option<OnlyCheckpoints> = crate::config::read_json_file(file)?;
    let layer = raw.and_then(|r| r.checkpoints);
    CheckpointSettings::resolve(&[layer.as_ref()])
        .map(|s| s.max_storage)
        .map_err(CliError::Usage)
}
