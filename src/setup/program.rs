//! What the program driving Ling gave at `initialize` ([`Program`]), made part of the run: its
//! hook callbacks as hook groups, its in-process MCP servers as servers reached through it, its
//! agents as sub-agent definitions. Anything Ling cannot honour fails the setup with why.

use crate::config::hooks::HooksConfig;
use crate::config::mcp::{ServerConfig, TransportConfig};
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

/// The program's in-process MCP servers, reached through its control channel. A name a file
/// already gives is an error: which of the two the model would get must not be a guess.
pub(super) fn add_servers(
    program: &Program,
    servers: &mut Vec<ServerConfig>,
) -> Result<(), SetupError> {
    if program.mcp_servers.is_empty() {
        return Ok(());
    }
    if program.channel.is_none() {
        return Err(SetupError::Program(
            "in-process MCP servers need the program's control channel (stream-json input)".into(),
        ));
    }
    for name in &program.mcp_servers {
        if let Some(other) = servers.iter().find(|s| &s.name == name) {
            return Err(SetupError::Program(format!(
                "the program's in-process MCP server {name:?} has the name of a server of {}; \
                 rename one of them",
                other.source.display()
            )));
        }
        let mut config = ServerConfig::new(name.clone(), TransportConfig::Sdk);
        config.source = "(the program's mcpServers option)".into();
        servers.push(config);
    }
    Ok(())
}
