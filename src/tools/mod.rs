//! The `Tool` trait every tool implements (builtin and MCP alike), the registry the agent
//! dispatches through, the six builtin tools of `docs/tools.md`, and the two that reach the
//! web (`web_fetch`, `web_search`), offered as the settings say.
//!
//! Tools know nothing of the agent: they get typed arguments and a [`ToolContext`], and return a
//! [`ToolOutput`] or a [`ToolError`] the model reads.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::schema::{for_each_subschema, simplify_types};
use crate::media::{ImageRef, ImageStore};
use crate::process::ChildEnv;
use crate::process::sandbox::Policy;
use crate::web::HostRules;

/// What a tool does, which decides the permission column of `docs/tools.md` it falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Reads only: always allowed; may run concurrently with other reads of one response.
    Read,
    /// Changes files: asks in `default`, allowed in `accept-edits`.
    Edit,
    /// Runs something (bash, MCP tools): asks in `default` and `accept-edits`.
    Execute,
    /// Reaches outside the machine (`web_fetch`, `web_search`): asks in every mode but
    /// `bypass` unless a rule allows it; may run concurrently like a read.
    Web,
}

/// Everything a tool may use while it runs.
#[derive(Clone)]
pub struct ToolContext {
    /// The project root: relative paths resolve against it, and file tools stay inside it.
    pub root: PathBuf,
    /// False in `bypass` mode: file tools may then leave the project root.
    pub confine_to_root: bool,
    /// Cancelled when the user interrupts the turn.
    pub cancel: CancellationToken,
    /// Files the session has read (or written), so `write_file` can refuse blind overwrites.
    pub read_files: Arc<Mutex<HashSet<PathBuf>>>,
    /// Receives progress messages from long-running tools (MCP progress notifications).
    pub progress: Option<Arc<dyn Fn(String) + Send + Sync>>,
    /// Receives the last line a running command printed (the REPL's spinner shows it), at
    /// most a few times a second.
    pub output_line: Option<Arc<dyn Fn(String) + Send + Sync>>,
    /// What the `bash` tool's shell starts with (no API key variable; tied to Ling's life).
    pub child_env: ChildEnv,
    /// The shell sandbox of the `bash` tool's commands; `None`: none.
    pub sandbox: Option<Policy>,
    /// Directories besides the root the file tools may work in (`--add-dir`), canonical.
    pub extra_roots: Vec<PathBuf>,
    /// What no sandboxed command may read (`sandbox.denyRead` and its defaults): `grep` and
    /// `glob` leave it out of their walks (reading one such path by name asks first).
    pub hidden: Arc<[PathBuf]>,
    /// Where the file tools read and write file text (the local disk unless a front end
    /// offers its own, as an ACP editor does).
    pub files: Arc<dyn FileAccess>,
    /// Where `bash` runs its commands instead of a child of Ling (an ACP editor's terminals).
    pub shell_host: Option<Arc<dyn ShellHost>>,
    /// The session's background commands (`run_in_background`, `bash_output`, `kill_shell`);
    /// `None`: there are none here (a tool run outside a session).
    pub shells: Option<Shells>,
    /// Asks the user whether a `bash` command that reached its timeout goes on in the
    /// background instead of being killed (the answer comes on the receiver); `None`: nobody
    /// can be asked, and it is killed.
    pub on_timeout: Option<TimeoutAsk>,
    /// The id of the tool call being run, when it has one.
    pub call_id: Option<String>,
    /// Where images a tool returns are kept (`LING_HOME/images`); `None`: images are refused
    /// like other binary files.
    pub images: Option<ImageStore>,
    /// What the permission rules say about web hosts (`web_fetch(domain:...)`), for the
    /// redirects and addresses `web_fetch` meets.
    pub web_rules: HostRules,
    /// The model, for a tool's own small request (`web_fetch`'s `prompt`, a native search).
    pub model: Option<Arc<dyn ModelAccess>>,
    /// What the caller lends the tools it made itself: the agent's own tools (`task`, `skill`)
    /// find their line back to the agent and its turn here. Tools know nothing of the agent,
    /// so it has no type here; a tool of its own never looks.
    pub caller: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// The session's id (a skill's `${CLAUDE_SESSION_ID}`); empty outside a session.
    pub session_id: String,
}

impl ToolContext {
    pub fn new(root: PathBuf) -> Self {
        Self {
            root,
            confine_to_root: true,
            cancel: CancellationToken::new(),
            read_files: Arc::default(),
            progress: None,
            output_line: None,
            child_env: ChildEnv::default(),
            sandbox: None,
            extra_roots: Vec::new(),
            hidden: Arc::new([]),
            files: Arc::new(LocalFiles),
            shell_host: None,
            shells: None,
            on_timeout: None,
            call_id: None,
            images: None,
            web_rules: HostRules::default(),
            model: None,
            caller: None,
            session_id: String::new(),
        }
    }
}

/// How a tool asks whether a command past its timeout may go on in the background: given the
/// command, the answer comes on the receiver (dropped: no).
pub type TimeoutAsk = Arc<dyn Fn(String) -> tokio::sync::oneshot::Receiver<bool> + Send + Sync>;

/// Whether `path` is `hidden` or beneath one of them.
pub fn is_hidden(hidden: &[PathBuf], path: &std::path::Path) -> bool {
    hidden.iter().any(|h| path.starts_with(h))
}

/// A successful tool result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// What the model reads.
    pub content: String,
    /// What the user sees beside the one-line summary, when it differs (an edit's diff).
    pub display: Option<String>,
    /// What the shell sandbox stopped, when a `bash` command failed on it (the user may be
    /// offered to run it once outside).
    pub sandbox_blocked: Option<String>,
    /// How many lines the output really had, when `content` holds only part of them (a
    /// command's output cut to its head and tail).
    pub total_lines: Option<usize>,
    /// Images for the model besides the text (`read_file` of a picture).
    pub images: Vec<ImageRef>,
}

impl ToolOutput {
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }
}

/// A failed tool call. The message is what the model reads, so it says what to do differently.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    Failed(String),
    #[error("interrupted by the user")]
    Interrupted,
}

impl ToolError {
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }
}

#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls.
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON Schema of the arguments (an object with `properties`).
    fn input_schema(&self) -> Value;
    fn kind(&self) -> ToolKind;
    /// An MCP tool whose server annotated it `readOnlyHint` (allowed in `plan` mode).
    fn read_only_hint(&self) -> bool {
        self.kind() == ToolKind::Read
    }
    /// The file a call reads when it is not named by a `path` argument (a skill's file), so
    /// that reading a hidden path asks (the permission check). `None`: none, or the
    /// `path` argument says.
    fn reads_file(&self, _input: &Value) -> Option<PathBuf> {
        None
    }
    /// True when the tool cuts its own output (and says where the rest is), so the agent's
    /// general cap must not cut it again.
    fn caps_own_output(&self) -> bool {
        false
    }
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
    /// What the call would change, shown before the user approves it (an edit's diff). `None`
    /// when there is nothing to show or the call would fail anyway (it then reports why).
    async fn preview(&self, _input: &Value, _ctx: &ToolContext) -> Option<String> {
        None
    }
    /// The checks of `call` that would refuse this input, run without changing anything: the
    /// agent runs them before asking the user, so nobody approves a call bound to fail (an
    /// edit of a file never read, of a string that is not there).
    async fn precheck(&self, _input: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }
}

/// The JSON Schema of a tool's typed arguments, derived from its serde struct (field doc comments
/// become descriptions, `#[schemars(range(...))]` the bounds), in the shape OpenAI-compatible
/// function calling expects: an object with `properties`, `required` and, since every `Args`
/// struct denies unknown fields, `additionalProperties: false`; subschemas inlined, and none of
/// the `$schema`, `title`, `default`, integer `format` or `null` types some servers refuse (the
/// descriptions say the defaults). An optional argument is one the model leaves out, so its
/// schema does not offer `null`.
pub fn args_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    for_each_subschema(&mut schema, &mut |object| {
        for key in ["title", "default", "$schema"] {
            object.shift_remove(key);
        }
        simplify_types(object);
    });
    if let Some(root) = schema.as_object_mut() {
        root.entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        // Last, as the hand-written schemas had it: type, properties, required, then this.
        if let Some(additional) = root.shift_remove("additionalProperties") {
            root.insert("additionalProperties".into(), additional);
        }
    }
    schema
}

/// Parses a tool's JSON arguments into its typed struct; a mismatch is a tool error that names the
/// problem, so the model can fix its call.
pub fn parse_args<T: DeserializeOwned>(tool: &str, input: Value) -> Result<T, ToolError> {
    serde_json::from_value(input)
        .map_err(|e| ToolError::Failed(format!("invalid arguments for {tool}: {e}")))
}

/// All tools the model can call, by name: the builtins plus whatever MCP servers offer.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The six builtin tools of `docs/tools.md`.
    pub fn builtins() -> Self {
        let mut registry = Self::new();
        builtin::register_all(&mut registry);
        registry
    }

    /// Only the tools named in `keep` (Claude Code's `--tools`), in this registry's order.
    pub fn only(mut self, keep: &[String]) -> Self {
        self.tools.retain(|t| keep.iter().any(|k| k == t.name()));
        self
    }

    /// Adds a tool; one with the same name is replaced.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    /// Keeps only the tools `keep` says yes to.
    pub fn retain(&mut self, keep: impl FnMut(&Arc<dyn Tool>) -> bool) {
        self.tools.retain(keep);
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_string()).collect()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

pub mod background;
pub mod bash;
mod bash_group;
mod bash_start;
mod beneath;
mod builtin;
pub mod diff;
pub mod edit_file;
mod file_access;
mod files;
pub mod glob;
pub mod grep;
mod model_access;
mod output;
pub mod paths;
pub mod pdf_text;
pub mod read_file;
mod shell_host;
pub mod web_fetch;
pub mod web_search;
pub mod write_file;

pub use background::{Shells, TaskInfo, TaskState};
pub use file_access::{FileAccess, LocalFiles};
pub use files::check_write_path;
pub use model_access::{Cited, ModelAccess, ModelError};
pub use shell_host::{HostedCommand, HostedRun, ShellHost};
pub use web_fetch::WebFetch;
pub use web_search::WebSearch;

#[cfg(test)]
mod schema_tests;
