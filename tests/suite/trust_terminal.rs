//! The terminal part of the trust contract, through the real binary: text from outside Ling
//! (model text, tool output, MCP names, descriptions and results, hook messages, HTTP error
//! bodies) reaches a pseudo-terminal with every control character made visible, in `-p` and in
//! the REPL; `-p` to a pipe stays byte-exact; approvals show the whole command and a new file's
//! lines. Assertions are on the bytes the pty receives (`NO_COLOR=1`, `TERM=dumb`, so the only
//! escape Ling itself sends is the spinner's `\r\x1b[K`).

use crate::support::{mcp, mock_openai, project};

use std::process::Command;

use mock_openai::{MockServer, Reply, chunk};
use pretty_assertions::assert_eq;
use project::Project;
use rexpect::session::{PtySession, spawn_command};
use serde_json::{Value, json};

/// Model text full of terminal attacks, in pieces that split the escapes between deltas.
const HOSTILE_DELTAS: [&str; 7] = [
    "clip\x1b",
    "]52;c;cm0gLXJmIH4=\x07 title\x1b]0;pwned\x07",
    " clear\x1b[2J over",
    "\rwrite c1\u{9b}2J",
    " bidi\u{202e}txt\u{2066}",
    " del\x7f end",
    " sgr\x1b[31m!",
];

/// What the pty must show for them.
const HOSTILE_SHOWN: [&str; 7] = [
    "clip^[]52;c;cm0gLXJmIH4=^G",
    "title^[]0;pwned^G",
    "clear^[[2J over^Mwrite",
    "c1<U+009B>2J",
    "bidi<U+202E>txt<U+2066>",
    "del^? end",
    "sgr^[[31m!",
];

fn hostile_text() -> String {
    HOSTILE_DELTAS.concat()
}

fn hostile_reply() -> Reply {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for delta in HOSTILE_DELTAS {
        chunks.push(chunk(json!({ "content": delta }), None));
    }
    chunks.push(chunk(json!({}), Some("stop")));
    Reply::chunks(chunks)
}

/// A session in a pty whose output is kept whole, as bytes (rexpect hands each byte over as one
/// `char`; needles are matched in that form).
struct Screen {
    p: PtySession,
    seen: Vec<u8>,
}

fn latin1(text: &str) -> String {
    text.bytes().map(char::from).collect()
}

fn bytes_of(read: &str) -> Vec<u8> {
    read.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or_else(|_| panic!("not a byte: {c:?}")))
        .collect()
}

impl Screen {
    fn spawn(mut cmd: Command) -> Self {
        cmd.env("TERM", "dumb");
        let p = spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
        Self {
            p,
            seen: Vec::new(),
        }
    }

    fn expect(&mut self, needle: &str) {
        let (before, matched) = self
            .p
            .exp_regex(&regex::escape(&latin1(needle)))
            .unwrap_or_else(|e| {
                panic!(
                    "expected {needle:?} in the pty output: {e}\nseen so far:\n{}",
                    String::from_utf8_lossy(&self.seen)
                )
            });
        self.seen.extend(bytes_of(&before));
        self.seen.extend(bytes_of(&matched));
    }

    fn send_line(&mut self, line: &str) {
        self.p.send_line(line).unwrap();
    }

    /// Everything up to the end of the process.
    fn finish(mut self) -> Vec<u8> {
        let rest = self.p.exp_eof().expect("no exit");
        self.seen.extend(bytes_of(&rest));
        self.seen
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `bytes` without the escapes Ling itself sends (the spinner's redraw).
fn without_own_escapes(bytes: &[u8]) -> Vec<u8> {
    let own = b"\r\x1b[K";
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(own) {
            i += own.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// No ESC, no C1 control and no bidi override or isolate anywhere in `bytes`.
fn assert_no_live_controls(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !bytes.contains(&0x1b),
        "a raw ESC reached the pty:\n{text:?}"
    );
    assert!(
        !bytes.contains(&0x07),
        "a raw BEL reached the pty:\n{text:?}"
    );
    assert!(
        !bytes.contains(&0x7f),
        "a raw DEL reached the pty:\n{text:?}"
    );
    for c in text.chars() {
        let code = u32::from(c);
        assert!(
            !(0x80..=0x9f).contains(&code)
                && !(0x202a..=0x202e).contains(&code)
                && !(0x2066..=0x2069).contains(&code),
            "{c:?} reached the pty:\n{text:?}"
        );
    }
}

fn assert_shows(bytes: &[u8], shown: &[&str]) {
    let text = String::from_utf8_lossy(bytes);
    for part in shown {
        assert!(text.contains(part), "{part:?} is not shown in:\n{text}");
    }
}

/// `~/.ling/hooks.json` (the user's own, applied in every project) with one hook for `event`
/// that answers with a systemMessage full of escapes.
fn user_hook(project: &Project, event: &str, matcher: &str) {
    let message = json!({"systemMessage": "hook says \x1b]0;hooked\x07 and \x1b[2J"}).to_string();
    let script = project.home.path().join("hook.sh");
    std::fs::write(&script, format!("#!/bin/sh\ncat <<'EOF'\n{message}\nEOF\n")).unwrap();
    let hooks = json!({"hooks": {event: [{"matcher": matcher, "hooks": [
        {"type": "command", "command": format!("sh {} # \x1b]0;cmd\x07", script.display())}
    ]}]}});
    std::fs::write(project.home.path().join("hooks.json"), hooks.to_string()).unwrap();
}

const HOOK_SHOWN: &str = "hook says ^[]0;hooked^G and ^[[2J";

/// A `-p` run whose model answers with the hostile text after a bash call whose command carries
/// escapes and a read_file call whose output does, with a user hook's message after the call.
fn hostile_run(project: &Project) -> (MockServer, Command) {
    project.write("evil.txt", "file says \x1b]0;file\x07 \x1b[2J");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            (
                "b1",
                "bash",
                json!({"command": "printf 'out\\033]52;c;eA==\\007' # \x1b]0;cmd\x07"}),
            ),
            ("r1", "read_file", json!({"path": "evil.txt"})),
        ]),
        hostile_reply(),
    ]);
    user_hook(project, "PostToolUse", "bash");
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--allowed-tools", "bash"]);
    (server, cmd)
}

#[test]
fn p_to_a_terminal_shows_control_characters_of_text_tools_and_hooks() {
    let project = Project::new();
    let (_server, cmd) = hostile_run(&project);
    let bytes = Screen::spawn(cmd).finish();
    assert_no_live_controls(&bytes);
    assert_shows(&bytes, &HOSTILE_SHOWN);
    assert_shows(
        &bytes,
        &["# ^[]0;cmd^G)", "file says ^[]0;file^G ^[[2J", HOOK_SHOWN],
    );
}

/// `bytes` without Ling's own colours (the SGR codes `Style` writes).
fn without_own_colours(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let sgr = regex::Regex::new(r"\x1b\[(0|1|2|31|32|33|36)m").unwrap();
    sgr.replace_all(&text, "").into_owned().into_bytes()
}

#[test]
fn with_colours_on_only_lings_own_colours_reach_the_terminal() {
    let project = Project::new();
    let (_server, mut cmd) = hostile_run(&project);
    cmd.env_remove("NO_COLOR");
    let bytes = Screen::spawn(cmd).finish();
    assert!(
        contains(&bytes, b"\x1b[36m\xe2\x97\x8f\x1b[0m"),
        "the tool line's bullet is coloured: {:?}",
        String::from_utf8_lossy(&bytes)
    );
    let rest = without_own_colours(&bytes);
    assert_no_live_controls(&rest);
    assert_shows(&rest, &HOSTILE_SHOWN);
    assert_shows(&rest, &["# ^[]0;cmd^G)", HOOK_SHOWN]);
}

#[test]
fn p_to_a_pipe_is_byte_exact_and_stderr_is_still_neutralised() {
    let project = Project::new();
    let (_server, cmd) = hostile_run(&project);
    let out = project::run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, format!("{}\n", hostile_text()));
    assert_no_live_controls(out.stderr.as_bytes());
    assert_shows(out.stderr.as_bytes(), &["# ^[]0;cmd^G)", HOOK_SHOWN]);
}

#[test]
fn json_outputs_stay_the_same_json_and_are_safe_on_a_terminal() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![hostile_reply(), hostile_reply()]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--output-format", "ling-stream-json"]);
    let out = project::run(cmd);
    let lines = out.json_lines();
    let assistant = lines.iter().find(|l| l["type"] == "assistant").unwrap();
    assert_eq!(assistant["text"], json!(hostile_text()));
    assert!(
        out.stdout.contains('\u{9b}'),
        "to a pipe the JSON is serde_json's, byte for byte"
    );

    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--output-format", "json"]);
    let bytes = Screen::spawn(cmd).finish();
    assert_no_live_controls(&bytes);
    let text = String::from_utf8(bytes).unwrap();
    let result: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(result["result"], json!(hostile_text()), "the same value");
}

#[test]
fn an_http_error_body_is_neutralised_in_the_error_line() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::status(400).message("bad \x1b]0;pwned\x07 request \x1b[2J"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go"]);
    let bytes = Screen::spawn(cmd).finish();
    assert_no_live_controls(&bytes);
    assert_shows(&bytes, &["error:", "bad ^[]0;pwned^G request ^[[2J"]);
}

fn repl(project: &Project, server: &MockServer, args: &[&str]) -> Screen {
    let mut cmd = project.command(&server.base_url());
    cmd.args(args);
    let mut screen = Screen::spawn(cmd);
    screen.expect("> ");
    screen
}

fn exit(mut screen: Screen) -> Vec<u8> {
    screen.send_line("/exit");
    without_own_escapes(&screen.finish())
}

#[test]
fn the_repl_shows_model_text_tool_output_and_hook_messages_neutralised() {
    let project = Project::new();
    project.write("evil.txt", "file says \x1b]0;file\x07 \x1b[2J");
    user_hook(&project, "PostToolUse", "read_file");
    let server = MockServer::start_blocking(vec![
        Reply::reasoning_then_text("thinks \x1b]0;reason\x07", ""),
        Reply::tool_calls(vec![("r1", "read_file", json!({"path": "evil.txt"}))]),
        hostile_reply(),
    ]);
    let mut screen = repl(&project, &server, &[]);
    screen.send_line("first");
    screen.expect("> ");
    screen.send_line("read it");
    screen.expect("end");
    screen.expect("> ");
    screen.send_line("/hooks");
    screen.expect("PostToolUse");
    screen.expect("> ");
    let bytes = exit(screen);
    assert_no_live_controls(&bytes);
    assert_shows(&bytes, &HOSTILE_SHOWN);
    assert_shows(
        &bytes,
        &[
            "thinks ^[]0;reason^G",
            "file says ^[]0;file^G ^[[2J",
            HOOK_SHOWN,
            "# ^[]0;cmd^G",
        ],
    );
}

/// An `--mcp-config` file with the test server under a hostile name and a tool with a hostile
/// description, and the same server under a plain name.
fn mcp_config(project: &Project) -> std::path::PathBuf {
    let server = mcp::test_server().display().to_string();
    let args = json!([
        "--tool-name",
        "odd",
        "--tool-description",
        "desc \x1b]52;c;eA==\x07 \u{9b}2J"
    ]);
    let config = json!({"mcpServers": {
        "evil\x1b]0;srv\x07": {"command": server, "args": args},
        "plain": {"command": server, "args": args},
    }});
    let path = project.home.path().join("extra-mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

const MCP_SHOWN: [&str; 2] = ["evil^[]0;srv^G", "desc ^[]52;c;eA==^G <U+009B>2J"];

#[test]
fn the_repl_neutralises_mcp_names_descriptions_and_results() {
    let project = Project::new();
    let config = mcp_config(&project);
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "m1",
            "mcp__plain__echo",
            json!({"text": "result \x1b]0;res\x07 \x1b[2J"}),
        )]),
        Reply::text("done"),
    ]);
    let config = config.display().to_string();
    let mut screen = repl(
        &project,
        &server,
        &["--mcp-config", &config, "--allowed-tools", "mcp__plain__*"],
    );
    // Servers start in the background; `/mcp` until both are up.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let up = regex::Regex::new(r"connected \d+ tools").unwrap();
    loop {
        let before = screen.seen.len();
        screen.send_line("/mcp");
        screen.expect("> ");
        let listing = String::from_utf8_lossy(&screen.seen[before..]).into_owned();
        if up.find_iter(&listing).count() >= 2 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    screen.send_line("/tools");
    screen.expect("mcp__plain__odd");
    screen.expect("> ");
    screen.send_line("echo something");
    screen.expect("done");
    screen.expect("> ");
    let bytes = exit(screen);
    assert_no_live_controls(&bytes);
    assert_shows(&bytes, &MCP_SHOWN);
    assert_shows(&bytes, &["result ^[]0;res^G ^[[2J"]);
}

/// The logical lines of the approval's input block: `│` rows start one, `┊` rows continue it.
fn input_block(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for row in text.lines().map(|l| l.trim_end_matches('\r')) {
        if let Some(rest) = row.strip_prefix("  │ ") {
            lines.push(rest.to_string());
        } else if let Some(rest) = row.strip_prefix("  ┊ ") {
            lines.last_mut().unwrap().push_str(rest);
        }
    }
    lines
}

#[test]
fn a_repl_approval_shows_the_real_command_whole_and_visible() {
    let project = Project::new();
    // Raw, the `\r` and cursor codes would redraw the line as `● bash(ls)`.
    let attack = "touch PWNED #\r\x1b[2K\x1b[1A● bash(ls)";
    let long = format!("echo {} && touch LONG", "a".repeat(320));
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({ "command": attack }))]),
        Reply::tool_calls(vec![("b2", "bash", json!({ "command": long }))]),
    ]);
    // Without the shell sandbox, so that bash asks.
    let mut screen = repl(&project, &server, &["--sandbox", "off"]);
    screen.send_line("one");
    screen.expect("allow?");
    // `n` ends the turn: back at the prompt.
    screen.send_line("n");
    screen.expect("declined");
    screen.send_line("two");
    screen.expect("allow?");
    screen.send_line("n");
    screen.expect("declined");
    let bytes = exit(screen);
    assert_no_live_controls(&bytes);
    let text = String::from_utf8_lossy(&bytes);
    assert_shows(&bytes, &["● bash(touch PWNED #^M^[[2K^[[1A● bash(ls))"]);
    assert_eq!(
        input_block(&text),
        vec![
            "touch PWNED #^M^[[2K^[[1A● bash(ls)".to_string(),
            long.clone()
        ],
        "each command whole, neutralised, the long one wrapped: {text}"
    );
    let rows = text
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| l.starts_with("  │ ") || l.starts_with("  ┊ "));
    assert!(
        rows.clone().count() > 1 && rows.clone().all(|l| l.chars().count() <= 80),
        "wrapped at the terminal width: {text}"
    );
    assert!(!project.file("PWNED").exists() && !project.file("LONG").exists());
}

#[test]
fn a_repl_approval_of_a_new_file_shows_its_content() {
    let project = Project::new();
    let mut content: String = (1..=45).map(|i| format!("line {i}\n")).collect();
    content.insert_str(0, "top \x1b]0;file\x07 \x1b[2J\n");
    let server = MockServer::start_blocking(vec![Reply::tool_calls(vec![(
        "w1",
        "write_file",
        json!({"path": "new.txt", "content": content}),
    )])]);
    let mut screen = repl(&project, &server, &[]);
    screen.send_line("write it");
    screen.expect("allow?");
    screen.send_line("n");
    screen.expect("declined");
    let bytes = exit(screen);
    assert_no_live_controls(&bytes);
    let text = String::from_utf8_lossy(&bytes);
    // The question's rows of the preview, behind its bar.
    let shown: Vec<&str> = text
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter_map(|l| l.strip_prefix("  │ "))
        .skip_while(|l| !l.starts_with("new file new.txt"))
        .collect();
    let mut expected = vec![
        format!("new file new.txt (46 lines, {} bytes)", content.len()),
        "+top ^[]0;file^G ^[[2J".to_string(),
    ];
    expected.extend((1..=39).map(|i| format!("+line {i}")));
    expected.push("… +6 more lines".into());
    assert_eq!(shown, expected, "{text}");
    assert!(!project.file("new.txt").exists());
}

#[test]
fn mcp_commands_neutralise_names_descriptions_and_results() {
    let project = Project::new();
    let config = mcp_config(&project).display().to_string();
    let mcp = |args: &[&str]| {
        let mut cmd = project.command("http://127.0.0.1:9");
        cmd.args(["mcp", "--mcp-config", &config, "--strict-mcp-config"])
            .args(args);
        cmd
    };
    let listed = Screen::spawn(mcp(&["list"])).finish();
    assert_no_live_controls(&listed);
    assert_shows(&listed, &["evil^[]0;srv^G", "plain"]);

    let got = Screen::spawn(mcp(&["get", "evil\x1b]0;srv\x07"])).finish();
    assert_no_live_controls(&got);
    assert_shows(&got, &MCP_SHOWN);

    let got_json = Screen::spawn(mcp(&["get", "plain", "--json"])).finish();
    assert_no_live_controls(&got_json);
    assert_shows(&got_json, &["\\u001b]52;c;eA==\\u0007 \\u009b2J"]);

    let args = r#"{"text": "result \u001b]0;res\u0007 \u009b"}"#;
    let called = Screen::spawn(mcp(&["call", "plain", "echo", args])).finish();
    assert_no_live_controls(&called);
    assert_shows(&called, &["result ^[]0;res^G <U+009B>"]);

    let piped = project::run(mcp(&["call", "plain", "echo", args]));
    assert_eq!(piped.code, Some(0), "{}", piped.stderr);
    assert_eq!(
        piped.stdout, "result \x1b]0;res\x07 \u{9b}\n",
        "exact to a pipe"
    );
}

#[test]
fn hooks_list_and_run_neutralise_commands_and_messages() {
    let project = Project::new();
    user_hook(&project, "PostToolUse", "bash");
    let hooks = |args: &[&str]| {
        let mut cmd = project.command("http://127.0.0.1:9");
        cmd.arg("hooks").args(args);
        cmd
    };
    let listed = Screen::spawn(hooks(&["list"])).finish();
    assert_no_live_controls(&listed);
    assert_shows(&listed, &["# ^[]0;cmd^G"]);

    let ran = Screen::spawn(hooks(&["run", "PostToolUse", "--tool", "bash"])).finish();
    assert_no_live_controls(&ran);
    assert_shows(&ran, &[HOOK_SHOWN]);
}
