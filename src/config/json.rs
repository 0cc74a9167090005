//! Reading the JSON configuration files (`settings.json`, `hooks.json`, `mcp.json`, user and
//! project, and `--mcp-config FILE`): regular files only, at most [`CONFIG_FILE_LIMIT`] bytes,
//! UTF-8 (a byte-order mark at the start, as some editors and Claude Code write, is skipped),
//! with file, line and column on every error. A settings file must hold a JSON object: `null`,
//! a list or a lone value is an error that says so, not serde's "expected struct".

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
    let text =
        String::from_utf8(read.bytes).map_err(|e| not_utf8(path, e.as_bytes(), e.utf8_error()))?;
    Ok(Some(match text.strip_prefix(BOM) {
        Some(rest) => rest.to_string(),
        None => text,
    }))
}

/// The UTF-8 byte-order mark: nothing to JSON, but some editors and Claude Code start a file
/// with it.
const BOM: char = '\u{feff}';

/// Where in `bytes` the first byte that is not UTF-8 is: its offset, line and column (in
/// characters, after a byte-order mark), for an error that points at it.
fn not_utf8(path: &Path, bytes: &[u8], error: std::str::Utf8Error) -> ConfigError {
    let offset = error.valid_up_to();
    let before = String::from_utf8_lossy(&bytes[..offset]);
    let before = before.strip_prefix(BOM).unwrap_or(&before);
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    ConfigError::NotUtf8 {
        path: path.to_path_buf(),
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
        byte: offset + 1,
    }
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

/// Reads and deserializes a JSON file that holds an object into its raw config struct. A
/// missing file is `Ok(None)`. Type errors (a string where a list belongs) carry the line and
/// column too.
pub fn read_json_file<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, ConfigError> {
    let Some((text, value)) = read_json_value(path)? else {
        return Ok(None);
    };
    check_object(path, &value)?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| syntax_error(path, &e))
}

/// Refuses a file whose JSON is not an object (`null`, a list, a lone value), saying what it
/// holds and what to write instead.
pub(crate) fn check_object(path: &Path, value: &serde_json::Value) -> Result<(), ConfigError> {
    use serde_json::Value;
    let found = match value {
        Value::Object(_) => return Ok(()),
        Value::Null => "`null`",
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "`true` or `false`",
    };
    Err(ConfigError::NotObject {
        path: path.to_path_buf(),
        found,
    })
}

/// [`check_object`] of a text that is JSON.
pub(crate) fn check_object_text(path: &Path, text: &str) -> Result<(), ConfigError> {
    let value = serde_json::from_str(text).map_err(|e| syntax_error(path, &e))?;
    check_object(path, &value)
}

pub(crate) fn syntax_error(path: &Path, e: &serde_json::Error) -> ConfigError {
    let message = e.to_string();
    // serde_json appends " at line L column C"; the location is printed in front instead.
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message,
    };
    // "expected struct RawPermissions" names Ling's code, not the file: it wants an object.
    let message = match message.find("expected struct ") {
        Some(at) => {
            let name_end = message[at + "expected struct ".len()..]
                .find(|c: char| !c.is_alphanumeric() && c != '_')
                .map_or(message.len(), |end| at + "expected struct ".len() + end);
            format!(
                "{}expected an object{}",
                &message[..at],
                &message[name_end..]
            )
        }
        None => message,
    };
    ConfigError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn file(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let (_dir, path) = file(b"\xef\xbb\xbf{\"model\": \"m\"}");
        assert_eq!(
            read_config_text(&path).unwrap().as_deref(),
            Some("{\"model\": \"m\"}")
        );
        let raw: crate::config::RawSettings = read_json_file(&path).unwrap().unwrap();
        assert_eq!(raw.model.as_deref(), Some("m"));
        // Only at the start: one inside a string is the file's own.
        let (_dir, path) = file("{\"model\": \"\u{feff}m\"}".as_bytes());
        assert_eq!(
            read_config_text(&path).unwrap().as_deref(),
            Some("{\"model\": \"\u{feff}m\"}")
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_are_pointed_at() {
        let (_dir, path) = file(b"\xef\xbb\xbf{\n  \"\xc3\xa9t\xc3\xa9\": \"\xff\"}");
        let err = read_config_text(&path).unwrap_err();
        // Line 2, after `  "été": "` (10 characters, 12 bytes), behind the mark and `{\n`.
        assert!(
            matches!(
                err,
                ConfigError::NotUtf8 {
                    line: 2,
                    column: 11,
                    byte: 18,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "{}:2:11: not UTF-8 text (byte 18 of the file); save it as UTF-8",
                path.display()
            )
        );
    }

    #[test]
    fn a_settings_file_must_hold_an_object_and_errors_say_so_in_the_files_words() {
        for (text, found) in [
            ("null", "`null`"),
            ("[1]", "a list"),
            ("3", "a number"),
            ("true", "`true` or `false`"),
        ] {
            let (_dir, path) = file(text.as_bytes());
            let err = read_json_file::<crate::config::RawSettings>(&path).unwrap_err();
            assert!(
                matches!(&err, ConfigError::NotObject { found: f, .. } if *f == found),
                "{err:?}"
            );
            assert!(
                err.to_string().contains("write {} for an empty one"),
                "{err}"
            );
        }
        let (_dir, path) = file(br#"{"sandbox": 1}"#);
        let err = read_json_file::<crate::config::RawSettings>(&path)
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with(":1:13: invalid type: integer `1`, expected an object"),
            "{err}"
        );
    }
}
