//! Properties of reading the configuration files: no text panics the readers of
//! `settings.json`, `hooks.json` or `mcp.json`, and every line and column Ling reports (in an
//! error or a warning) is inside the text, pointing at the very key it blames where it names one.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::hooks::HooksConfig;
use super::mcp::load_servers;
use super::*;

/// Keys the three files use, so generated documents reach past the first type check.
const KEYS: &[&str] = &[
    "mcpServers",
    "command",
    "args",
    "env",
    "url",
    "type",
    "headers",
    "cwd",
    "hooks",
    "matcher",
    "timeout",
    "PreToolUse",
    "SessionStart",
    "Stop",
    "async",
    "failClosed",
    "permissions",
    "allow",
    "deny",
    "model",
    "baseUrl",
    "disableAllHooks",
    "stdio",
    "http",
    "x",
    "é",
];

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..100).prop_map(Value::from),
        prop_oneof![
            proptest::sample::select(KEYS).prop_map(str::to_string),
            ".{0,6}"
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        let key = prop_oneof![
            4 => proptest::sample::select(KEYS).prop_map(str::to_string),
            1 => ".{0,6}",
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::vec((key, inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A configuration text: generated JSON, compact or pretty, possibly with one byte cut out or
/// one character put in (the typical typo), or any text at all.
fn text() -> impl Strategy<Value = String> {
    let document = (json(), any::<bool>()).prop_map(|(value, pretty)| match pretty {
        true => serde_json::to_string_pretty(&value).unwrap_or_default(),
        false => value.to_string(),
    });
    let typo = proptest::option::of((
        any::<usize>(),
        proptest::option::of(proptest::sample::select(vec![
            '{', '}', ',', '"', ':', '\n', 'é',
        ])),
    ));
    prop_oneof![
        4 => (document, typo).prop_map(|(mut text, typo)| {
            if let Some((at, put)) = typo {
                let at = text.char_indices().map(|(i, _)| i).nth(at % text.chars().count().max(1));
                match (at, put) {
                    (Some(at), Some(c)) => text.insert(at, c),
                    (Some(at), None) => {
                        text.remove(at);
                    }
                    (None, _) => {}
                }
            }
            text
        }),
        1 => ".{0,48}",
    ]
}

/// Every `FILE:LINE:COLUMN` in `message` (Ling's errors and warnings start with one) lies inside
/// `text`: a line it has, a column at most one past that line's end (serde_json says column 0
/// for an empty text). Returns the byte offset it points at.
fn position_in(message: &str, file: &Path, text: &str) -> Result<Option<usize>, TestCaseError> {
    let Some(rest) = message.strip_prefix(&format!("{}:", file.display())) else {
        return Ok(None);
    };
    let mut parts = rest.splitn(3, ':');
    let (Some(line), Some(column)) = (parts.next(), parts.next()) else {
        return Ok(None);
    };
    let (Ok(line), Ok(column)) = (line.parse::<usize>(), column.parse::<usize>()) else {
        return Ok(None);
    };
    let lines: Vec<&str> = text.split('\n').collect();
    prop_assert!(
        line >= 1 && line <= lines.len(),
        "line {} of {}: {}",
        line,
        lines.len(),
        message
    );
    let length = lines[line - 1].len();
    prop_assert!(
        column <= length + 1,
        "column {} of {}: {}",
        column,
        length,
        message
    );
    let start: usize = lines[..line - 1].iter().map(|l| l.len() + 1).sum();
    Ok(Some(start + column.saturating_sub(1)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_reads_with_positions_inside_it(text in text()) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let paths = Paths::with_home(dir.path().join("root"), dir.path().join("home"));
        std::fs::create_dir_all(&paths.project_root).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let file = dir.path().join("config.json");
        std::fs::write(&file, &text).map_err(|e| TestCaseError::fail(e.to_string()))?;

        let mut messages = Vec::new();
        if let Err(e) = read_json_file::<RawSettings>(&file) {
            messages.push(e.to_string());
        }
        match HooksConfig::parse(&file, &text) {
            Ok(hooks) => messages.extend(hooks.warnings),
            Err(e) => messages.push(e.to_string()),
        }
        let project = ProjectFiles::read(&paths).map_err(|e| TestCaseError::fail(e.to_string()))?;
        match load_servers(&paths, &project, std::slice::from_ref(&file), true) {
            Ok((_, warnings)) => messages.extend(warnings),
            Err(e) => messages.push(e.to_string()),
        }
        for message in &messages {
            position_in(message, &file, &text)?;
        }
    }

    /// A server entry that is neither stdio nor HTTP, among good ones, in any layout: the
    /// error points at its name.
    #[test]
    fn a_bad_mcp_server_is_pointed_at_by_name(
        names in proptest::collection::btree_set("[a-z]{1,6}", 1..5),
        bad in any::<usize>(),
        pretty in any::<bool>(),
    ) {
        let names: Vec<String> = names.into_iter().collect();
        let bad = &names[bad % names.len()];
        let servers: Map<String, Value> = names
            .iter()
            .map(|name| {
                let entry = match name == bad {
                    true => serde_json::json!({"args": [name]}),
                    false => serde_json::json!({"command": name, "args": [bad]}),
                };
                (name.clone(), entry)
            })
            .collect();
        let document = serde_json::json!({ "mcpServers": servers });
        let text = match pretty {
            true => serde_json::to_string_pretty(&document).unwrap_or_default(),
            false => document.to_string(),
        };
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let paths = Paths::with_home(dir.path().to_path_buf(), dir.path().join("home"));
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, &text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let project = ProjectFiles::read(&paths).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let error = match load_servers(&paths, &project, std::slice::from_ref(&file), true) {
            Ok(_) => return Err(TestCaseError::fail(format!("{bad:?} was accepted: {text}"))),
            Err(e) => e.to_string(),
        };
        let at = position_in(&error, &file, &text)?;
        let pointed = at.and_then(|at| text.get(at..)).unwrap_or_default();
        prop_assert!(pointed.starts_with(&format!("\"{bad}\":")), "{} points at {:?}", error, pointed);
    }
}
