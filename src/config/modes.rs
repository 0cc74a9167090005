//! The modes a settings file and the command line name: the permission mode of `docs/tools.md`
//! and the answer to MCP elicitation of `-p` runs. Each is declared once, with Claude Code's
//! spelling beside Ling's ([`super::spelled`]).

use super::spelled::spelled_enum;

spelled_enum! {
    /// What calls may do without asking (`--permission-mode`, settings
    /// `permissions.defaultMode`).
    pub enum PermissionMode ("permission mode") {
        /// Reads are allowed; edits, bash outside the sandbox and MCP tools ask
        Default = "default",
        /// File edits are allowed too (Claude Code: acceptEdits)
        AcceptEdits = "accept-edits" | "acceptEdits",
        /// Nothing may change: edits are denied, bash runs read-only
        Plan = "plan",
        /// Everything is allowed (bash still inside the sandbox) (Claude Code: bypassPermissions)
        Bypass = "bypass" | "bypassPermissions",
        /// As default, but nothing is asked: what would ask is denied (Claude Code: dontAsk)
        DontAsk = "dont-ask" | "dontAsk",
    }
}

impl PermissionMode {
    /// The name Claude Code gives this mode, which hook scripts read in `permission_mode` and
    /// the Claude Agent SDK in its messages.
    pub fn hook_name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::Bypass => "bypassPermissions",
            Self::DontAsk => "dontAsk",
        }
    }

    /// Whether a call that needs approval is asked about (else it is denied).
    pub fn asks(self) -> bool {
        self != Self::DontAsk
    }
}

spelled_enum! {
    /// How a non-interactive run answers an MCP server's elicitation (settings `elicitation`).
    pub enum ElicitationPolicy ("elicitation answer") {
        /// Decline every request
        Decline = "decline",
        /// Accept with every field's default, when every required field has one
        AcceptDefaults = "accept-defaults",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claudes_names_are_spellings_of_the_same_modes() {
        for mode in PermissionMode::ALL {
            assert_eq!(PermissionMode::parse(mode.hook_name()), Some(*mode));
            assert_eq!(PermissionMode::parse(mode.as_str()), Some(*mode));
        }
        assert_eq!(
            PermissionMode::expected(),
            "default, accept-edits (also acceptEdits), plan, bypass (also bypassPermissions), \
             dont-ask (also dontAsk)"
        );
    }
}
