//! Settings files as editors and other tools leave them, through the real binary: a UTF-8
//! byte-order mark at the start is read as nothing; bytes that are not UTF-8, a file that holds
//! `null` or a list, and a value Ling cannot use are errors that name the file (the one that
//! holds the value, not another) and say where and what to write instead. Each with its
//! negative: the same file written plainly loads.

use crate::support::mock_openai::{MockServer, Reply};
use crate::support::project::{Output, Project, run};

use pretty_assertions::assert_eq;

/// `ling -p hi` with the user's settings file holding `bytes`.
fn with_user_settings(bytes: &[u8], server: &MockServer) -> (Project, Output) {
    let project = Project::new();
    let file = project.home.path().join("settings.json");
    std::fs::write(&file, bytes).unwrap();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    (project, out)
}

#[test]
fn a_byte_order_mark_is_read_as_nothing_in_every_config_file() {
    let bom = b"\xef\xbb\xbf";
    let server = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("two")]);
    for prefix in [&b""[..], bom] {
        let project = Project::new();
        let home = project.home.path();
        let mut settings = prefix.to_vec();
        settings.extend_from_slice(br#"{"model": "from-the-file"}"#);
        std::fs::write(home.join("settings.json"), &settings).unwrap();
        let mut mcp = prefix.to_vec();
        mcp.extend_from_slice(br#"{"mcpServers": {}}"#);
        std::fs::write(home.join("mcp.json"), &mcp).unwrap();
        let mut hooks = prefix.to_vec();
        hooks.extend_from_slice(br#"{"hooks": {}}"#);
        std::fs::write(home.join("hooks.json"), &hooks).unwrap();
        let mut cmd = project.command(&server.base_url());
        cmd.args(["-p", "hi"]);
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert_eq!(out.stderr, "", "BOM {}", prefix == bom);
    }
    let models: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(models, ["from-the-file", "from-the-file"]);
}

#[test]
fn bytes_that_are_not_utf8_are_pointed_at() {
    let server = MockServer::start_blocking(vec![]);
    let (project, out) = with_user_settings(b"{\"model\": \"m\",\n  \"x\": \"\xff\xfe\"}", &server);
    let file = project.home.path().join("settings.json");
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr.trim_end(),
        format!(
            "error: {}:2:9: not UTF-8 text (byte 24 of the file); save it as UTF-8",
            file.display()
        )
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_file_of_null_or_a_list_says_so_and_what_to_write() {
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    for (text, found) in [
        ("null", "`null`"),
        ("[]", "a list"),
        ("\"x\"\n", "a string"),
    ] {
        let (project, out) = with_user_settings(text.as_bytes(), &server);
        let file = project.home.path().join("settings.json");
        assert_eq!(out.code, Some(2), "{out:?}");
        assert_eq!(
            out.stderr.trim_end(),
            format!(
                "error: {}: the file holds {found}, not a JSON object; write {{}} for an empty \
                 one, or delete the file",
                file.display()
            )
        );
    }
    // A key of the wrong kind: an object is asked for, in words of the file.
    let (_, out) = with_user_settings(br#"{"permissions": null}"#, &server);
    assert!(
        out.stderr
            .contains(":1:20: invalid type: null, expected an object"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("struct"), "{}", out.stderr);
    // The empty object it suggests loads.
    let (_, out) = with_user_settings(b"{}", &server);
    assert_eq!(out.code, Some(0), "{out:?}");
}

#[test]
fn a_value_ling_cannot_use_is_blamed_on_the_file_that_holds_it() {
    let server = MockServer::start_blocking(vec![]);
    // In the user's file, with a project file beside it that says nothing of it.
    let project = Project::new();
    project.write(".ling/settings.json", r#"{"model": "m"}"#);
    project.trust();
    let user = project.home.path().join("settings.json");
    std::fs::write(&user, r#"{"maxTurns": 0}"#).unwrap();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .starts_with(&format!("error: {}: maxTurns is 0", user.display())),
        "{}",
        out.stderr
    );
    // In the project's file: that one is named.
    std::fs::write(&user, "{}").unwrap();
    project.write(".ling/settings.json", r#"{"maxTurns": 0}"#);
    project.trust();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    let project_file = std::fs::canonicalize(project.path())
        .unwrap()
        .join(".ling/settings.json");
    assert!(
        out.stderr
            .starts_with(&format!("error: {}: maxTurns is 0", project_file.display())),
        "{}",
        out.stderr
    );
}
