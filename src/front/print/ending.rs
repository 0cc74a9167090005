//! How one run of the agent ended, and the `result` object that says so: Ling's own (of
//! `--output-format ling-stream-json`) and Claude Code's (of `json` and `stream-json`, which is
//! Ling's with Claude's fields added).

use serde_json::Value;

use super::lines::Subtype;
use crate::config::Price;
use crate::front::print::claude::messages::{self, ResultMessage, ResultSubtype};
use crate::llm::Usage;
use crate::session::{AgentError, GoalOutcome, RunEnd, RunResult};
use crate::ui::RunOutcome;
use crate::ui::signals;

/// How the run ended, as the `result` object and the outcome say it.
pub struct Ending {
    pub subtype: Subtype,
    pub text: String,
    pub outcome: RunOutcome,
    pub num_turns: u32,
    /// How `--until`'s check went, when there was one.
    pub goal: Option<GoalOutcome>,
    /// The answer's value, when a schema asked for one and it matched (`structured_output`).
    pub structured: Option<Value>,
}

impl Ending {
    pub fn error(text: impl Into<String>, outcome: RunOutcome, num_turns: u32) -> Self {
        Self {
            subtype: Subtype::ErrorDuringExecution,
            text: text.into(),
            outcome,
            num_turns,
            goal: None,
            structured: None,
        }
    }

    /// With `--until`: a check that never passed makes a run that otherwise ended well (or at
    /// its turn limit) exit 3, the code CI can tell from a failure of the run itself.
    pub fn with_goal(mut self, goal: Option<GoalOutcome>) -> Self {
        if let Some(goal) = &goal
            && !goal.passed
            && matches!(self.outcome, RunOutcome::Success | RunOutcome::Failed)
            && matches!(self.subtype, Subtype::Success | Subtype::ErrorMaxTurns)
        {
            self.outcome = RunOutcome::CheckFailed;
        }
        self.goal = goal;
        self
    }

    /// Ended by a signal (Ctrl-C, SIGTERM, SIGHUP).
    pub fn interrupted(num_turns: u32) -> Self {
        Self::error(
            "interrupted",
            RunOutcome::Interrupted(signals::received()),
            num_turns,
        )
    }

    pub fn is_error(&self) -> bool {
        self.subtype != Subtype::Success
    }

    /// What the agent's run came to. `default_turn_limit`: the limit was `-p`'s default (the
    /// message says so); `interrupted`: how an interrupted run ends.
    pub fn of(
        result: Result<RunResult, AgentError>,
        default_turn_limit: bool,
        total_turns: u32,
        interrupted: impl FnOnce(u32) -> Self,
    ) -> Self {
        let run = match result {
            Ok(run) => run,
            Err(e) => return Self::error(e.to_string(), RunOutcome::Failed, total_turns),
        };
        match run.end {
            RunEnd::Completed => Self {
                subtype: Subtype::Success,
                text: run.text,
                outcome: RunOutcome::Success,
                num_turns: run.num_turns,
                goal: None,
                structured: None,
            },
            RunEnd::MaxTurns => Self {
                subtype: Subtype::ErrorMaxTurns,
                text: max_turns_message(run.num_turns, run.requests, default_turn_limit),
                outcome: RunOutcome::Failed,
                num_turns: run.num_turns,
                goal: None,
                structured: None,
            },
            RunEnd::MaxBudget(reason) => Self {
                subtype: Subtype::ErrorMaxBudgetUsd,
                text: reason,
                outcome: RunOutcome::Failed,
                num_turns: run.num_turns,
                goal: None,
                structured: None,
            },
            RunEnd::Interrupted => interrupted(run.num_turns),
            RunEnd::Stopped(reason) | RunEnd::PromptBlocked(reason) => {
                Self::error(reason, RunOutcome::Failed, run.num_turns)
            }
            // Nobody is asked in `-p`; an approver that declines ends the run as a failure.
            RunEnd::Declined => Self::error(
                String::from("a tool call was declined"),
                RunOutcome::Failed,
                run.num_turns,
            ),
        }
    }
}

/// The stderr line of a text run with `--until`.
pub fn goal_summary(goal: &GoalOutcome) -> String {
    let rounds = match goal.rounds {
        1 => "1 round".to_string(),
        n => format!("{n} rounds"),
    };
    if goal.passed {
        format!("--until: the check passed after {rounds}")
    } else {
        format!(
            "--until: the check `{}` never passed ({rounds}); exit 3",
            goal.command
        )
    }
}

/// The `until` object of the result line: `{"command", "rounds", "passed"}`.
pub fn goal_json(goal: &GoalOutcome) -> Value {
    serde_json::json!({
        "command": goal.command,
        "rounds": goal.rounds,
        "passed": goal.passed,
    })
}

/// Why a run stopped at its turn limit, and how to raise it. `requests`: the run's requests
/// counting its sub-agents', of which the agent made `turns`.
fn max_turns_message(turns: u32, requests: u32, default_limit: bool) -> String {
    let which = if default_limit {
        "the default limit of a -p run"
    } else {
        "the limit set by --max-turns or settings `maxTurns`"
    };
    let by_children = requests.saturating_sub(turns);
    let made = if by_children > 0 {
        format!("{requests} model requests, {by_children} of them by sub-agents")
    } else {
        format!("{turns} model requests")
    };
    format!(
        "stopped after {made} ({which}) before the model finished; raise it with --max-turns N \
         or settings `maxTurns`"
    )
}

/// What Claude Code's `result` needs beyond the ending.
pub struct ResultFacts<'a> {
    pub session_id: &'a str,
    pub duration_ms: u64,
    /// Time spent waiting for the model.
    pub api_ms: u64,
    /// Tokens of this run.
    pub usage: Usage,
    pub model: &'a str,
    /// The model's price (settings `prices`), for `total_cost_usd`.
    pub price: Option<Price>,
    pub context_window: u64,
    pub denials: &'a [Value],
    pub mcp_servers: &'a [Value],
    pub project_trust: &'static str,
}

/// Claude Code's `result` for `ending`.
pub fn claude_result(ending: &Ending, facts: &ResultFacts<'_>) -> Value {
    let cost = facts
        .price
        .map(|p| crate::ui::render::cost(facts.usage, p))
        .unwrap_or(0.0);
    let subtype = match ending.subtype {
        Subtype::Success => ResultSubtype::Success,
        Subtype::ErrorMaxTurns => ResultSubtype::ErrorMaxTurns,
        Subtype::ErrorMaxBudgetUsd => ResultSubtype::ErrorMaxBudgetUsd,
        Subtype::ErrorDuringExecution => ResultSubtype::ErrorDuringExecution,
        Subtype::ErrorMaxStructuredOutputRetries => ResultSubtype::ErrorMaxStructuredOutputRetries,
    };
    let message = ResultMessage {
        kind: "result",
        subtype,
        is_error: ending.is_error(),
        duration_ms: facts.duration_ms,
        duration_api_ms: facts.api_ms,
        num_turns: ending.num_turns,
        result: &ending.text,
        stop_reason: match ending.subtype {
            Subtype::Success | Subtype::ErrorMaxStructuredOutputRetries => Some("end_turn"),
            Subtype::ErrorMaxTurns => Some("tool_use"),
            Subtype::ErrorMaxBudgetUsd | Subtype::ErrorDuringExecution => None,
        },
        session_id: facts.session_id,
        total_cost_usd: cost,
        cost_usd: facts.price.map(|_| cost),
        usage: messages::usage(facts.usage),
        model_usage: messages::model_usage(facts.model, facts.usage, cost, facts.context_window),
        permission_denials: facts.denials,
        errors: ending.is_error().then(|| vec![ending.text.as_str()]),
        uuid: messages::uuid(),
        mcp_servers: facts.mcp_servers,
        project_trust: facts.project_trust,
        structured_output: ending.structured.as_ref(),
    };
    let mut value = serde_json::to_value(message).unwrap_or_default();
    if let (Some(goal), Some(object)) = (&ending.goal, value.as_object_mut()) {
        object.insert("until".into(), goal_json(goal));
    }
    value
}
