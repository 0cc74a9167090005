//! Helpers for the MCP integration tests: the test server's path, a temp project + LING_HOME,
//! and stdio server configs for it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ling::config::mcp::{ServerConfig, TransportConfig};
use ling::config::{Paths, ProjectFiles};
use ling::mcp::{ManagerOptions, McpManager};
use ling::trust::ProjectConfig;

/// The misbehaving MCP test server (`examples/mcp-test-server`), built for this run.
pub fn test_server() -> PathBuf {
    super::peers::example("mcp-test-server")
}

/// A temp project root and LING_HOME.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
    pub paths: Paths,
}

impl TestEnv {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let home = dir.path().join("home");
        for d in [&root, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        let root = root.canonicalize().unwrap();
        Self {
            paths: Paths::with_home(root, home),
            dir,
        }
    }

    /// The project's config as read now, trusted as `ling trust` would record it.
    pub fn trusted(&self) -> ProjectFiles {
        let mut config = ProjectConfig::read(&self.paths).unwrap();
        config.trust().unwrap();
        config.layer().clone()
    }

    /// The file the test server appends every received message to (via `MCP_TEST_LOG`).
    pub fn received_log(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("received-{name}.jsonl"))
    }

    /// A stdio config for the test server, logging what it receives.
    pub fn server(&self, name: &str, args: &[&str]) -> ServerConfig {
        let transport = TransportConfig::Stdio {
            command: test_server().display().to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: vec![(
                "MCP_TEST_LOG".into(),
                self.received_log(name).display().to_string(),
            )],
            cwd: self.paths.project_root.clone(),
        };
        let mut config = ServerConfig::new(name, transport);
        config.startup_timeout = Duration::from_secs(10);
        config.tool_timeout = Duration::from_secs(10);
        config
    }

    pub fn options(&self) -> ManagerOptions {
        ManagerOptions::new(self.paths.clone())
    }

    pub async fn start(&self, configs: Vec<ServerConfig>) -> Arc<McpManager> {
        let manager = McpManager::start(configs, self.options());
        manager.wait_ready().await;
        manager
    }

    /// Waits (up to 5 s) until the server's received log has a line containing `needle`.
    pub async fn wait_received(&self, name: &str, needle: &str) -> String {
        for _ in 0..100 {
            let text = std::fs::read_to_string(self.received_log(name)).unwrap_or_default();
            if let Some(line) = text.lines().find(|l| l.contains(needle)) {
                return line.to_string();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the server {name} never received {needle:?}");
    }
}

/// The reference servers from npm (installed by `scripts/install-peers.sh`): the `node` to run
/// them with and the package directory.
pub struct Peers {
    pub node: PathBuf,
    pub modules: PathBuf,
}

impl Peers {
    /// Node and the everything, filesystem and memory servers; fails the test when one is missing.
    pub fn require() -> Self {
        for package in ["server-everything", "server-filesystem", "server-memory"] {
            super::peers::npm_script(&format!("@modelcontextprotocol/{package}/dist/index.js"));
        }
        Self {
            node: super::peers::node(),
            modules: super::peers::npm_dir().join("node_modules"),
        }
    }

    /// A stdio config running one reference server's `dist/index.js` with `args`.
    pub fn server(
        &self,
        env: &TestEnv,
        package: &str,
        args: &[String],
        vars: &[(&str, String)],
    ) -> ServerConfig {
        let script = self
            .modules
            .join("@modelcontextprotocol")
            .join(package)
            .join("dist/index.js");
        let mut all_args = vec![script.display().to_string()];
        all_args.extend(args.iter().cloned());
        let transport = TransportConfig::Stdio {
            command: self.node.display().to_string(),
            args: all_args,
            env: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            cwd: env.paths.project_root.clone(),
        };
        let mut config = ServerConfig::new(package.trim_start_matches("server-"), transport);
        config.startup_timeout = Duration::from_secs(30);
        config.tool_timeout = Duration::from_secs(30);
        config
    }
}
