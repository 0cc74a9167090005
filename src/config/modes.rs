//! The modes a settings file and the command line name: the permission mode of `docs/tools.md`
//! and the answer to MCP elicitation of `-p` runs. Each is declared once, with Claude Code's
//! spelling beside Ling's ([`super::spelled`]). What each permission mode means is one table,
//! [`MODES`]: what a call of each kind may do in it, and its words for the user; the permission
//! check, the sandbox, sub-agents' modes, the REPL's Shift-Tab and an editor's list of modes all
//! read it (`docs/tools.md` says it in prose).

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
        self.meaning().asks
    }

    /// What this mode means ([`MODES`]).
    pub fn meaning(self) -> &'static ModeMeaning {
        match self {
            Self::Default => &MODES[0],
            Self::AcceptEdits => &MODES[1],
            Self::Plan => &MODES[2],
            Self::Bypass => &MODES[3],
            Self::DontAsk => &MODES[4],
        }
    }
}

/// What a mode does with a call that no rule, hook or protected path has decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// It runs without a question.
    Allow,
    /// It is asked about first (and denied when nobody can be asked).
    Ask,
    /// It is refused; the model reads the mode's name, the tool's and this reason.
    Deny(&'static str),
}

/// One permission mode's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModeMeaning {
    pub mode: PermissionMode,
    /// Reads: `read_file`, `grep`, `glob`, the MCP resource tools, `skill`, `task`.
    pub reads: Access,
    /// File edits: `write_file`, `edit_file`.
    pub edits: Access,
    /// What runs something: `bash` outside the sandbox (inside it, the kernel contains it and
    /// it runs in every mode), MCP tools.
    pub runs: Access,
    /// An MCP tool its server annotates `readOnlyHint`.
    pub read_only_runs: Access,
    /// What reaches the web (`web_fetch`, `web_search`): no change here, but the URL or the
    /// query goes out.
    pub web: Access,
    /// Whether what needs approval is asked about; otherwise it is denied.
    pub asks: bool,
    /// Whether edits of protected paths (`.git`, `.ling`, `.claude`, `LING_HOME`, what runs
    /// outside the sandbox) and reads of hidden ones ask, and the file tools stay inside the
    /// project.
    pub guards_paths: bool,
    /// Whether `bash` inside the sandbox runs read-only.
    pub sandbox_read_only: bool,
    /// How much it lets through, from plan (0) to bypass (3): a sub-agent's mode is never
    /// above its parent's.
    pub latitude: u8,
    /// Its name in an editor's list of modes (ACP).
    pub title: &'static str,
    /// What it means, on the REPL's row after Shift-Tab.
    pub short: &'static str,
    /// What it means, in an editor's list of modes (ACP).
    pub description: &'static str,
}

/// Every permission mode's meaning, in [`PermissionMode::ALL`]'s order.
pub const MODES: [ModeMeaning; 5] = [
    ModeMeaning {
        mode: PermissionMode::Default,
        reads: Access::Allow,
        edits: Access::Ask,
        runs: Access::Ask,
        read_only_runs: Access::Ask,
        web: Access::Ask,
        asks: true,
        guards_paths: true,
        sandbox_read_only: false,
        latitude: 1,
        title: "Default",
        short: "Ling asks before edits and commands",
        description: "Reads run; edits and commands outside the sandbox ask first",
    },
    ModeMeaning {
        mode: PermissionMode::AcceptEdits,
        reads: Access::Allow,
        edits: Access::Allow,
        runs: Access::Ask,
        read_only_runs: Access::Ask,
        web: Access::Ask,
        asks: true,
        guards_paths: true,
        sandbox_read_only: false,
        latitude: 2,
        title: "Accept edits",
        short: "file edits run without asking; commands still ask",
        description: "Edits run without asking; commands outside the sandbox ask first",
    },
    ModeMeaning {
        mode: PermissionMode::Plan,
        reads: Access::Allow,
        edits: Access::Deny(
            "changes files, which is not allowed while planning; describe the change instead \
             (the user can switch with --permission-mode accept-edits)",
        ),
        runs: Access::Deny(
            "may change things and is not allowed while planning; use the read-only tools \
             (read_file, grep, glob) instead (the user can switch with --permission-mode \
             default)",
        ),
        read_only_runs: Access::Allow,
        web: Access::Ask,
        asks: true,
        guards_paths: true,
        sandbox_read_only: true,
        latitude: 0,
        title: "Plan",
        short: "Ling reads and plans, changes nothing, and asks you to approve its plan",
        description: "Read-only: look around and plan, change nothing",
    },
    ModeMeaning {
        mode: PermissionMode::Bypass,
        reads: Access::Allow,
        edits: Access::Allow,
        runs: Access::Allow,
        read_only_runs: Access::Allow,
        web: Access::Allow,
        asks: true,
        guards_paths: false,
        sandbox_read_only: false,
        latitude: 3,
        title: "Bypass permissions",
        short: "everything runs without asking: careful",
        description: "Everything runs without asking (deny rules and the sandbox still apply)",
    },
    ModeMeaning {
        mode: PermissionMode::DontAsk,
        reads: Access::Allow,
        edits: Access::Ask,
        runs: Access::Ask,
        read_only_runs: Access::Ask,
        web: Access::Ask,
        asks: false,
        guards_paths: true,
        sandbox_read_only: false,
        latitude: 1,
        title: "Don't ask",
        short: "nothing asks: what would ask is refused",
        description: "As Default, but nothing is asked: what would ask is denied",
    },
];

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
    fn every_mode_has_its_row_of_the_table() {
        assert_eq!(PermissionMode::ALL.len(), MODES.len());
        for (mode, row) in PermissionMode::ALL.iter().zip(&MODES) {
            assert_eq!(row.mode, *mode);
            assert_eq!(mode.meaning().mode, *mode);
        }
    }

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
