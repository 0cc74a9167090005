//! `bash_output` and `kill_shell`: the model's two handles on its background commands (Claude
//! Code's `BashOutput` and `KillShell`). Both only touch what the session's own `bash` calls
//! started, so they are allowed in every mode, like a read.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Shell, Shells, TaskState};
use crate::tools::bash_start::OUTPUT_CAP;
use crate::tools::output::CappedOutput;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args};

/// How long `kill_shell` waits for the group to be gone before it answers anyway.
const KILL_WAIT: Duration = Duration::from_secs(3);

const OUTPUT_DESCRIPTION: &str = "Reads what a background command (started with `bash` and \
`run_in_background: true`) printed since the last read, and its state: running, exited N or \
killed. `filter` (a regular expression) keeps only the matching lines; the others are consumed \
too. Output over 30000 characters is cut in the middle, and a command that printed more than \
the memory keeps says so: its whole output is in the file named in the result, which read_file \
can read.";

const KILL_DESCRIPTION: &str = "Ends a background command started with `bash` and \
`run_in_background: true`, with everything it started (its process group).";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OutputArgs {
    /// The background command's id (`bash_1`), as `bash` said when it started it
    #[serde(alias = "bash_id")]
    id: String,
    /// A regular expression: only the lines matching it are returned
    #[serde(default)]
    filter: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct KillArgs {
    /// The background command's id (`bash_1`)
    #[serde(alias = "shell_id")]
    id: String,
}

pub struct BashOutput;

pub struct KillShell;

/// The command `id` names, or an error listing those there are.
fn find(ctx: &ToolContext, id: &str) -> Result<std::sync::Arc<Shell>, ToolError> {
    let shells = ctx
        .shells
        .as_ref()
        .ok_or_else(|| ToolError::failed("background commands are not available here"))?;
    shells.get(id).ok_or_else(|| unknown(shells, id))
}

fn unknown(shells: &Shells, id: &str) -> ToolError {
    let ids = shells.ids();
    let listed = if ids.is_empty() {
        "none was started in this session".to_string()
    } else {
        format!("there are {}", ids.join(", "))
    };
    ToolError::failed(format!("no background command has the id {id:?}; {listed}"))
}

#[async_trait]
impl Tool for BashOutput {
    fn name(&self) -> &str {
        "bash_output"
    }

    fn description(&self) -> &str {
        OUTPUT_DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        args_schema::<OutputArgs>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn caps_own_output(&self) -> bool {
        true
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: OutputArgs = parse_args(self.name(), input)?;
        let filter = match args.filter.as_deref().filter(|f| !f.is_empty()) {
            Some(f) => Some(regex::Regex::new(f).map_err(|e| {
                ToolError::failed(format!("filter is not a valid regular expression: {e}"))
            })?),
            None => None,
        };
        let shell = find(ctx, &args.id)?;
        let (unread, state) = {
            let mut output = shell.lock();
            let unread = output.ring.since(output.read_to);
            output.read_to = output.ring.total();
            (unread, output.state.clone())
        };
        let mut content = format!(
            "id: {}\nstate: {state}\noutput file: {} (the whole output; read_file reads it)\n",
            shell.id,
            shell.output_file.display()
        );
        if unread.missed > 0 {
            content.push_str(&format!(
                "({} bytes printed since the last read left memory before this read; they are \
                 in the output file)\n",
                unread.missed
            ));
        }
        let text = String::from_utf8_lossy(&unread.bytes);
        let text = match &filter {
            Some(filter) => text
                .lines()
                .filter(|line| filter.is_match(line))
                .flat_map(|line| [line, "\n"])
                .collect::<String>(),
            None => text.into_owned(),
        };
        let mut capped = CappedOutput::new(OUTPUT_CAP);
        capped.push(text.as_bytes());
        let text = capped.finish();
        if text.is_empty() {
            content.push_str(match filter {
                Some(_) => "(no new output matched the filter)",
                None => "(no new output)",
            });
        } else {
            content.push_str(&text);
        }
        Ok(ToolOutput::text(content))
    }
}

#[async_trait]
impl Tool for KillShell {
    fn name(&self) -> &str {
        "kill_shell"
    }

    fn description(&self) -> &str {
        KILL_DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        args_schema::<KillArgs>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: KillArgs = parse_args(self.name(), input)?;
        let shell = find(ctx, &args.id)?;
        let before = shell.lock().state.clone();
        shell.kill.cancel();
        let _ = tokio::time::timeout(KILL_WAIT, shell.done.cancelled()).await;
        let after = shell.lock().state.clone();
        Ok(ToolOutput::text(match before {
            TaskState::Running => format!(
                "id: {}\nstate: {after}\nkilled `{}` and everything it started",
                shell.id, shell.command
            ),
            ended => format!(
                "id: {}\nstate: {ended}\nit had already ended; whatever it left running was \
                 ended",
                shell.id
            ),
        }))
    }
}
