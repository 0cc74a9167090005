//! `ling trust [DIR]` (show what the project's config brings and trust it, no question asked:
//! the user typed the command), `ling trust --list` and `ling trust --revoke [DIR]`.

use std::path::PathBuf;

use super::{CliError, Exit};
use crate::config::{Paths, ling_home};
use crate::setup::project_root;
use crate::trust::{FolderState, ProjectConfig, TrustStatus, revoke, trusted_folders};
use crate::ui::output::stdout;
use crate::ui::style::Style;
use crate::ui::term::Term;
use crate::ui::trust::{describe, shown};

pub fn run(dir: Option<PathBuf>, list: bool, revoke_it: bool) -> Result<Exit, CliError> {
    if list {
        stdout(&list_text()?);
    } else if revoke_it {
        stdout(&revoke_text(dir)?);
    } else {
        stdout(trust_text(dir)?);
    }
    Ok(Exit::Success)
}

fn trust_text(dir: Option<PathBuf>) -> Result<Term, CliError> {
    let paths = Paths::new(project_root(dir.as_ref())?);
    let mut project = ProjectConfig::read(&paths)?;
    let root = shown(&project.root().display().to_string()).into_owned();
    if project.is_user_config() {
        return Ok(Term::from(format!(
            "Nothing to trust: {root}/.ling is your own config ({}), which always applies.\n",
            paths.home.display()
        )));
    }
    if !project.has_config() {
        return Ok(Term::from(format!(
            "Nothing to trust: {root} has no project config (.ling/settings.json, \
             .ling/hooks.json, .ling/mcp.json).\n"
        )));
    }
    let style = Style::for_stdout();
    // Described before trusting, so that a changed config still shows what changed.
    let description = describe(&project, &paths, style);
    let head = match project.status() {
        TrustStatus::Trusted => format!("{root} is already trusted and its config is unchanged."),
        _ => {
            project.trust()?;
            format!("Trusted {root}: its project config now applies, until it changes.")
        }
    };
    Ok(crate::term![head, "\n", description])
}

fn list_text() -> Result<String, CliError> {
    let folders = trusted_folders(&ling_home())?;
    if folders.is_empty() {
        return Ok("No trusted folders. `ling trust DIR` trusts one.\n".into());
    }
    let width = folders
        .iter()
        .map(|f| f.root.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for folder in folders {
        let state = match folder.state {
            FolderState::Matches => "config unchanged",
            FolderState::Changed => "config changed since: not trusted until `ling trust` again",
            FolderState::Missing => "folder no longer exists",
        };
        out.push_str(&format!(
            "{:<width$}  trusted {}  {state}\n",
            shown(&folder.root),
            shown(&folder.trusted_at)
        ));
    }
    Ok(out)
}

fn revoke_text(dir: Option<PathBuf>) -> Result<String, CliError> {
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::Usage(format!("cannot read the current directory: {e}")))?;
    // A folder that is gone can still be forgotten, by the path it had.
    let root = match dir {
        Some(dir) => cwd.join(dir),
        None => cwd,
    };
    // A folder inside a project stands for its root, whose trust it shares.
    let root = match std::fs::canonicalize(&root) {
        Ok(dir) => crate::config::find_project_root(&dir, &ling_home()),
        Err(_) => root,
    };
    let root_shown = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
    Ok(if revoke(&ling_home(), &root)? {
        format!(
            "Revoked the trust of {}: its project config no longer applies (the REPL asks \
             again).\n",
            shown(&root_shown.display().to_string())
        )
    } else {
        format!(
            "{} was not trusted; nothing to revoke.\n",
            shown(&root_shown.display().to_string())
        )
    })
}
