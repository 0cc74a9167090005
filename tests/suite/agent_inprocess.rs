//! The agent driven in-process through the library API, against the scripted mock model: the
//! `AgentEvent`s of a run in order (a text answer, a tool call's begin and end, a denied call, a
//! run cancelled during the request and during a tool), the `RunResult`, and what the model was
//! sent next.

use crate::support::mock_openai;

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use ling::agent::{
    Agent, AgentEvent, AgentOptions, Approval, ApprovalRequest, Approver, EventSink,
    NonInteractive, PromptOptions, RunEnd, RunResult, Session,
};
use ling::config::{Paths, PermissionMode};
use ling::llm::{LlmClient, LlmConfig, Usage};
use ling::permissions::Permissions;
use ling::process::ChildEnv;
use ling::tools::ToolRegistry;
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A project root and `LING_HOME` in temp dirs, and an agent on the mock model.
struct Setup {
    root: tempfile::TempDir,
    _home: tempfile::TempDir,
    agent: Agent,
}

fn agent(server: &MockServer, mode: PermissionMode) -> Setup {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let project_root = std::fs::canonicalize(root.path()).unwrap_or_else(|e| panic!("{e}"));
    let mut paths = Paths::new(project_root.clone());
    paths.home = home.path().to_path_buf();
    let llm = LlmClient::new(LlmConfig::new(server.base_url(), "m"))
        .unwrap_or_else(|e| panic!("llm client: {e}"));
    let permissions =
        Permissions::new(mode, &[], &[], &paths).unwrap_or_else(|e| panic!("permissions: {e}"));
    let options = AgentOptions {
        root: project_root.clone(),
        max_turns: None,
        tool_output_limit: ling::config::DEFAULT_TOOL_OUTPUT_LIMIT,
        prompt: PromptOptions::default(),
        child_env: ChildEnv::default(),
        context: Default::default(),
        add_dirs: Vec::new(),
        never_ask: false,
        stop_hook_limit: 20,
        background_buffer: 1 << 20,
        subagent: None,
        idle_notify_after: std::time::Duration::from_secs(60),
        budget: Default::default(),
    };
    let session = Session::new(&paths.sessions_dir(), &project_root, "m");
    Setup {
        root,
        _home: home,
        agent: Agent::new(llm, ToolRegistry::builtins(), permissions, options, session),
    }
}

/// Acts on an event as it arrives (cancels the run, say).
type OnEvent = Box<dyn Fn(&AgentEvent) + Send + Sync>;

/// Collects every event.
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<AgentEvent>>,
    on: Option<OnEvent>,
}

impl EventSink for Recorder {
    fn emit(&self, event: AgentEvent) {
        if let Some(on) = &self.on {
            on(&event);
        }
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
    }
}

impl Recorder {
    /// The events, consecutive text deltas joined (the mock splits text over chunks).
    fn events(&self) -> Vec<AgentEvent> {
        let events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let mut merged: Vec<AgentEvent> = Vec::new();
        for event in events.iter().cloned() {
            match (merged.last_mut(), event) {
                (Some(AgentEvent::TextDelta(text)), AgentEvent::TextDelta(more)) => {
                    text.push_str(&more)
                }
                (_, event) => merged.push(event),
            }
        }
        merged
    }
}

async fn run(
    setup: &mut Setup,
    prompt: &str,
    sink: &Recorder,
    approver: &dyn Approver,
) -> RunResult {
    let cancel = CancellationToken::new();
    run_with(setup, prompt, sink, approver, &cancel).await
}

async fn run_with(
    setup: &mut Setup,
    prompt: &str,
    sink: &Recorder,
    approver: &dyn Approver,
    cancel: &CancellationToken,
) -> RunResult {
    tokio::time::timeout(
        Duration::from_secs(30),
        setup.agent.run(prompt, sink, approver, cancel),
    )
    .await
    .unwrap_or_else(|_| panic!("the run did not end within 30s"))
    .unwrap_or_else(|e| panic!("the run failed: {e}"))
}

/// The `tool` messages of a recorded request: (tool_call_id, content).
fn tool_messages(request: &mock_openai::Recorded) -> Vec<(String, String)> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let text = |key: &str| m[key].as_str().unwrap_or_default().to_string();
            (text("tool_call_id"), text("content"))
        })
        .collect()
}

#[tokio::test]
async fn a_text_answer_is_request_text_message_and_finish_in_order() {
    let server = MockServer::start(vec![Reply::text("Hello there.").usage(12, 3)]).await;
    let mut setup = agent(&server, PermissionMode::Default);
    let sink = Recorder::default();
    let result = run(&mut setup, "hi", &sink, &NonInteractive).await;
    assert_eq!(
        sink.events(),
        vec![
            AgentEvent::RequestStarted { turn: 1 },
            AgentEvent::TextDelta("Hello there.".into()),
            AgentEvent::AssistantMessage {
                text: "Hello there.".into(),
                usage: Some(Usage::new(12, 3)),
            },
            AgentEvent::TurnFinished {
                usage: Usage::new(12, 3),
                num_turns: 1
            },
        ]
    );
    assert_eq!(result.end, RunEnd::Completed);
    assert_eq!(result.text, "Hello there.");
    assert_eq!(result.num_turns, 1);
    assert_eq!(setup.agent.history().len(), 2, "the prompt and the answer");
}

#[tokio::test]
async fn a_tool_call_begins_ends_with_its_result_and_the_model_reads_it() {
    let server = MockServer::start(vec![
        Reply::tool_calls(vec![("c1", "read_file", json!({"path": "a.txt"}))]),
        Reply::text("It says hi."),
    ])
    .await;
    let mut setup = agent(&server, PermissionMode::Default);
    std::fs::write(setup.root.path().join("a.txt"), "hi\n").unwrap_or_else(|e| panic!("{e}"));
    let sink = Recorder::default();
    let result = run(&mut setup, "read a.txt", &sink, &NonInteractive).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let sent = tool_messages(&requests[1]);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, "c1");
    assert!(sent[0].1.contains("hi"), "{}", sent[0].1);
    assert_eq!(
        sink.events(),
        vec![
            AgentEvent::RequestStarted { turn: 1 },
            AgentEvent::AssistantMessage {
                text: String::new(),
                usage: None,
            },
            AgentEvent::ToolCallBegin {
                id: "c1".into(),
                name: "read_file".into(),
                input: json!({"path": "a.txt"}),
            },
            AgentEvent::ToolCallEnd {
                id: "c1".into(),
                name: "read_file".into(),
                content: sent[0].1.clone(),
                is_error: false,
                display: None,
                total_lines: None,
                told: None,
            },
            AgentEvent::RequestStarted { turn: 2 },
            AgentEvent::TextDelta("It says hi.".into()),
            AgentEvent::AssistantMessage {
                text: "It says hi.".into(),
                usage: None,
            },
            AgentEvent::TurnFinished {
                usage: Usage::default(),
                num_turns: 2
            },
        ]
    );
    assert_eq!((result.end, result.num_turns), (RunEnd::Completed, 2));
}

/// Answers every question with `answer`, and remembers what it was asked.
struct Answering {
    answer: Approval,
    asked: Mutex<Vec<ApprovalRequest>>,
}

#[async_trait]
impl Approver for Answering {
    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval> {
        self.asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(request.clone());
        Some(self.answer.clone())
    }
}

/// The `ToolCallEnd` of the run's one call: (content, is_error).
fn call_end(events: &[AgentEvent]) -> (String, bool) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCallEnd {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no ToolCallEnd in {events:?}"))
}

#[tokio::test]
async fn a_denied_call_is_an_error_result_and_the_file_is_not_written() {
    let write = || {
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "x.txt", "content": "x"}),
        )])
    };
    // Nobody to ask: denied with the flag that would allow it, and the user is told.
    let server = MockServer::start(vec![write(), Reply::text("ok")]).await;
    let mut setup = agent(&server, PermissionMode::Default);
    let sink = Recorder::default();
    run(&mut setup, "write", &sink, &NonInteractive).await;
    let why = "write_file needs approval, and this run is non-interactive, so it was denied; \
               to allow it, rerun with --allowed-tools 'write_file' or --permission-mode \
               accept-edits";
    assert_eq!(
        sink.events(),
        vec![
            AgentEvent::RequestStarted { turn: 1 },
            AgentEvent::AssistantMessage {
                text: String::new(),
                usage: None,
            },
            AgentEvent::ToolCallBegin {
                id: "w1".into(),
                name: "write_file".into(),
                input: json!({"path": "x.txt", "content": "x"}),
            },
            AgentEvent::PermissionDenied {
                tool: "write_file".into(),
                message: why.into(),
            },
            AgentEvent::ToolCallEnd {
                id: "w1".into(),
                name: "write_file".into(),
                content: format!(
                    "permission denied: {why}. Tell the user what you wanted to do instead of \
                     retrying."
                ),
                is_error: true,
                display: None,
                total_lines: None,
                told: None,
            },
            AgentEvent::RequestStarted { turn: 2 },
            AgentEvent::TextDelta("ok".into()),
            AgentEvent::AssistantMessage {
                text: "ok".into(),
                usage: None,
            },
            AgentEvent::TurnFinished {
                usage: Usage::default(),
                num_turns: 2
            },
        ]
    );
    assert!(!setup.root.path().join("x.txt").exists());

    // The user says no: the run ends there, with no further model request.
    let server = MockServer::start(vec![write(), Reply::text("ok")]).await;
    let mut setup = agent(&server, PermissionMode::Default);
    let sink = Recorder::default();
    let user = Answering {
        answer: Approval::Deny,
        asked: Mutex::default(),
    };
    let result = run(&mut setup, "write", &sink, &user).await;
    assert_eq!(result.end, RunEnd::Declined);
    let asked = user.asked.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool, "write_file");
    assert_eq!(asked[0].session_rule, "write_file");
    assert_eq!(
        call_end(&sink.events()),
        (
            "the user denied permission to run write_file and ended this turn. Do not retry it \
             unchanged; wait for the user's next message."
                .into(),
            true
        )
    );
    assert_eq!(
        server.requests().len(),
        1,
        "a model request after the user said no"
    );
    // The model reads the denial with the user's next prompt.
    run(&mut setup, "never mind", &sink, &user).await;
    let sent = tool_messages(&server.requests()[1]);
    assert!(sent[0].1.starts_with("Error: the user denied"), "{sent:?}");
    assert!(!setup.root.path().join("x.txt").exists());
}

/// A recorder that cancels the returned token `after` the first event `when` accepts.
fn cancelling_on(when: fn(&AgentEvent) -> bool, after: Duration) -> (Recorder, CancellationToken) {
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    let sink = Recorder {
        on: Some(Box::new(move |event| {
            if when(event) {
                let token = token.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(after).await;
                    token.cancel();
                });
            }
        })),
        ..Recorder::default()
    };
    (sink, cancel)
}

/// A run that `cancel` ends: it must end well before anything scripted would have.
async fn interrupted_run(
    setup: &mut Setup,
    prompt: &str,
    sink: &Recorder,
    cancel: &CancellationToken,
) {
    let started = std::time::Instant::now();
    let result = run_with(setup, prompt, sink, &NonInteractive, cancel).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result.end, RunEnd::Interrupted);
}

#[tokio::test]
async fn cancelling_during_the_request_ends_the_run_as_interrupted() {
    let server =
        MockServer::start(vec![Reply::text("too late").delay(Duration::from_secs(20))]).await;
    // The cancel may come before the request reaches the server.
    server.allow_unasked(1);
    let mut setup = agent(&server, PermissionMode::Default);
    let (sink, cancel) = cancelling_on(
        |event| matches!(event, AgentEvent::RequestStarted { .. }),
        Duration::ZERO,
    );
    interrupted_run(&mut setup, "hi", &sink, &cancel).await;
    assert_eq!(
        sink.events(),
        vec![
            AgentEvent::RequestStarted { turn: 1 },
            AgentEvent::TurnFinished {
                usage: Usage::default(),
                num_turns: 1
            },
        ]
    );
}

#[tokio::test]
async fn cancelling_during_a_tool_interrupts_it_and_the_history_stays_whole() {
    let server = MockServer::start(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({"command": "sleep 20"}))]),
        Reply::text("next"),
    ])
    .await;
    let mut setup = agent(&server, PermissionMode::Bypass);
    // Once the command is running.
    let (sink, cancel) = cancelling_on(
        |event| matches!(event, AgentEvent::ToolCallBegin { .. }),
        Duration::from_millis(300),
    );
    interrupted_run(&mut setup, "sleep", &sink, &cancel).await;
    let (content, is_error) = call_end(&sink.events());
    assert!(is_error, "{content}");
    assert!(content.contains("interrupted"), "{content}");
    assert_eq!(server.requests().len(), 1, "no request after the interrupt");
    // Every tool call of the history has its tool message, so the next run's request is valid.
    let history: Vec<Value> = setup
        .agent
        .history()
        .iter()
        .map(|m| serde_json::to_value(m).unwrap_or_default())
        .collect();
    let tool_ids: Vec<&str> = history
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(tool_ids, ["b1"], "{history:?}");
    let sink = Recorder::default();
    let next = run(&mut setup, "again", &sink, &NonInteractive).await;
    assert_eq!(next.end, RunEnd::Completed);
    assert_eq!(next.text, "next");
}
