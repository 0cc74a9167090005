//! The edits `ling mcp add`, `remove` and `import` make to one `mcp.json`: other entries and
//! keys kept as they are on disk now, under the file's lock, written atomically (owner-only
//! under `LING_HOME`).

use std::path::Path;

use serde_json::Value;

use super::raw::RawServer;
use super::resolve::validate_server_name;
use crate::config::shared_file::{Options, update_json_object};
use crate::config::{ConfigError, read_json_value};

/// Adds (or replaces) one entry in `file`, keeping every other entry and key as they were, in
/// the file as it is on disk now (under its lock: see `shared_file`). Returns whether an entry of
/// that name was replaced. `owner_only` (a file under `LING_HOME`) writes it 0600 in a 0700
/// folder.
pub fn add_server_entry(
    file: &Path,
    name: &str,
    entry: &RawServer,
    owner_only: bool,
) -> Result<bool, ConfigError> {
    validate_server_name(name).map_err(|error| ConfigError::Invalid {
        path: file.to_path_buf(),
        message: error.to_string(),
    })?;
    let entry = serde_json::to_value(entry).map_err(|e| ConfigError::Other(e.to_string()))?;
    update_servers(file, owner_only, |servers| {
        let replaced = servers.insert(name.to_string(), entry).is_some();
        (true, replaced)
    })
}

/// Adds (or replaces) several entries in `file` at once, keeping every other entry and key, and
/// returns the file's new content; with `write` false (`--dry-run`) nothing is written.
/// `owner_only` as for [`add_server_entry`].
pub fn add_server_entries(
    file: &Path,
    entries: &[(String, RawServer)],
    owner_only: bool,
    write: bool,
) -> Result<Value, ConfigError> {
    let entries = entries
        .iter()
        .map(|(name, entry)| {
            serde_json::to_value(entry)
                .map(|entry| (name.clone(), entry))
                .map_err(|e| ConfigError::Other(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let add = |root: &mut serde_json::Map<String, Value>| -> Result<Value, ConfigError> {
        let servers = servers_object(root, file)?;
        servers.extend(entries);
        Ok(Value::Object(root.clone()))
    };
    if !write {
        return add(&mut read_object(file)?);
    }
    update_json_object(file, Options::owner_only(owner_only), NOT_SERVERS, |root| {
        add(root).map(|value| (true, value))
    })
}

/// The server names already in `file` (none when it does not exist).
pub fn server_names(file: &Path) -> Result<Vec<String>, ConfigError> {
    let mut root = read_object(file)?;
    Ok(servers_object(&mut root, file)?.keys().cloned().collect())
}

/// Removes one entry from `file`. Returns false (and leaves the file alone) when it is not there.
/// `owner_only` as for [`add_server_entry`].
pub fn remove_server_entry(file: &Path, name: &str, owner_only: bool) -> Result<bool, ConfigError> {
    if !file.exists() {
        return Ok(false);
    }
    update_servers(file, owner_only, |servers| {
        let removed = servers.shift_remove(name).is_some();
        (removed, removed)
    })
}

const NOT_SERVERS: &str = "expected a JSON object with \"mcpServers\"";

/// Changes the `mcpServers` of `file` as it is on disk now: `change` says whether it changed
/// them, and what to hand back.
fn update_servers<T>(
    file: &Path,
    owner_only: bool,
    change: impl FnOnce(&mut serde_json::Map<String, Value>) -> (bool, T),
) -> Result<T, ConfigError> {
    update_json_object(file, Options::owner_only(owner_only), NOT_SERVERS, |root| {
        Ok(change(servers_object(root, file)?))
    })
}

fn read_object(file: &Path) -> Result<serde_json::Map<String, Value>, ConfigError> {
    match read_json_value(file)? {
        None => Ok(serde_json::Map::new()),
        Some((_, Value::Object(map))) => Ok(map),
        Some(_) => Err(ConfigError::Invalid {
            path: file.to_path_buf(),
            message: NOT_SERVERS.into(),
        }),
    }
}

fn servers_object<'a>(
    root: &'a mut serde_json::Map<String, Value>,
    file: &Path,
) -> Result<&'a mut serde_json::Map<String, Value>, ConfigError> {
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    servers.as_object_mut().ok_or_else(|| ConfigError::Invalid {
        path: file.to_path_buf(),
        message: "\"mcpServers\" must be an object".into(),
    })
}
