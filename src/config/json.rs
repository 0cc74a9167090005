//! Reading the JSON configuration files (`settings.json`, `hooks.json`, `mcp.json`, user and
//! project, and `--mcp-config FILE`): regular files only, at most [`CONFIG_FILE_LIMIT`] bytes,
//! with file, line and column on every error.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::ConfigError;
use super::bounded_read::{BoundedReadError, read_regular};

/// The largest configuration file Ling reads (4 MiB).
pub const CONFIG_FILE_LIMIT: usize = 4 * 1024 * 1024;

/// The text of a configuration file. A missing file is `Ok(None)`; a FIFO, a device, a folder,
/// a file over [`CONFIG_FILE_LIMIT`] or one that is not UTF-8 is an error naming it.
pub fn read_config_text(path: &Path) -> Result<Option<String>, ConfigError> {
    let read = read_regular(path, CONFIG_FILE_LIMIT).map_err(|e| match e {
        BoundedReadError::NotRegular { path, kind } => ConfigError::NotRegular { path, kind },
        BoundedReadError::Io { path, source } => ConfigError::Read { path, source },
    })?;
    let Some(read) = read else {
        return Ok(None);
    };
    if read.cut {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            limit_mib: CONFIG_FILE_LIMIT / (1024 * 1024),
        });
    }
    String::from_utf8(read.bytes)
        .map(Some)
        .map_err(|e| ConfigError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
        })
}

/// Reads a JSON file. A missing file is `Ok(None)`; unreadable or invalid JSON is an error with
/// the file, line and column.
pub fn read_json_value(path: &Path) -> Result<Option<(String, serde_json::Value)>, ConfigError> {
    let Some(text) = read_config_text(path)? else {
        return Ok(None);
    };
    let value = serde_json::from_str(&text).map_err(|e| syntax_error(path, &e))?;
    Ok(Some((text, value)))
}

/// Reads and deserializes a JSON file into its raw config struct. A missing file is `Ok(None)`.
/// Type errors (a string where a list belongs) carry the line and column too.
pub fn read_json_file<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, ConfigError> {
    let Some((text, _)) = read_json_value(path)? else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| syntax_error(path, &e))
}

pub(crate) fn syntax_error(path: &Path, e: &serde_json::Error) -> ConfigError {
    let message = e.to_string();
    // serde_json appends " at line L column C"; the location is printed in front instead.
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message,
    };
    ConfigError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message,
    }
}
