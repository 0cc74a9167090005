use std::path::Path;

use serde::de::DeserializeOwned;

use super::ConfigError;

/// Reads a JSON file. A missing file is `Ok(None)`; unreadable or invalid JSON is an error with
/// the file, line and column.
pub fn read_json_value(path: &Path) -> Result<Option<(String, serde_json::Value)>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
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
