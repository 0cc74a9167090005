//! `mcp.json` loading (precedence, expansion, errors with line and column, `__` names, warnings
//! about unknown keys) and the `ling mcp` command helpers (add/remove keep other entries,
//! list/get rendering, call).

use crate::support::mcp;

use std::path::PathBuf;
use std::time::Duration;

use ling::cli::mcp_cmd::print;
use ling::config::ConfigError;
use ling::config::mcp::{TransportConfig, load_servers};
use ling::mcp::commands::{self, Scope};
use ling::mcp::{ServerState, ServerStatus};
use mcp::TestEnv;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn later_files_win_and_values_are_resolved() {
    let env = TestEnv::new();
    let root = env.paths.project_root.clone();
    write(
        &env.paths.user_file("mcp.json"),
        r#"{"mcpServers":{"shared":{"command":"user-cmd"},"useronly":{"url":"http://127.0.0.1:1/mcp"}}}"#,
    );
    write(
        &env.paths.project_file("mcp.json"),
        r#"{"mcpServers":{"shared":{"command":"./bin/srv","args":["${CARGO_PKG_NAME}","${LING_TEST_UNSET_X:-dflt}"],
            "env":{"TOKEN":"${CARGO_PKG_NAME}"},"cwd":"sub","startupTimeoutMs":5,"toolTimeoutMs":7,
            "includeTools":["a"],"excludeTools":["b"],"disabled":true},
          "remote":{"type":"sse","url":"http://127.0.0.1:2/sse","headers":{"Authorization":"Bearer ${LING_TEST_UNSET_Y}"}}}}"#,
    );
    let extra = env.dir.path().join("extra.json");
    write(
        &extra,
        r#"{"mcpServers":{"useronly":{"command":"override"}}}"#,
    );
    // Cargo sets CARGO_PKG_NAME for every test run; the process environment is never modified.
    assert_eq!(std::env::var("CARGO_PKG_NAME").as_deref(), Ok("ling-agent"));

    let (servers, warnings) = load_servers(
        &env.paths,
        &env.trusted(),
        std::slice::from_ref(&extra),
        false,
    )
    .unwrap();
    assert_eq!(warnings, Vec::<String>::new());
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["shared", "useronly", "remote"]);
    let shared = &servers[0];
    assert_eq!(
        shared.transport,
        TransportConfig::Stdio {
            command: root.join("./bin/srv").display().to_string(),
            args: vec!["ling-agent".into(), "dflt".into()],
            env: vec![("TOKEN".into(), "ling-agent".into())],
            cwd: root.join("sub"),
        }
    );
    assert!(shared.disabled);
    assert_eq!(shared.startup_timeout, Duration::from_millis(5));
    assert_eq!(shared.tool_timeout, Duration::from_millis(7));
    assert_eq!(shared.include_tools, Some(vec!["a".to_string()]));
    assert_eq!(shared.exclude_tools, vec!["b".to_string()]);
    assert_eq!(shared.source, env.paths.project_file("mcp.json"));
    assert_eq!(servers[1].transport.kind(), "stdio");
    assert_eq!(servers[1].source, extra);
    let remote = &servers[2];
    assert_eq!(remote.transport.kind(), "sse");
    let error = remote.expand_error.clone().unwrap();
    assert!(error.contains("LING_TEST_UNSET_Y"), "{error}");
    assert_eq!(servers[0].expand_error, None);

    let (strict, _) = load_servers(&env.paths, &env.trusted(), &[extra], true).unwrap();
    assert_eq!(strict.len(), 1);
    assert_eq!(
        strict[0].transport,
        TransportConfig::Stdio {
            command: "override".into(),
            args: vec![],
            env: vec![],
            cwd: root,
        }
    );
}

fn load_servers_from(
    env: &TestEnv,
    text: &str,
) -> Result<Vec<ling::config::mcp::ServerConfig>, ConfigError> {
    write(&env.paths.project_file("mcp.json"), text);
    load_servers(&env.paths, &env.trusted(), &[], false).map(|(servers, _)| servers)
}

#[test]
fn invalid_files_are_errors_with_line_and_column() {
    let env = TestEnv::new();
    write(
        &env.paths.project_file("mcp.json"),
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": }\n  }\n}\n",
    );
    match load_servers(&env.paths, &env.trusted(), &[], false) {
        Err(ConfigError::Syntax {
            line, column, path, ..
        }) => {
            assert_eq!((line, column), (3, 22));
            assert_eq!(path, env.paths.project_file("mcp.json"));
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    write(
        &env.paths.project_file("mcp.json"),
        r#"{"mcpServers":{"a":{"command":"x","args":"not-a-list"}}}"#,
    );
    assert!(matches!(
        load_servers(&env.paths, &env.trusted(), &[], false),
        Err(ConfigError::Syntax { line: 1, .. })
    ));
    write(
        &env.paths.project_file("mcp.json"),
        r#"{"mcpServers":{"my__srv":{"command":"x"}}}"#,
    );
    let error = load_servers(&env.paths, &env.trusted(), &[], false)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("\"my__srv\"") && error.contains("__"),
        "{error}"
    );
    write(
        &env.paths.project_file("mcp.json"),
        r#"{"mcpServers":{"a":{"type":"ws","url":"x"}}}"#,
    );
    let error = load_servers(&env.paths, &env.trusted(), &[], false)
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown \"type\" \"ws\""), "{error}");
    let at = |text: &str| match load_servers_from(&env, text) {
        Err(ConfigError::Syntax {
            line,
            column,
            message,
            ..
        }) => (line, column, message),
        other => panic!("expected a positioned error for {text}, got {other:?}"),
    };
    let (line, column, message) = at(
        "{\"mcpServers\": {\n  \"ok\": {\"command\": \"x\"},\n  \"my__srv\": {\"command\": \"x\"}}}",
    );
    assert_eq!((line, column), (3, 3), "{message}");
    assert!(message.contains("\"my__srv\""), "{message}");
    let (line, column, message) = at("{\"mcpServers\": {\n  \"\": {\"command\": \"x\"}}}");
    assert_eq!((line, column), (2, 3), "{message}");
    assert!(message.contains("empty"), "{message}");
    let (line, column, message) =
        at("{\"mcpServers\": {\n  \"a\": {\"url\": \"x\",\n        \"type\": \"ws\"}}}");
    assert_eq!((line, column), (3, 17), "{message}");
    assert!(message.contains("unknown \"type\" \"ws\""), "{message}");
    let (line, column, _) = at("{\"mcpServers\": {\n  \"a\": {\"args\": []}}}");
    assert_eq!((line, column), (2, 3));
    let missing = load_servers(
        &env.paths,
        &env.trusted(),
        &[PathBuf::from("nope.json")],
        true,
    )
    .unwrap_err();
    assert!(matches!(missing, ConfigError::Read { .. }), "{missing}");
}

#[test]
fn a_file_that_is_not_an_object_is_an_error_saying_what_to_write() {
    let env = TestEnv::new();
    let file = env.paths.project_file("mcp.json");
    write(&file, "\n  []\n");
    let error = load_servers(&env.paths, &env.trusted(), &[], false).unwrap_err();
    assert!(
        matches!(&error, ConfigError::Syntax { path, line: 2, column: 3, .. } if *path == file),
        "{error:?}"
    );
    assert!(error.to_string().contains("{\"mcpServers\": {"), "{error}");
}

#[test]
fn unknown_keys_and_server_fields_are_warned_about() {
    let env = TestEnv::new();
    let file = env.paths.project_file("mcp.json");
    write(
        &file,
        r#"{"mcpServer":{},"mcpServers":{"a":{"command":"x","arg":["-v"]}}}"#,
    );
    let (servers, warnings) = load_servers(&env.paths, &env.trusted(), &[], false).unwrap();
    assert_eq!(servers.len(), 1);
    let shown = file.display();
    assert_eq!(
        warnings,
        [
            format!("{shown}: unknown top-level key `mcpServer` ignored"),
            format!("{shown}: server \"a\": unknown field `arg` ignored"),
        ]
    );
}

#[test]
fn add_and_remove_keep_other_entries() {
    let env = TestEnv::new();
    let file = env.paths.project_file("mcp.json");
    write(
        &file,
        r#"{"other":1,"mcpServers":{"keep":{"command":"k","toolTimeoutMs":5}}}"#,
    );
    let added = commands::add_stdio(
        &env.paths,
        Scope::Project,
        "fs",
        &["A=1".into(), "B= 2=3".into()],
        "npx",
        &["-y".into(), "pkg".into()],
    )
    .unwrap();
    assert_eq!(
        added,
        commands::Added {
            file: file.clone(),
            replaced: false
        }
    );
    commands::add_remote(
        &env.paths,
        Scope::Project,
        "http",
        "web",
        "http://127.0.0.1:9/mcp",
        &["Authorization: Bearer x".into()],
    )
    .unwrap();
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        value,
        json!({"other":1,"mcpServers":{
            "keep":{"command":"k","toolTimeoutMs":5},
            "fs":{"command":"npx","args":["-y","pkg"],"env":{"A":"1","B":"2=3"}},
            "web":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer x"}}}})
    );
    assert!(
        commands::add_stdio(
            &env.paths,
            Scope::Project,
            "x",
            &["novalue".into()],
            "c",
            &[]
        )
        .is_err()
    );
    assert!(commands::add_stdio(&env.paths, Scope::Project, "a__b", &[], "c", &[]).is_err());
    commands::add_stdio(&env.paths, Scope::User, "mine", &[], "c", &[]).unwrap();
    assert!(env.paths.user_file("mcp.json").exists());

    commands::remove(&env.paths, None, "fs").unwrap();
    commands::remove(&env.paths, None, "mine").unwrap();
    assert!(commands::remove(&env.paths, None, "fs").is_err());
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let names: Vec<&String> = value["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(names, vec!["keep", "web"]);
}

#[test]
fn list_json_has_the_exact_shape() {
    let statuses = vec![
        ServerStatus {
            name: "a".into(),
            transport: "stdio",
            state: ServerState::Connected,
            tools: 3,
            server_info: None,
        },
        ServerStatus {
            name: "b".into(),
            transport: "http",
            state: ServerState::Failed("boom".into()),
            tools: 0,
            server_info: None,
        },
        ServerStatus {
            name: "c".into(),
            transport: "sse",
            state: ServerState::Disabled,
            tools: 0,
            server_info: None,
        },
    ];
    let out: Value = serde_json::from_str(&print::render_list(&statuses, &[], true)).unwrap();
    assert_eq!(
        out,
        json!({"servers":[
            {"name":"a","transport":"stdio","status":"connected","tools":3},
            {"name":"b","transport":"http","status":"failed","error":"boom","tools":0},
            {"name":"c","transport":"sse","status":"disabled","tools":0}]})
    );
    assert_eq!(
        print::render_list(&statuses, &[], false),
        "a (stdio): connected, 3 tools\nb (http): failed: boom\nc (sse): disabled\n"
    );
}

#[tokio::test]
async fn get_masks_secrets_and_call_runs_one_tool() {
    let env = TestEnv::new();
    let mut config = env.server("t", &[]);
    if let TransportConfig::Stdio { env: vars, .. } = &mut config.transport {
        vars.push(("SECRET".into(), "hunter2".into()));
    }
    let (statuses, tools) = commands::probe(vec![config.clone()], env.options()).await;
    let text = print::render_get(&config, statuses.first(), &tools, false);
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("\"SECRET\":\"***\""), "{text}");
    assert!(
        text.contains("server: mcp-test-server 1.0.0 (protocol 2025-11-25)"),
        "{text}"
    );
    assert!(text.contains("    echo: [MCP:t] Echoes its text"), "{text}");
    let json_out: Value =
        serde_json::from_str(&print::render_get(&config, statuses.first(), &tools, true)).unwrap();
    assert_eq!(json_out["config"]["env"]["SECRET"], "***");
    assert_eq!(json_out["status"], "connected");

    let cancel = CancellationToken::new();
    let ok = commands::call(
        config.clone(),
        "add",
        Some(r#"{"a":1,"b":2}"#),
        env.options(),
        &cancel,
    )
    .await
    .unwrap();
    assert_eq!((ok.text.as_str(), ok.is_error), ("3", false));
    let err = commands::call(config.clone(), "error", None, env.options(), &cancel)
        .await
        .unwrap();
    assert!(err.is_error);
    assert!(
        commands::call(config, "add", Some("[1]"), env.options(), &cancel)
            .await
            .is_err()
    );
    let adhoc = commands::adhoc_http("http://127.0.0.1:9/mcp", &["X-Key: v".into()]).unwrap();
    assert_eq!(
        adhoc.transport,
        TransportConfig::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: vec![("X-Key".into(), "v".into())]
        }
    );
}
