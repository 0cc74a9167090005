//! Before a turn of the REPL: MCP config files edited since the last turn are picked up. A
//! changed project file in a trusted project lapses its trust, so the trust question is asked
//! again before any of its servers starts; answered no, the session goes on without the
//! project's servers. The servers whose config changed restart; the model sees the new tool
//! list with its next request.

use crate::agent::mcp::reload::reload;
use crate::setup::Setup;
use crate::term;
use crate::trust::{ProjectConfig, TrustStatus};
use crate::ui::output::stdout_line;
use crate::ui::style::Style;
use crate::ui::trust::{Answer, ask};

pub async fn before_turn(setup: &mut Setup, style: Style) {
    if !setup.mcp_sources.changed() {
        return;
    }
    let paths = setup.mcp_sources.paths().clone();
    let mut project = match ProjectConfig::read(&paths) {
        Ok(project) => project,
        Err(e) => {
            stdout_line(term![style.red("error:"), " ", e.to_string()]);
            return;
        }
    };
    if project.status() == TrustStatus::Untrusted {
        match ask(&project, &paths).await {
            Ok(Answer::Trust) => {
                if let Err(e) = project.trust() {
                    stdout_line(term![style.red("error:"), " ", e.to_string()]);
                }
            }
            Ok(Answer::Open | Answer::Quit) => stdout_line(style.dim(
                "the session goes on without the project's MCP servers (`ling trust` to use them)",
            )),
            Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
        }
    }
    let guard = |servers: &mut [crate::config::mcp::ServerConfig]| {
        // The same check of the files each server runs as at the start of the run.
        crate::trust::guard::attach(
            &project,
            &mut crate::config::hooks::HooksConfig::default(),
            servers,
            &setup.settings.sandbox.writable_roots,
            &setup.settings.env,
        );
    };
    match reload(&setup.mcp_sources, project.layer(), &setup.mcp, guard).await {
        Ok((applied, warnings)) => {
            for warning in warnings {
                stdout_line(term![style.yellow("warning:"), " ", warning]);
            }
            if !applied.is_empty() {
                stdout_line(style.dim(&describe(&applied)));
            }
        }
        Err(e) => stdout_line(term![
            style.red("error:"),
            " ",
            e.to_string(),
            "; the MCP servers stay as they were"
        ]),
    }
}

/// `mcp config changed: added db, removed web, restarted files`.
pub fn describe(applied: &crate::mcp::Applied) -> String {
    let mut parts = Vec::new();
    for (verb, names) in [
        ("added", &applied.added),
        ("removed", &applied.removed),
        ("restarted", &applied.changed),
    ] {
        if !names.is_empty() {
            parts.push(format!("{verb} {}", names.join(", ")));
        }
    }
    format!("mcp config changed: {}", parts.join("; "))
}
