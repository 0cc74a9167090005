//! The `exit_plan_mode` tool (Claude Code's `ExitPlanMode`): in plan mode the model hands the
//! user its plan (markdown), and the user chooses: approve and go on in `default` mode,
//! approve in `accept-edits`, or keep planning with feedback (which the model reads). The
//! question goes to the turn's approver over the call's line ([`CallLine::plan`]); an approval
//! sets the session's mode (the handle every front end and the status read) and is reported as
//! [`AgentEvent::ModeChanged`]. Offered only while the mode is `plan` ([`offered`]); with
//! nobody to ask (`-p` without a driver) the call is refused and the run stays in plan mode.
//!
//! [`AgentEvent::ModeChanged`]: super::AgentEvent::ModeChanged

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

pub use super::asks::{PlanAnswer, PlanRequest};
use super::call_line::CallLine;
use crate::config::PermissionMode;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args};

pub const EXIT_PLAN_MODE: &str = "exit_plan_mode";

/// Whether `exit_plan_mode` is offered to the model in `mode`: only while planning.
pub fn offered(mode: PermissionMode) -> bool {
    mode == PermissionMode::Plan
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The plan, in markdown: the steps, the files each changes, how it will be checked.
    plan: String,
}

pub struct ExitPlanMode;

#[async_trait]
impl Tool for ExitPlanMode {
    fn name(&self) -> &str {
        EXIT_PLAN_MODE
    }

    fn description(&self) -> &str {
        "In plan mode, when your plan is ready: hand it to the user for approval (markdown). \
         The user approves it (you then go on to do the work, out of plan mode) or asks you to \
         keep planning and says why. Use it only for a plan of changes to make, not for \
         research or questions."
    }

    fn input_schema(&self) -> Value {
        args_schema::<Args>()
    }

    fn kind(&self) -> ToolKind {
        // Plan mode allows it: it changes nothing by itself.
        ToolKind::Read
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(EXIT_PLAN_MODE, input)?;
        if args.plan.trim().is_empty() {
            return Err(ToolError::failed(
                "the plan is empty; give the whole plan in `plan` (markdown)",
            ));
        }
        let Some(line) = CallLine::of(ctx) else {
            return Err(ToolError::failed(
                "exit_plan_mode runs only inside an agent",
            ));
        };
        let request = PlanRequest {
            plan: args.plan,
            tool_use_id: ctx.call_id.clone().unwrap_or_default(),
        };
        match line.plan(request).await {
            Some(PlanAnswer::Approve(mode)) => Ok(ToolOutput::text(format!(
                "The user approved your plan. The permission mode is now {mode}: go on with \
                 the work, step by step (update the to-do list as you go if you keep one)."
            ))),
            Some(PlanAnswer::KeepPlanning(Some(feedback))) => Ok(ToolOutput::text(format!(
                "The user did not approve the plan yet: you are still in plan mode. Their \
                 feedback: {feedback}\nRevise the plan with it, then call exit_plan_mode again."
            ))),
            Some(PlanAnswer::KeepPlanning(None)) => {
                line.decline();
                Ok(ToolOutput::text(
                    "The user did not approve the plan: you are still in plan mode. Wait for \
                     the user's next message.",
                ))
            }
            None if ctx.cancel.is_cancelled() => Err(ToolError::Interrupted),
            None => Err(ToolError::failed(
                "nobody can approve a plan in this run (ling -p without a driver), so it stays \
                 in plan mode: give the plan as your answer instead; the user can run again \
                 with --permission-mode default or accept-edits to carry it out",
            )),
        }
    }
}
