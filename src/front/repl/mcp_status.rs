//! The REPL's view of the MCP servers: `/mcp`'s table, and the servers' changes (connected,
//! failed, needing a login) said once each before the next prompt and before each turn.

use crate::mcp::{ServerState, ServerStatus};
use crate::session::Host;
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// Servers start in the background: their changes are said once each, before the next prompt
/// and before each turn (so a server is said connected before the turn that uses it).
#[derive(Default)]
pub(super) struct ServerNotices {
    reported: std::sync::Mutex<Vec<ServerStatus>>,
}

impl ServerNotices {
    /// The lines for what changed since the last report.
    fn changes(&self, now: Vec<ServerStatus>, style: Style) -> Vec<crate::ui::term::Term> {
        let mut seen = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        let mut lines = Vec::new();
        for status in &now {
            let before = seen.iter().find(|s| s.name == status.name);
            if before.map(|b| &b.state) == Some(&status.state) {
                continue;
            }
            match &status.state {
                ServerState::Connected => lines.push(style.dim(&format!(
                    "mcp {}: connected ({} tools)",
                    status.name, status.tools
                ))),
                ServerState::Failed(why) => lines.push(term![
                    style.yellow("warning:"),
                    format!(" mcp {}: {why}", status.name)
                ]),
                ServerState::NeedsAuth(how) => lines.push(term![
                    style.yellow("mcp"),
                    format!(" {}: needs-auth: {how}", status.name)
                ]),
                ServerState::Starting | ServerState::Disabled => {}
            }
        }
        *seen = now;
        lines
    }

    /// Says what changed, now.
    pub(super) fn report(&self, host: &Host, style: Style) {
        for line in self.changes(host.mcp().statuses(), style) {
            stdout_line(line);
        }
    }
}

pub(super) fn print_mcp_status(host: &Host, style: Style) {
    let statuses = host.mcp().statuses();
    if statuses.is_empty() {
        stdout_line("no MCP servers configured (~/.ling/mcp.json, .ling/mcp.json, --mcp-config)");
        return;
    }
    for status in statuses {
        // Pad before styling: escape codes would count as width.
        let state = match &status.state {
            ServerState::Connected => style.green("connected"),
            ServerState::Starting => style.yellow("starting "),
            ServerState::Disabled => style.dim("disabled "),
            ServerState::Failed(_) => style.red("failed   "),
            ServerState::NeedsAuth(_) => style.yellow("needs-auth"),
        };
        stdout_line(term![
            "  ",
            style.bold(&format!("{:<16}", status.name)),
            format!(" {:<6} ", status.transport),
            state,
            format!(" {} tools", status.tools)
        ]);
        if let ServerState::Failed(why) | ServerState::NeedsAuth(why) = &status.state {
            for line in why.lines() {
                stdout_line(term!["      ", style.dim(line)]);
            }
        }
    }
}
