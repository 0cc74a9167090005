//! How the answers of `ling mcp list`, `get`, `add` and `remove` read: text for people, JSON for
//! `--json`, from the data `mcp::commands` returns. A server's secrets never show: env and
//! header values are masked, failure reasons come scrubbed.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::config::mcp::{ServerConfig, TransportConfig};
use crate::mcp::commands::Added;
use crate::mcp::redact::{Redactor, shown};
use crate::mcp::{McpToolInfo, ServerState, ServerStatus};
use crate::redact::{MASK, redact_urls};
use crate::ui::output::{stdout, stdout_json};

/// `ling mcp list [--json]`. `untrusted`: (name, transport) of the servers of an untrusted
/// project, shown after the others with status `untrusted`.
pub fn render_list(
    statuses: &[ServerStatus],
    untrusted: &[(String, &str)],
    as_json: bool,
) -> String {
    if as_json {
        let mut servers: Vec<Value> = statuses
            .iter()
            .map(|s| {
                let (status, error) = s.state.report();
                let mut entry = json!({"name": s.name, "transport": s.transport, "status": status});
                if let Some(error) = error {
                    entry["error"] = json!(error);
                }
                entry["tools"] = json!(s.tools);
                entry
            })
            .collect();
        servers.extend(untrusted.iter().map(|(name, transport)| {
            json!({"name": name, "transport": transport, "status": "untrusted", "tools": 0})
        }));
        return format!("{}\n", json!({ "servers": servers }));
    }
    if statuses.is_empty() && untrusted.is_empty() {
        return "No MCP servers configured. Add one with `ling mcp add NAME -- COMMAND [ARGS...]`.\n"
            .into();
    }
    let mut out = String::new();
    for s in statuses {
        let (status, error) = s.state.report();
        let detail = match (&s.state, error) {
            (ServerState::Connected, _) => {
                format!("connected, {} tool{}", s.tools, plural(s.tools))
            }
            (_, Some(error)) => format!("{status}: {}", indent_rest(error)),
            _ => status.to_string(),
        };
        out.push_str(&format!("{} ({}): {detail}\n", s.name, s.transport));
    }
    for (name, transport) in untrusted {
        out.push_str(&format!(
            "{name} ({transport}): untrusted: not started; run `ling trust` to use this \
             project's servers\n"
        ));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn indent_rest(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\n    ")
}

/// The config as `get` shows it: env and header values masked, values written with `${VAR}`
/// shown as written, URLs without userinfo or query values.
fn masked_config(config: &ServerConfig, redactor: &Redactor) -> Value {
    let mask = |pairs: &[(String, String)]| -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, _)| (k.clone(), json!(MASK)))
                .collect::<Map<_, _>>(),
        )
    };
    let raw = redactor.raw();
    match &config.transport {
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let written = raw.and_then(|r| r.args.as_ref());
            let args: Vec<String> = args
                .iter()
                .enumerate()
                .map(|(i, arg)| {
                    let as_written = written.and_then(|w| w.get(i)).map(String::as_str);
                    redact_urls(shown(as_written, arg))
                })
                .collect();
            let cwd = cwd.display().to_string();
            json!({
                "command": shown(raw.and_then(|r| r.command.as_deref()), command),
                "args": args,
                "env": mask(env),
                "cwd": shown(raw.and_then(|r| r.cwd.as_deref()), &cwd),
            })
        }
        TransportConfig::Http { url, headers } | TransportConfig::Sse { url, headers } => {
            let url = redact_urls(shown(raw.and_then(|r| r.url.as_deref()), url));
            json!({"url": url, "headers": mask(headers)})
        }
        TransportConfig::Sdk => json!({"inProcess": true}),
    }
}

/// `ling mcp get NAME [--json]`.
pub fn render_get(
    config: &ServerConfig,
    status: Option<&ServerStatus>,
    tools: &[McpToolInfo],
    as_json: bool,
) -> String {
    let tools: Vec<&McpToolInfo> = tools.iter().filter(|t| t.server == config.name).collect();
    let redactor = Redactor::for_config(config);
    let (state, error) = status
        .map(|s| s.state.report())
        .unwrap_or(("failed", Some("not started")));
    let error = error.map(|e| redactor.scrub(e));
    let info = status.and_then(|s| s.server_info.as_ref());
    if as_json {
        let mut out = json!({
            "name": config.name,
            "transport": config.transport.kind(),
            "source": config.source,
            "config": masked_config(config, &redactor),
            "status": state,
        });
        if let Some(error) = &error {
            out["error"] = json!(error);
        }
        if let Some(info) = info {
            out["serverInfo"] = json!({"name": info.name, "version": info.version,
                "protocolVersion": info.protocol_version, "instructions": info.instructions});
        }
        out["tools"] = tools
            .iter()
            .map(|t| json!({"name": t.original_name, "exposedName": t.exposed_name, "description": t.description}))
            .collect();
        return format!("{out:#}\n");
    }
    let mut out = format!("{} ({})\n", config.name, config.transport.kind());
    out.push_str(&format!("  source: {}\n", config.source.display()));
    if let Value::Object(fields) = masked_config(config, &redactor) {
        for (key, value) in fields {
            let shown = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            out.push_str(&format!("  {key}: {shown}\n"));
        }
    }
    match error {
        Some(error) => out.push_str(&format!("  status: {state}: {}\n", indent_rest(&error))),
        None => out.push_str(&format!("  status: {state}\n")),
    }
    if let Some(info) = info {
        out.push_str(&format!(
            "  server: {} {} (protocol {})\n",
            info.name, info.version, info.protocol_version
        ));
    }
    if !tools.is_empty() {
        out.push_str(&format!("  tools ({}):\n", tools.len()));
        for tool in tools {
            out.push_str(&format!(
                "    {}: {}\n",
                tool.original_name, tool.description
            ));
        }
    }
    out
}

/// A listing on stdout: JSON as serde_json wrote it (C1 and bidi characters escaped too, to a
/// terminal); text always neutralised, it is for reading.
pub(super) fn listing(text: &str, json: bool) {
    if json {
        stdout_json(text);
    } else {
        stdout(text);
    }
}

/// `ling mcp list` with the file each server came from: a `source` key per server in JSON,
/// `[from FILE]` at the end of its first line in text.
pub(super) fn with_sources(list: &str, sources: &[(String, String)], json: bool) -> String {
    let source = |name: &str| sources.iter().find(|(n, _)| n == name).map(|(_, s)| s);
    if json {
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(list) else {
            return list.to_string();
        };
        for server in value["servers"].as_array_mut().into_iter().flatten() {
            let found = server["name"].as_str().and_then(source).cloned();
            if let Some(found) = found {
                server["source"] = serde_json::Value::String(found);
            }
        }
        return format!("{value}\n");
    }
    let mut out = String::new();
    for line in list.split_inclusive('\n') {
        let named = sources.iter().find_map(|(name, file)| {
            let rest = line.strip_prefix(name.as_str())?.strip_prefix(" (")?;
            rest.split_once("):")?;
            Some(format!("{}  [from {file}]\n", line.trim_end_matches('\n')))
        });
        out.push_str(named.as_deref().unwrap_or(line));
    }
    out
}

/// `ling mcp add`: which file now holds server `name`.
pub(super) fn added(name: &str, added: &Added) -> String {
    let verb = if added.replaced { "Replaced" } else { "Added" };
    format!("{verb} MCP server {name:?} in {}\n", added.file.display())
}

/// `ling mcp remove`: which file server `name` was removed from.
pub(super) fn removed(name: &str, file: &Path) -> String {
    format!("Removed MCP server {name:?} from {}\n", file.display())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn add_and_remove_say_which_file() {
        let file = PathBuf::from("/p/.ling/mcp.json");
        let new = Added {
            file: file.clone(),
            replaced: false,
        };
        assert_eq!(
            added("fs", &new),
            "Added MCP server \"fs\" in /p/.ling/mcp.json\n"
        );
        let again = Added {
            replaced: true,
            ..new
        };
        assert_eq!(
            added("fs", &again),
            "Replaced MCP server \"fs\" in /p/.ling/mcp.json\n"
        );
        assert_eq!(
            removed("fs", &file),
            "Removed MCP server \"fs\" from /p/.ling/mcp.json\n"
        );
    }

    #[test]
    fn sources_go_on_each_servers_first_line() {
        let sources = [("a".to_string(), ".ling/mcp.json".to_string())];
        let text = "a (stdio): failed: boom\n    more\nab (http): connected, 1 tool\n";
        assert_eq!(
            with_sources(text, &sources, false),
            "a (stdio): failed: boom  [from .ling/mcp.json]\n    more\nab (http): connected, 1 tool\n"
        );
        let json = r#"{"servers":[{"name":"a"},{"name":"b"}]}"#;
        let value: Value = serde_json::from_str(&with_sources(json, &sources, true)).unwrap();
        assert_eq!(
            value,
            json!({"servers":[{"name":"a","source":".ling/mcp.json"},{"name":"b"}]})
        );
    }
}
