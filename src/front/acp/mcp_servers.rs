//! The MCP servers an editor passes in `session/new` / `session/load`: written to a private
//! config file of the session's run (in `LING_HOME/acp/`, mode 0600: their environment may hold
//! tokens), which the run loads like a `--mcp-config` file: the user's own word, beside the
//! user's and the project's servers (those still only once the project is trusted), winning a
//! name clash. The file is removed when the session ends.

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::McpServer;
use serde_json::{Map, Value, json};

/// The servers as Ling's `mcp.json`; names Ling cannot use (empty, or with `__`) are left out
/// and named in the warnings.
pub(super) fn config(servers: &[McpServer]) -> (Value, Vec<String>) {
    let mut entries = Map::new();
    let mut warnings = Vec::new();
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(s) => {
                let env: Map<String, Value> = s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), Value::String(v.value.clone())))
                    .collect();
                (
                    s.name.clone(),
                    json!({
                        "command": s.command.to_string_lossy(),
                        "args": s.args,
                        "env": env,
                    }),
                )
            }
            McpServer::Http(s) => (s.name.clone(), remote("http", &s.url, &s.headers)),
            McpServer::Sse(s) => (s.name.clone(), remote("sse", &s.url, &s.headers)),
            _ => {
                warnings.push("an MCP server of a kind Ling does not know was left out".into());
                continue;
            }
        };
        if name.is_empty() || name.contains("__") {
            warnings.push(format!(
                "the editor's MCP server {name:?} was left out: a server name must be non-empty \
                 and without `__`"
            ));
            continue;
        }
        entries.insert(name, entry);
    }
    (json!({ "mcpServers": entries }), warnings)
}

fn remote(
    kind: &str,
    url: &str,
    headers: &[agent_client_protocol_schema::v1::HttpHeader],
) -> Value {
    let headers: Map<String, Value> = headers
        .iter()
        .map(|h| (h.name.clone(), Value::String(h.value.clone())))
        .collect();
    json!({ "type": kind, "url": url, "headers": headers })
}

/// Writes the servers to `LING_HOME/acp/<id>.mcp.json` (`id` names this run's file); `None`
/// when there are none.
pub(super) fn write(
    home: &Path,
    id: &str,
    servers: &[McpServer],
) -> std::io::Result<(Option<PathBuf>, Vec<String>)> {
    let (file, warnings) = config(servers);
    if file["mcpServers"].as_object().is_none_or(Map::is_empty) {
        return Ok((None, warnings));
    }
    let dir = home.join("acp");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{id}.mcp.json"));
    let text = serde_json::to_string_pretty(&file).map_err(std::io::Error::other)?;
    crate::config::private_fs::write_atomic(&path, text.as_bytes())?;
    Ok((Some(path), warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol_schema::v1::{
        EnvVariable, HttpHeader, McpServerHttp, McpServerStdio,
    };
    use pretty_assertions::assert_eq;

    #[test]
    fn editor_servers_become_an_mcp_json() {
        let servers = vec![
            McpServer::Stdio(
                McpServerStdio::new("files", "/usr/bin/fs-server")
                    .args(vec!["--root".into(), "/p".into()])
                    .env(vec![EnvVariable::new("TOKEN", "t")]),
            ),
            McpServer::Http(
                McpServerHttp::new("remote", "https://example.com/mcp")
                    .headers(vec![HttpHeader::new("Authorization", "Bearer x")]),
            ),
            McpServer::Stdio(McpServerStdio::new("bad__name", "x")),
        ];
        let (file, warnings) = config(&servers);
        assert_eq!(
            file,
            json!({"mcpServers": {
                "files": {"command": "/usr/bin/fs-server", "args": ["--root", "/p"], "env": {"TOKEN": "t"}},
                "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
            }})
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("bad__name"));
    }
}
