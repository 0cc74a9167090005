//! The agent's side of the shell sandbox: which policy a `bash` call runs in (the run's mode,
//! `read-only` in plan mode), and, when somebody can be asked, the questions about one
//! command: to run it once outside when the sandbox stopped it, and to keep it running in the
//! background when it reached its timeout.

use serde_json::Value;

use super::call_result::CallResult;
use super::turn::Turn;
use super::{Agent, Approval, ApprovalRequest};
use crate::config::Access;
use crate::llm::ToolCall;
use crate::tools::{Tool, ToolError, ToolOutput};

impl Agent {
    /// A `bash` command reached its timeout: asks whether it goes on in the background
    /// (yes) or is killed as usual (no, or nobody answers).
    pub(super) async fn keep_in_background(
        &self,
        command: &str,
        call: &ToolCall,
        turn: &Turn<'_>,
    ) -> bool {
        let request = ApprovalRequest {
            tool: "bash".to_string(),
            tool_use_id: call.id.clone(),
            input: serde_json::json!({ "command": command }),
            // Never remembered: "always" counts as once.
            session_rule: String::new(),
            reason: Some(
                "it reached its timeout; keep it running in the background (yes) or kill it (no)?"
                    .to_string(),
            ),
            preview: None,
            agent: None,
        };
        let answer = {
            let _asking = self.host.approval_turn.lock().await;
            turn.approver.approve(&request).await
        };
        matches!(answer, Some(Approval::Once | Approval::Always))
    }

    /// A command the sandbox stopped: asks whether to run it once outside (never in plan
    /// mode); yes runs it again without the sandbox, no keeps the blocked result.
    pub(super) async fn outside_sandbox(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        input: &Value,
        output: ToolOutput,
        turn: &Turn<'_>,
    ) -> CallResult {
        let blocked = output.sandbox_blocked.clone().unwrap_or_default();
        let kept = CallResult {
            content: output.content,
            is_error: false,
            display: output.display,
            total_lines: output.total_lines,
            told: None,
            images: output.images,
            decision: "accept",
        };
        // A mode that refuses what runs outside the sandbox never offers it (plan).
        let mode = self.host.lock_permissions().mode();
        if matches!(mode.meaning().runs, Access::Deny(_)) {
            return kept;
        }
        let request = ApprovalRequest {
            tool: tool.name().to_string(),
            tool_use_id: call.id.clone(),
            input: input.clone(),
            // Never remembered: "always" counts as once.
            session_rule: String::new(),
            reason: Some(format!(
                "the sandbox blocked {blocked}; run it once outside the sandbox?"
            )),
            preview: None,
            agent: None,
        };
        let answer = {
            let _asking = self.question_turn(turn).await;
            turn.approver.approve(&request).await
        };
        if !matches!(answer, Some(Approval::Once | Approval::Always)) {
            return kept;
        }
        let mut ctx = self
            .host
            .tool_context(&self.options, &self.llm, turn.cancel);
        ctx.sandbox = None;
        match self
            .call_tool_in(tool, call, input.clone(), turn, ctx)
            .await
        {
            Ok(output) => CallResult {
                content: output.content,
                is_error: false,
                display: output.display,
                total_lines: output.total_lines,
                told: None,
                images: output.images,
                decision: "accept",
            },
            Err(e @ ToolError::Interrupted) | Err(e @ ToolError::Failed(_)) => CallResult {
                content: e.to_string(),
                is_error: true,
                display: None,
                total_lines: None,
                told: None,
                images: Vec::new(),
                decision: "accept",
            },
        }
    }
}
