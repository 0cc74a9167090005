use std::path::Path;

use serde::de::DeserializeOwned;

use super::ConfigError;

/// Reads a JSON file. A missing file is `Ok(None)`; unreadable or invalid JSON is an error with
/// the file, line and column.
pub fn read_json_value(path: &Path) -> Result<Option<(String, serde_json::Value)>, ConfigError> {
    let Some(text) = read_config_text(path)? else {
        return Ok(None);
    };
    let value = serde_json::from_str(&text).map_err(|e| syntax_error(path, &e))?;
    Ok(Some((text, value)))
}

/// Reads a config file's text. A missing file is `Ok(None)`; an unreadable one is an error.
/// Every config file is read through here (the trust fingerprint too), so limits on what a
/// config file may be apply to all of them.
pub fn read_config_text(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
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
