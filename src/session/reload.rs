//! MCP config edited during the session, picked up before the next prompt under the same
//! trust guard as at the start: a changed project file lapses its trust, and without a yes from
//! the front end's asker the project's servers stay out.

use super::{AgentEvent, Host, Io};
use crate::trust::{ProjectConfig, TrustStatus};

impl Host {
    /// MCP config files edited since the last prompt: reloaded. A changed project file lapses
    /// its trust; the front end's asker (if any) is asked again before any of its servers
    /// starts, and without a yes the project's servers stay out.
    pub(super) async fn reload_mcp(&mut self, io: &Io<'_>) {
        if !self.setup.mcp_sources.changed() {
            return;
        }
        let paths = self.setup.mcp_sources.paths().clone();
        let mut project = match ProjectConfig::read(&paths) {
            Ok(project) => project,
            Err(e) => {
                io.sink.emit(AgentEvent::Warning(format!(
                    "the MCP config was not reloaded: {e}"
                )));
                return;
            }
        };
        if project.status() == TrustStatus::Untrusted {
            let trusted = match io.trust {
                Some(asker) => asker.trust(&project, &paths).await,
                None => false,
            };
            if trusted {
                if let Err(e) = project.trust() {
                    io.sink.emit(AgentEvent::Warning(e.to_string()));
                }
            } else {
                io.sink.emit(AgentEvent::Warning(
                    "the project's config changed since it was trusted, so its MCP servers are \
                     not started; run `ling trust` to use them"
                        .into(),
                ));
            }
        }
        let writable = self.setup.settings.sandbox.writable_roots.clone();
        let env = self.setup.settings.env.clone();
        let guard = |servers: &mut [crate::config::mcp::ServerConfig]| {
            // The same check of the files each server runs as at the start of the run.
            crate::trust::guard::attach(
                &project,
                &mut crate::config::hooks::HooksConfig::default(),
                servers,
                &writable,
                &env,
            );
        };
        match crate::agent::mcp::reload::reload(
            &self.setup.mcp_sources,
            project.layer(),
            &self.setup.mcp,
            guard,
        )
        .await
        {
            Ok((applied, warnings)) => {
                for warning in warnings {
                    io.sink.emit(AgentEvent::Warning(warning));
                }
                if !applied.is_empty() {
                    io.sink.emit(AgentEvent::McpReloaded {
                        added: applied.added,
                        removed: applied.removed,
                        restarted: applied.changed,
                    });
                }
            }
            Err(e) => io.sink.emit(AgentEvent::Warning(format!(
                "{e}; the MCP servers stay as they were"
            ))),
        }
        self.sync_tools().await;
    }
}
