//! `ling mcp import --from ...` through the real binary, from fixture files of each source at
//! its documented path under a temp `HOME`: what is copied into `.ling/mcp.json` (or
//! `~/.ling/mcp.json`), what is shown, names that exist skipped unless `--force`, `--dry-run`
//! writing nothing, and the project's trust kept as `ling mcp add` keeps it.

use crate::support::project;

use pretty_assertions::assert_eq;
use project::{Output, Project, run};
use serde_json::{Value, json};

struct Env {
    project: Project,
    home: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Self {
            project: Project::new(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn home_file(&self, rel: &str, text: &str) {
        let path = self.home.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn ling(&self, args: &[&str]) -> Output {
        let mut cmd = self.project.command("http://127.0.0.1:9");
        cmd.env("HOME", self.home.path()).args(args);
        run(cmd)
    }

    fn import(&self, args: &[&str]) -> Output {
        let mut all = vec!["mcp", "import"];
        all.extend(args);
        let out = self.ling(&all);
        assert_eq!(out.code, Some(0), "{out:?}");
        out
    }

    fn servers(&self) -> Value {
        let text = self.project.read(".ling/mcp.json");
        let value: Value = serde_json::from_str(&text).unwrap();
        value["mcpServers"].clone()
    }

    fn root(&self) -> String {
        std::fs::canonicalize(self.project.path())
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
}

#[test]
fn claude_desktop_servers_from_the_linux_and_macos_paths() {
    let env = Env::new();
    env.home_file(
        ".config/Claude/claude_desktop_config.json",
        &json!({ "mcpServers": {
            "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] },
            "db": { "command": "uvx", "args": ["mcp-server-sqlite"], "env": { "DB": "x.db" } }
        }, "globalShortcut": "Ctrl+Space" })
        .to_string(),
    );
    env.home_file(
        "Library/Application Support/Claude/claude_desktop_config.json",
        &json!({ "mcpServers": { "mac": { "command": "mac-server" } } }).to_string(),
    );
    let out = env.import(&["--from", "claude-desktop"]);
    assert!(
        out.stdout
            .contains("+ fs (stdio: npx -y @modelcontextprotocol/server-filesystem /tmp) from "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Imported 3 servers into"),
        "{}",
        out.stdout
    );
    assert_eq!(
        env.servers(),
        json!({
            "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] },
            "db": { "command": "uvx", "args": ["mcp-server-sqlite"], "env": { "DB": "x.db" } },
            "mac": { "command": "mac-server" }
        })
    );
}

#[test]
fn claude_code_user_project_and_mcp_json_servers() {
    let env = Env::new();
    env.home_file(
        ".claude.json",
        &json!({
            "numStartups": 3,
            "mcpServers": { "user-srv": { "type": "stdio", "command": "u" } },
            "projects": {
                env.root(): { "mcpServers": { "proj-srv": { "type": "http", "url": "https://example.com/mcp", "headers": { "X-Key": "${KEY}" } } } },
                "/elsewhere": { "mcpServers": { "other": { "command": "o" } } }
            }
        })
        .to_string(),
    );
    env.project.write(
        ".mcp.json",
        &json!({ "mcpServers": { "shared": { "type": "sse", "url": "http://127.0.0.1:1/sse" } } })
            .to_string(),
    );
    env.import(&["--from", "claude-code"]);
    assert_eq!(
        env.servers(),
        json!({
            "user-srv": { "type": "stdio", "command": "u" },
            "proj-srv": { "type": "http", "url": "https://example.com/mcp", "headers": { "X-Key": "${KEY}" } },
            "shared": { "type": "sse", "url": "http://127.0.0.1:1/sse" }
        })
    );
}

#[test]
fn cursor_servers_skip_existing_names_unless_forced() {
    let env = Env::new();
    env.home_file(
        ".cursor/mcp.json",
        &json!({ "mcpServers": { "keep": { "command": "from-cursor" }, "web": { "url": "https://x.example/mcp" } } })
            .to_string(),
    );
    env.project.write(
        ".cursor/mcp.json",
        &json!({ "mcpServers": { "local": { "command": "./bin/srv" } } }).to_string(),
    );
    env.project.write(
        ".ling/mcp.json",
        &json!({ "mcpServers": { "keep": { "command": "mine" } } }).to_string(),
    );
    let out = env.import(&["--from", "cursor"]);
    assert!(
        out.stdout.contains("= keep: already in")
            && out.stdout.contains("skipped (--force replaces it)"),
        "{}",
        out.stdout
    );
    assert_eq!(env.servers()["keep"], json!({ "command": "mine" }));
    assert_eq!(
        env.servers()["web"],
        json!({ "url": "https://x.example/mcp" })
    );
    assert_eq!(env.servers()["local"], json!({ "command": "./bin/srv" }));
    let out = env.import(&["--from", "cursor", "--force"]);
    assert!(
        out.stdout.contains("~ keep (stdio: from-cursor)"),
        "{}",
        out.stdout
    );
    assert_eq!(env.servers()["keep"], json!({ "command": "from-cursor" }));
}

#[test]
fn vscode_servers_with_inputs_comments_and_user_settings() {
    let env = Env::new();
    env.project.write(
        ".vscode/mcp.json",
        r#"{
  // VS Code asks for these when a server starts
  "inputs": [
    { "type": "promptString", "id": "github-token", "description": "GitHub token", "password": true }
  ],
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": { "Authorization": "Bearer ${input:github-token}" },
    },
    "files": { "type": "stdio", "command": "srv", "args": ["${workspaceFolder}/data"], "envFile": ".env" }, /* trailing */
  }
}"#,
    );
    env.home_file(
        ".config/Code/User/settings.json",
        r#"{ "editor.fontSize": 14, "mcp": { "servers": { "user-one": { "command": "one", "env": { "HOME_DIR": "${env:HOME}" } } } } }"#,
    );
    let out = env.import(&["--from", "vscode"]);
    assert!(
        out.stdout.contains("note: set $GITHUB_TOKEN in the environment (VS Code asked for input `github-token`: GitHub token)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("note: `envFile` has no Ling equivalent"),
        "{}",
        out.stdout
    );
    let servers = env.servers();
    assert_eq!(
        servers["github"]["headers"]["Authorization"],
        "Bearer ${GITHUB_TOKEN}"
    );
    // Portable: the project root by a variable Ling resolves when the server starts.
    assert_eq!(
        servers["files"]["args"],
        json!(["${LING_PROJECT_DIR}/data"])
    );
    assert!(!env.project.read(".ling/mcp.json").contains(&env.root()));
    assert_eq!(servers["user-one"]["env"]["HOME_DIR"], "${HOME}");
}

#[test]
fn codex_toml_tables_into_the_user_file_and_dry_run_writes_nothing() {
    let env = Env::new();
    env.home_file(
        ".codex/config.toml",
        r#"model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs"]
env = { "API_KEY" = "k" }
startup_timeout_sec = 20
tool_timeout_sec = 60

[mcp_servers.remote]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
enabled = false
"#,
    );
    let out = env.import(&["--from", "codex", "--scope", "user", "--dry-run"]);
    assert!(
        out.stdout.contains("--dry-run: nothing written"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\"startupTimeoutMs\": 20000"),
        "{}",
        out.stdout
    );
    let user_file = env.project.home.path().join("mcp.json");
    assert!(!user_file.exists(), "--dry-run wrote the file");
    env.import(&["--from", "codex", "--scope", "user"]);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&user_file).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"],
        json!({
            "docs": { "command": "npx", "args": ["-y", "mcp-docs"], "env": { "API_KEY": "k" },
                      "startupTimeoutMs": 20000, "toolTimeoutMs": 60000 },
            "remote": { "url": "https://mcp.example.com/mcp",
                        "headers": { "Authorization": "Bearer ${REMOTE_TOKEN}" }, "disabled": true }
        })
    );
    assert!(!env.project.file(".ling/mcp.json").exists());
}

#[test]
fn no_config_file_is_a_usage_error_naming_where_it_looked() {
    let env = Env::new();
    let out = env.ling(&["mcp", "import", "--from", "codex"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("no Codex config file found; looked for")
            && out.stderr.contains(".codex/config.toml"),
        "{}",
        out.stderr
    );
    env.home_file(".codex/config.toml", "[mcp_servers.x\n");
    let out = env.ling(&["mcp", "import", "--from", "codex"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("not valid TOML"), "{}", out.stderr);
}

#[test]
fn importing_keeps_trust_as_mcp_add_does() {
    let env = Env::new();
    env.home_file(
        ".cursor/mcp.json",
        &json!({ "mcpServers": { "a": { "command": "a" } } }).to_string(),
    );
    // No project config before: the file Ling writes itself is trusted.
    env.import(&["--from", "cursor"]);
    let list = env.ling(&["trust", "--list"]);
    assert!(list.stdout.contains(&env.root()), "{list:?}");
    // An untrusted project stays untrusted.
    let other = Env::new();
    other.home_file(
        ".cursor/mcp.json",
        &json!({ "mcpServers": { "b": { "command": "b" } } }).to_string(),
    );
    other.project.write(".ling/hooks.json", r#"{"hooks": {}}"#);
    other.import(&["--from", "cursor"]);
    let list = other.ling(&["mcp", "list"]);
    assert!(list.stdout.contains("b (stdio): untrusted"), "{list:?}");
}

/// Servers from the repository's own `.cursor/mcp.json` are the repository's word, not the
/// user's: importing them leaves the project untrusted (a trusted one becomes untrusted, as
/// any changed config does), the summary shows what the trust question would (the environment
/// with the variables that load code flagged), and `--scope user` does not copy them into the
/// user's own file. The same import from the user's `~/.cursor/mcp.json` keeps trust.
#[test]
fn importing_from_the_projects_own_file_never_grants_trust() {
    let env = Env::new();
    env.project.write(
        ".cursor/mcp.json",
        &json!({ "mcpServers": { "repo": { "command": "node", "args": ["-e", "0"],
            "env": { "NODE_OPTIONS": "--require ./evil.js" } } } })
        .to_string(),
    );
    let out = env.import(&["--from", "cursor"]);
    assert!(
        out.stdout
            .contains("env NODE_OPTIONS=\"--require ./evil.js\"  ⚠ loads code"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("not trusted until you review it"),
        "{}",
        out.stdout
    );
    let list = env.ling(&["trust", "--list"]);
    assert!(!list.stdout.contains(&env.root()), "{list:?}");
    let servers = env.ling(&["mcp", "list"]);
    assert!(
        servers.stdout.contains("repo (stdio): untrusted"),
        "{servers:?}"
    );

    // A trusted project becomes untrusted by it.
    let trusted = Env::new();
    trusted
        .project
        .write(".ling/hooks.json", r#"{"hooks": {}}"#);
    trusted.project.trust();
    trusted.project.write(
        ".cursor/mcp.json",
        &json!({ "mcpServers": { "repo": { "command": "r" } } }).to_string(),
    );
    trusted.import(&["--from", "cursor"]);
    let servers = trusted.ling(&["mcp", "list"]);
    assert!(
        servers.stdout.contains("repo (stdio): untrusted"),
        "{servers:?}"
    );

    // Into the user's own file: not copied.
    let out = env.import(&["--from", "cursor", "--scope", "user"]);
    assert!(
        out.stdout.contains("it is the project's own file"),
        "{}",
        out.stdout
    );
    let user =
        std::fs::read_to_string(env.project.home.path().join("mcp.json")).unwrap_or_default();
    assert!(!user.contains("repo"), "{user}");

    // The negative: the user's own ~/.cursor/mcp.json into a trusted project keeps it trusted.
    let mine = Env::new();
    mine.project.write(".ling/hooks.json", r#"{"hooks": {}}"#);
    mine.project.trust();
    mine.home_file(
        ".cursor/mcp.json",
        &json!({ "mcpServers": { "mine": { "command": "m" } } }).to_string(),
    );
    mine.import(&["--from", "cursor"]);
    let servers = mine.ling(&["mcp", "list"]);
    assert!(!servers.stdout.contains("untrusted"), "{servers:?}");
}

#[test]
fn codex_home_and_the_projects_own_codex_config() {
    let env = Env::new();
    let codex_home = tempfile::tempdir().unwrap();
    std::fs::write(
        codex_home.path().join("config.toml"),
        "[mcp_servers.user-side]\ncommand = \"u\"\n[mcp_servers.both]\ncommand = \"from-user\"\n",
    )
    .unwrap();
    // Not read: CODEX_HOME is set.
    env.home_file(
        ".codex/config.toml",
        "[mcp_servers.ignored]\ncommand = \"x\"\n",
    );
    env.project.write(
        ".codex/config.toml",
        "[mcp_servers.both]\ncommand = \"from-project\"\n[mcp_servers.local]\ncommand = \"l\"\n",
    );
    let mut cmd = env.project.command("http://127.0.0.1:9");
    cmd.env("HOME", env.home.path())
        .env("CODEX_HOME", codex_home.path())
        .args(["mcp", "import", "--from", "codex"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let servers = env.servers();
    let mut names: Vec<&String> = servers.as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(names, ["both", "local", "user-side"]);
    assert_eq!(servers["both"]["command"], "from-project");
}

#[test]
fn claude_config_dir_is_where_claude_code_keeps_its_state() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".claude.json"),
        json!({"mcpServers": {"moved": {"command": "m"}}}).to_string(),
    )
    .unwrap();
    env.home_file(
        ".claude.json",
        &json!({"mcpServers": {"default-place": {"command": "d"}}}).to_string(),
    );
    let mut cmd = env.project.command("http://127.0.0.1:9");
    cmd.env("HOME", env.home.path())
        .env("CLAUDE_CONFIG_DIR", dir.path())
        .args(["mcp", "import", "--from", "claude-code"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let servers = env.servers();
    assert!(servers.get("moved").is_some(), "{servers}");
    assert!(servers.get("default-place").is_none(), "{servers}");
}

#[test]
fn an_imported_workspace_folder_server_starts_from_the_project_root() {
    let env = Env::new();
    let bin = env.project.file("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(crate::support::mcp::test_server(), bin.join("srv")).unwrap();
    env.project.write(
        ".vscode/mcp.json",
        r#"{"servers": {"local": {"type": "stdio", "command": "${workspaceFolder}/bin/srv"}}}"#,
    );
    env.import(&["--from", "vscode"]);
    assert_eq!(
        env.servers()["local"]["command"],
        "${LING_PROJECT_DIR}/bin/srv"
    );
    env.project.trust();
    let server = crate::support::mock_openai::MockServer::start_blocking(vec![
        crate::support::mock_openai::Reply::text("ok"),
    ]);
    let mut cmd = env.project.command(&server.base_url());
    cmd.env("HOME", env.home.path())
        .env("LING_PROJECT_DIR", "/somewhere/else")
        .args(["-p", "hi", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.json()["mcp_servers"],
        json!([{"name": "local", "status": "connected"}])
    );
}
