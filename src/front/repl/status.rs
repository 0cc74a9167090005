//! The shell sandbox as `/status` of the REPL shows it (`session_commands::status`).

use crate::config::PermissionMode;
use crate::process::sandbox::Decision;

/// e.g. `workspace-write (network off; bash runs without asking)`.
pub fn sandbox(decision: &Decision, mode: PermissionMode) -> String {
    if !decision.is_on() {
        return "off (every bash command asks)".into();
    }
    let effective = decision.effective(mode);
    let shown = if mode == PermissionMode::Plan {
        format!("{} (plan mode)", effective.mode)
    } else {
        effective.mode.to_string()
    };
    let network = if effective.network {
        "network on"
    } else {
        "network off"
    };
    let mut text = format!("{shown} ({network}; bash runs without asking");
    if !decision.writable_roots.is_empty() {
        let roots: Vec<String> = decision
            .writable_roots
            .iter()
            .map(|r| r.display().to_string())
            .collect();
        text.push_str(&format!("; also writable: {}", roots.join(", ")));
    }
    text.push(')');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SandboxMode;

    #[test]
    fn the_sandbox_line_names_the_mode_and_the_network() {
        let mut d = Decision::off();
        assert_eq!(
            sandbox(&d, PermissionMode::Default),
            "off (every bash command asks)"
        );
        d.mode = SandboxMode::WorkspaceWrite;
        d.network = false;
        assert_eq!(
            sandbox(&d, PermissionMode::Default),
            "workspace-write (network off; bash runs without asking)"
        );
        assert!(sandbox(&d, PermissionMode::Plan).starts_with("read-only (plan mode)"));
    }
}
