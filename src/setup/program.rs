//! What the program driving Ling gave at `initialize` ([`Program`]), made part of the run: its
//! hook callbacks as hook groups, its in-process MCP servers as servers reached through it, its
//! agents as sub-agent definitions. Anything Ling cannot honour fails the setup with why.

use serde_json::Value;

use crate::config::extensions::{AgentDef, Extensions, Scope};
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

/// The fields of the SDK's `AgentDefinition` Ling honours; any other set is refused.
const AGENT_FIELDS: [&str; 6] = [
    "description",
    "prompt",
    "tools",
    "model",
    "maxTurns",
    "permissionMode",
];

/// The program's `agents`, as sub-agent definitions that win over the files' of the same
/// name (Claude Code's order).
pub(super) fn add_agents(program: &Program, extensions: &mut Extensions) -> Result<(), SetupError> {
    let Some(agents) = &program.agents else {
        return Ok(());
    };
    let mut defined = Vec::new();
    for (name, definition) in agents {
        defined.push(agent_def(name, definition).map_err(SetupError::Program)?);
    }
    extensions
        .agents
        .retain(|a| !defined.iter().any(|d| d.name == a.name));
    defined.append(&mut extensions.agents);
    extensions.agents = defined;
    Ok(())
}

fn agent_def(name: &str, definition: &Value) -> Result<AgentDef, String> {
    let refuse = |why: String| format!("the program's agent {name:?}: {why}");
    let Some(fields) = definition.as_object() else {
        return Err(refuse("a definition is an object".into()));
    };
    if let Some(other) = fields
        .iter()
        .find(|(k, v)| !v.is_null() && !AGENT_FIELDS.contains(&k.as_str()))
    {
        return Err(refuse(format!(
            "Ling cannot honour `{}` (it honours {})",
            other.0,
            AGENT_FIELDS.join(", ")
        )));
    }
    let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_string);
    let description =
        text("description").ok_or_else(|| refuse("it needs a `description`".into()))?;
    let prompt = text("prompt").ok_or_else(|| refuse("it needs a `prompt`".into()))?;
    let tools = match fields.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|t| t.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| refuse("`tools` is a list of tool names".into()))?,
        ),
        Some(_) => return Err(refuse("`tools` is a list of tool names".into())),
    };
    Ok(AgentDef {
        name: name.to_string(),
        description,
        tools,
        model: text("model"),
        permission_mode: text("permissionMode"),
        isolation: text("isolation"),
        max_turns: fields
            .get("maxTurns")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
        prompt,
        path: "(the program's agents option)".into(),
        scope: Scope::Project,
    })
}

/// `--agent NAME`: the definition the session runs as (its prompt, tools and model), or why
/// there is none.
pub(super) fn start_agent(
    program: &Program,
    extensions: &Extensions,
) -> Result<Option<AgentDef>, SetupError> {
    let Some(name) = &program.agent else {
        return Ok(None);
    };
    match extensions.agent(name) {
        Some(def) => Ok(Some(def.clone())),
        None => {
            let known: Vec<&str> = extensions.agents.iter().map(|a| a.name.as_str()).collect();
            Err(SetupError::Program(format!(
                "--agent {name}: no agent of that name (defined: {}); define it in \
                 .claude/agents/{name}.md, .ling/agents/ or with --agents",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_agent_is_read_and_what_ling_cannot_honour_is_refused() {
        let def = agent_def(
            "reviewer",
            &json!({"description": "Reviews", "prompt": "You review.", "tools": ["Read"], "model": "inherit"}),
        )
        .unwrap();
        assert_eq!(def.name, "reviewer");
        assert_eq!(def.tools, Some(vec!["Read".to_string()]));
        let err = agent_def(
            "x",
            &json!({"description": "d", "prompt": "p", "mcpServers": ["db"]}),
        )
        .unwrap_err();
        assert!(err.contains("`mcpServers`"), "{err}");
        assert!(agent_def("x", &json!({"prompt": "p"})).is_err());
    }
}
