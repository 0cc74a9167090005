//! The REPL in a pseudo-terminal, for the REPL suites: [`start`] runs the real `ling` in a
//! project against a mock model (`TERM=xterm`, 80 columns unless the pty says otherwise), and
//! [`Repl`] waits for what it prints: each wait is on the text the REPL shows when the event
//! happened (a prompt, a question, a notice), never on a sleep.

use rexpect::session::{PtySession, spawn_command};

use super::mock_openai::MockServer;
use super::project::Project;

/// How long one wait may take before the test fails.
pub const STEP_MS: u64 = 20_000;

/// A running REPL.
pub struct Repl {
    pub p: PtySession,
}

/// The REPL of `project` against `server`, with `args` and the environment `env` added.
pub fn start(project: &Project, server: &MockServer, args: &[&str], env: &[(&str, &str)]) -> Repl {
    start_url(project, &server.base_url(), args, env)
}

/// [`start`] against any base URL.
pub fn start_url(project: &Project, url: &str, args: &[&str], env: &[(&str, &str)]) -> Repl {
    let mut cmd = project.command(url);
    cmd.args(args).env("TERM", "xterm");
    for (k, v) in env {
        cmd.env(k, v);
    }
    Repl {
        p: spawn_command(cmd, Some(STEP_MS)).expect("spawn in a pty"),
    }
}

impl Repl {
    /// Waits for `text`; returns what came before it, as the UTF-8 it is, escapes kept.
    pub fn raw(&mut self, text: &str) -> String {
        // rexpect compares bytes as Latin-1 characters: the needle's UTF-8 bytes likewise.
        let needle: String = text.bytes().map(char::from).collect();
        let seen = self
            .p
            .exp_string(&needle)
            .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"));
        utf8(&seen)
    }

    /// Waits for `text`; returns what came before it without escapes (as a user reads it).
    pub fn expect(&mut self, text: &str) -> String {
        without_escapes(&self.raw(text))
    }

    /// Waits for the prompt.
    pub fn prompt(&mut self) -> String {
        self.expect("> ")
    }

    pub fn send_line(&mut self, line: &str) {
        self.p.send_line(line).expect("write to the pty");
    }

    /// Types `text` without Enter.
    pub fn typ(&mut self, text: &str) {
        self.p.send(text).expect("write to the pty");
        self.p.flush().expect("flush the pty");
    }

    /// One key, sent at once.
    pub fn key(&mut self, key: &str) {
        self.typ(key);
    }

    pub fn control(&mut self, c: char) {
        self.p.send_control(c).expect("write to the pty");
    }

    /// `/exit`, and waits for the REPL to end.
    pub fn exit(mut self) {
        self.send_line("/exit");
        self.p.exp_eof().expect("the REPL did not exit");
    }

    /// Asks `/mcp` until server `name` is connected (servers start in the background): each
    /// round waits for the REPL's answer and its prompt, no sleep.
    pub fn wait_mcp_connected(&mut self, name: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            self.send_line("/mcp");
            let (_, state) = self
                .p
                .exp_regex("(starting|connected|failed)")
                .expect("no /mcp status");
            self.raw("> ");
            match state.as_str() {
                "connected" => return,
                "starting" if std::time::Instant::now() < deadline => {}
                other => panic!("MCP server {name} is {other}"),
            }
        }
    }

    /// Waits for the end of the REPL.
    pub fn eof(&mut self) -> String {
        utf8(&self.p.exp_eof().expect("the REPL did not exit"))
    }
}

/// rexpect hands bytes over as Latin-1 characters: decoded as the UTF-8 they are.
pub fn utf8(latin1: &str) -> String {
    let bytes: Vec<u8> = latin1.chars().map(|c| c as u32 as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The text a user reads: the spinner's status rows (each wiped by `\r ESC[K`, the rows above
/// it by `ESC[A`) and colour codes left out, carriage returns dropped.
pub fn without_escapes(text: &str) -> String {
    let wiped = regex::Regex::new("[^\n]*\r\x1b\\[K").unwrap();
    let sgr = regex::Regex::new("\x1b\\[[0-9;?]*[A-Za-z]").unwrap();
    let osc = regex::Regex::new("\x1b\\][^\x07\x1b]*(\x07|\x1b\\\\)").unwrap();
    let text = osc.replace_all(text, "");
    let text = wiped.replace_all(&text, "");
    sgr.replace_all(&text, "").replace('\r', "")
}
