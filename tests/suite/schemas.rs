//! The published JSON Schemas (`docs/schemas/`) and the `$schema` key: the checked-in files are
//! what the config types generate, a schema accepts exactly what its loader loads without a
//! warning, `$schema` loads silently in all three files through the real binary, and an unknown
//! tool argument is a tool error the model reads.

use crate::support::{mock_openai, project};

use std::path::PathBuf;

use ling::config::hooks::HooksConfig;
use ling::config::mcp::{parse_mcp_text, resolve_server};
use ling::config::schema::{FileSchema, file_schemas};
use ling::config::{Paths, RawSettings, Settings, SettingsOverrides};
use mock_openai::{MockServer, Reply};
use project::{Project, run};
use serde_json::{Value, json};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn checked_in_schemas_are_current() {
    for schema in file_schemas() {
        let path = manifest_dir()
            .join("docs/schemas")
            .join(&schema.schema_file);
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == schema.text(),
            "docs/schemas/{} is not what the config types generate: run scripts/gen-schemas.sh",
            schema.schema_file
        );
    }
}

/// Whether `text` validates against `schema`, with the validator's reasons when it does not.
fn schema_accepts(schema: &FileSchema, text: &str) -> Result<(), String> {
    let instance: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let loc = format!("file:///{}", schema.schema_file);
    compiler
        .add_resource(&loc, schema.schema.clone())
        .map_err(|e| format!("{e:#}"))?;
    let index = compiler
        .compile(&loc, &mut schemas)
        .unwrap_or_else(|e| panic!("{} does not compile: {e:#}", schema.schema_file));
    schemas
        .validate(&instance, index)
        .map_err(|e| format!("{e}"))
}

/// What the real loader says of `text` as the file `config_file`: loaded without a warning
/// (`Ok`), or the error or warnings (`Err`).
fn loader_accepts(config_file: &str, text: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(config_file);
    let warnings = match config_file {
        "settings.json" => {
            let raw: RawSettings = serde_json::from_str(text).map_err(|e| e.to_string())?;
            Settings::resolve(
                &RawSettings::default(),
                &raw,
                &SettingsOverrides::default(),
                &|_| None,
            )
            .map_err(|e| e.to_string())?;
            let nested = raw
                .permissions
                .other
                .keys()
                .map(|k| format!("permissions.{k}"));
            raw.other.keys().cloned().chain(nested).collect::<Vec<_>>()
        }
        "hooks.json" => {
            HooksConfig::parse(&path, text)
                .map_err(|e| e.to_string())?
                .warnings
        }
        "mcp.json" => {
            let mut warnings = Vec::new();
            let raw = parse_mcp_text(&path, text, &mut warnings).map_err(|e| e.to_string())?;
            let paths = Paths::with_home(dir.path().to_path_buf(), dir.path().join("home"));
            for (name, entry) in &raw.mcp_servers.0 {
                resolve_server(name, entry, &path, &paths).map_err(|e| e.to_string())?;
            }
            warnings
        }
        other => panic!("no loader for {other}"),
    };
    if warnings.is_empty() {
        Ok(())
    } else {
        Err(warnings.join("; "))
    }
}

fn schema_of(config_file: &str) -> FileSchema {
    file_schemas()
        .into_iter()
        .find(|s| s.config_file == config_file)
        .unwrap_or_else(|| panic!("no schema for {config_file}"))
}

/// Each sample: the file, its text, and whether Ling loads it without a warning. The schema
/// must say the same of every one.
const SAMPLES: &[(&str, &str, bool)] = &[
    ("settings.json", r#"{}"#, true),
    (
        "settings.json",
        r#"{"$schema": "../docs/schemas/settings.schema.json", "model": "gpt-4o",
            "baseUrl": "http://127.0.0.1:8080/v1", "apiKeyEnv": "MY_KEY",
            "permissions": {"defaultMode": "acceptEdits", "allow": ["bash(cargo test*)"], "deny": ["bash(git push*)"]},
            "maxTurns": 5, "toolOutputLimit": 1000, "connectTimeoutMs": 0, "firstByteTimeoutMs": 1,
            "idleTimeoutMs": 1, "maxRetries": 0, "maxRetryDelayMs": 1, "maxStreamLineBytes": 1,
            "shareApiKeyWithTools": true, "disableAllHooks": false, "allowSampling": true,
            "elicitation": "accept-defaults"}"#,
        true,
    ),
    (
        "settings.json",
        r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#,
        true,
    ),
    (
        "settings.json",
        r#"{"permissions": {"defaultMode": "yolo"}}"#,
        false,
    ),
    ("settings.json", r#"{"permissions": {"alow": []}}"#, false),
    ("settings.json", r#"{"elicitation": "accept"}"#, false),
    ("settings.json", r#"{"maxTurns": 0}"#, false),
    ("settings.json", r#"{"maxRetryDelayMs": 0}"#, false),
    ("settings.json", r#"{"maxStreamLineBytes": 0}"#, false),
    ("settings.json", r#"{"maxTurns": -1}"#, false),
    ("settings.json", r#"{"maxTurns": "5"}"#, false),
    ("settings.json", r#"{"modle": "gpt-4o"}"#, false),
    ("settings.json", r#"{"$schema": 1}"#, false),
    ("settings.json", r#"[]"#, false),
    ("hooks.json", r#"{}"#, true),
    (
        "hooks.json",
        r#"{"$schema": "https://example.com/hooks.schema.json", "hooks": {
            "PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 1.5, "failClosed": true}]}],
            "PostToolUse": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/x", "headers": {"A": "${T}"}, "async": true}]}],
            "SessionStart": [{"matcher": "*", "hooks": []}],
            "SessionEnd": [], "Stop": [], "UserPromptSubmit": [], "PostToolUseFailure": [], "PreCompact": []}}"#,
        true,
    ),
    ("hooks.json", r#"{"hooks": {"PreTool": []}}"#, false),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"matcher": "x"}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "prompt"}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": " "}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "async": "yes"}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "statusMessage": "hi"}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "url": "http://a"}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "ftp://a"}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://a", "headers": {"A": 1}}]}]}}"#,
        false,
    ),
    (
        "hooks.json",
        r#"{"hooks": {"Stop": [{"matcher": 1, "hooks": []}]}}"#,
        false,
    ),
    ("hooks.json", r#"{"hook": {}}"#, false),
    ("hooks.json", r#"{"$schema": true}"#, false),
    ("mcp.json", r#"{}"#, true),
    (
        "mcp.json",
        r#"{"$schema": "./mcp.schema.json", "mcpServers": {
            "a": {"command": "srv", "args": ["-v"], "env": {"K": "${V:-x}"}, "cwd": "sub", "disabled": true,
                  "startupTimeoutMs": 1, "toolTimeoutMs": 2, "includeTools": ["t"], "excludeTools": []},
            "b": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
            "c": {"url": "http://127.0.0.1:9/mcp"},
            "d": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "e": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"},
            "f": {"type": "stdio", "command": "srv"}}}"#,
        true,
    ),
    ("mcp.json", r#"{"mcpServers": {"a": {}}}"#, false),
    (
        "mcp.json",
        r#"{"mcpServers": {"a": {"type": "stdio", "url": "http://x"}}}"#,
        false,
    ),
    (
        "mcp.json",
        r#"{"mcpServers": {"a": {"type": "http", "command": "x"}}}"#,
        false,
    ),
    (
        "mcp.json",
        r#"{"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}}"#,
        false,
    ),
    (
        "mcp.json",
        r#"{"mcpServers": {"a__b": {"command": "x"}}}"#,
        false,
    ),
    (
        "mcp.json",
        r#"{"mcpServers": {"": {"command": "x"}}}"#,
        false,
    ),
    (
        "mcp.json",
        r#"{"mcpServers": {"a": {"command": "x", "autoApprove": []}}}"#,
        false,
    ),
    (
        "mcp.json",
        r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#,
        false,
    ),
    (
        "mcp.json",
        r#"{"mcpServers": {"a": {"command": "x", "toolTimeoutMs": -1}}}"#,
        false,
    ),
    ("mcp.json", r#"{"servers": {}}"#, false),
    ("mcp.json", r#"{"$schema": 2}"#, false),
];

#[test]
fn each_schema_accepts_what_its_loader_loads_without_a_warning() {
    let mut disagreements = Vec::new();
    for (config_file, text, loads_cleanly) in SAMPLES {
        let schema = schema_of(config_file);
        let by_schema = schema_accepts(&schema, text);
        let by_loader = loader_accepts(config_file, text);
        assert_eq!(
            by_loader.is_ok(),
            *loads_cleanly,
            "{config_file} {text}: the loader says {by_loader:?}"
        );
        if by_schema.is_ok() != by_loader.is_ok() {
            disagreements.push(format!(
                "{config_file} {text}\n  schema: {by_schema:?}\n  loader: {by_loader:?}"
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn this_repositorys_own_config_files_match_their_schemas() {
    // Each of the three ships in this repository: a missing one fails, so the check cannot
    // quietly pass on nothing.
    for name in ["hooks.json", "mcp.json", "settings.json"] {
        let path = manifest_dir().join(".ling").join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (this repository ships it)", path.display()));
        schema_accepts(&schema_of(name), &text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        loader_accepts(name, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// Writes the three project files, each with a `$schema` (and `extra` keys in settings).
fn project_with_schema_keys(extra_setting: &str) -> Project {
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        &format!(
            r#"{{"$schema": "../docs/schemas/settings.schema.json", "maxTurns": 3{extra_setting}}}"#
        ),
    );
    project.write(
        ".ling/hooks.json",
        r#"{"$schema": "../docs/schemas/hooks.schema.json",
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    project.write(
        ".ling/mcp.json",
        r#"{"$schema": "../docs/schemas/mcp.schema.json", "mcpServers": {}}"#,
    );
    project
}

fn assert_no_warning(what: &str, stderr: &str) {
    assert!(
        !stderr.contains("warning") && !stderr.contains("ignored") && !stderr.contains("$schema"),
        "{what} said:\n{stderr}"
    );
}

#[test]
fn schema_keys_load_silently_in_all_three_files() {
    let project = project_with_schema_keys("");
    let mut trust = project.command("http://127.0.0.1:9");
    trust.arg("trust");
    let out = run(trust);
    assert_eq!(out.code, Some(0), "{out:?}");
    // What the project brings lists its hook, but no `$schema` as a setting to read first.
    assert!(out.stdout.contains("SessionStart"), "{}", out.stdout);
    assert!(!out.stdout.contains("$schema"), "{}", out.stdout);
    assert_no_warning("ling trust", &out.stderr);

    let server = MockServer::start_blocking(vec![Reply::text("done")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "done\n");
    assert_no_warning("ling -p", &out.stderr);

    for sub in [["hooks", "list"], ["mcp", "list"]] {
        let mut cmd = project.command("http://127.0.0.1:9");
        cmd.args(sub);
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert_no_warning(&sub.join(" "), &out.stderr);
    }
}

#[test]
fn an_unknown_key_beside_schema_is_still_warned_about() {
    // The control for the test above: the same files with one unknown setting do warn.
    let project = project_with_schema_keys(r#", "modle": "x""#);
    project.trust();
    let server = MockServer::start_blocking(vec![Reply::text("done")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("unknown setting `modle` ignored"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("$schema"), "{}", out.stderr);
}

/// The content of the tool message answering `id` in a recorded request.
fn tool_result(request: &mock_openai::Recorded, id: &str) -> String {
    request
        .messages()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[test]
fn an_unknown_tool_argument_is_a_tool_error_naming_it_and_the_accepted_ones() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            (
                "r",
                "read_file",
                json!({"path": "a.txt", "encoding": "latin1"}),
            ),
            (
                "w",
                "write_file",
                json!({"path": "new.txt", "content": "x", "mode": "0755"}),
            ),
            ("g", "grep", json!({"pattern": "a", "ignore_case": true})),
            ("ok", "read_file", json!({"path": "a.txt"})),
        ]),
        Reply::text("understood"),
    ]);
    let project = Project::new();
    project.write("a.txt", "alpha\n");
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "read it",
        "--permission-mode",
        "accept-edits",
        "--output-format",
        "ling-stream-json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let second = &server.requests()[1];
    let read = tool_result(second, "r");
    assert!(
        read.contains("unknown field `encoding`") && read.contains("`path`, `offset`, `limit`"),
        "{read}"
    );
    let write = tool_result(second, "w");
    assert!(
        write.contains("unknown field `mode`") && write.contains("`path` or `content`"),
        "{write}"
    );
    assert!(!project.file("new.txt").exists(), "write_file ran anyway");
    let grep = tool_result(second, "g");
    assert!(
        grep.contains("unknown field `ignore_case`") && grep.contains("`case_insensitive`"),
        "{grep}"
    );
    assert!(tool_result(second, "ok").contains("alpha"));
    // The user sees the same as errors in stream-json.
    let errors: Vec<Value> = out
        .json_lines()
        .into_iter()
        .filter(|l| l["type"] == "tool_result" && l["is_error"] == true)
        .collect();
    assert_eq!(errors.len(), 3, "{}", out.stdout);
}

#[test]
fn the_schemas_sent_to_the_model_forbid_extra_arguments() {
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let body = &server.requests()[0].body;
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    assert_eq!(tools.len(), 12, "{body}");
    for tool in tools {
        let parameters = &tool["function"]["parameters"];
        assert_eq!(parameters["type"], "object", "{tool}");
        assert_eq!(parameters["additionalProperties"], false, "{tool}");
        assert!(parameters["properties"].is_object(), "{tool}");
        for noise in ["$schema", "$defs", "definitions", "title"] {
            assert!(parameters.get(noise).is_none(), "{noise} in {tool}");
        }
    }
}
