//! What the program driving Ling gave at `initialize` ([`Program`]), made part of the run: its
//! hook callbacks as hook groups, its in-process MCP servers as servers reached through it, its
//! agents as sub-agent definitions. Anything Ling cannot honour fails the setup with why.

use crate::config::hooks::HooksConfig;
use crate::program::Program;

use super::SetupError;

/// The program's hook callbacks, after the files' hooks.
pub(super) fn add_hooks(program: &Program, config: &mut HooksConfig) -> Result<(), SetupError> {
    let Some(hooks) = &program.hooks else {
        return Ok(());
    };
    if program.channel.is_none() {
        return Err(SetupError::Program(
            "hook callbacks need the program's control channel (stream-json input)".into(),
        ));
    }
    let groups = crate::hooks::program_groups(hooks).map_err(SetupError::Program)?;
    config.groups.extend(groups);
    Ok(())
}
