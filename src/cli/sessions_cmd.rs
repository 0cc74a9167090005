//! `ling sessions list [--json]`: this project's recorded sessions, most recently used first,
//! each with its id (for `--resume ID`), start, last activity, first prompt and message count.

use std::path::PathBuf;

use super::args::SessionsCommand;
use super::{CliError, Exit};
use crate::agent::session_list;
use crate::config::Paths;
use crate::setup::project_root;
use crate::ui::output::{stdout, stdout_json};

pub fn run(command: SessionsCommand, cwd: Option<PathBuf>) -> Result<Exit, CliError> {
    let SessionsCommand::List { json } = command;
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
