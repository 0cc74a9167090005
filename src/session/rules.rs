//! The REPL's "always" kept beyond the session: the rule added to the project's or the user's
//! `settings.json`. The project's file is part of what its trust covers, so a folder trusted
//! before the user's own edit stays trusted (as `ling mcp add` does).

use crate::config::settings_edit::add_allow_rule;
use crate::config::{Paths, SETTINGS_FILE};
use crate::trust::{ProjectConfig, TrustStatus};

use super::HostError;

/// Adds `rule` to the user's (`user`) or the project's `settings.json`; returns the file as
/// shown.
pub(super) fn keep(paths: &Paths, rule: &str, user: bool) -> Result<String, HostError> {
    let file = if user {
        paths.user_file(SETTINGS_FILE)
    } else {
        paths.project_file(SETTINGS_FILE)
    };
    let before = (!user).then(|| ProjectConfig::read(paths)).transpose()?;
    add_allow_rule(&file, rule, user)?;
    if let Some(before) = before {
        let was_usable = match before.status() {
            TrustStatus::Trusted => true,
            TrustStatus::None => !before.is_user_config(),
            TrustStatus::Untrusted => false,
        };
        let mut after = ProjectConfig::read(paths)?;
        if was_usable && after.status() == TrustStatus::Untrusted {
            after.trust()?;
        }
    }
    Ok(paths.display(&file).into_owned())
}
