//! What the session tools hand over their call line ([`super::call_line`]) and what comes
//! back: the to-do list of `todo_write`, the plan of `exit_plan_mode` with the user's
//! decision, the questions of `ask_user` with their answers. Plain data, below both the tools
//! and the line that carries it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::PermissionMode;

/// Where one item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

impl TodoStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }

    /// The item's mark in a listing: `☐` to do, `▸` under way, `☑` done.
    pub fn mark(self) -> &'static str {
        match self {
            Self::Pending => "☐",
            Self::InProgress => "▸",
            Self::Completed => "☑",
        }
    }
}

/// One item of the list, in Claude Code's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    /// What is to be done, in the imperative ("Run the tests").
    pub content: String,
    pub status: TodoStatus,
    /// The same in the present continuous ("Running the tests"), shown while it is in progress.
    #[serde(default)]
    pub active_form: String,
}

impl Todo {
    /// What the item says while it runs: its `activeForm`, else its content.
    pub fn doing(&self) -> &str {
        if self.active_form.trim().is_empty() {
            &self.content
        } else {
            &self.active_form
        }
    }
}

/// A plan for the user to approve.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    /// The plan, in markdown.
    pub plan: String,
    /// The call's id (the model's `tool_call_id`).
    pub tool_use_id: String,
}

/// What the user decided about a plan.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanAnswer {
    /// Approved: the work goes on in this mode (`default` or `accept-edits`).
    Approve(PermissionMode),
    /// Not yet: the model keeps planning, with the user's feedback when there is some (none:
    /// the turn ends and the model waits for the user's next message).
    KeepPlanning(Option<String>),
}

/// One choice of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionOption {
    /// What the user picks (1-5 words).
    pub label: String,
    /// What choosing it means.
    #[serde(default)]
    pub description: String,
}

/// One question, in Claude Code's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    /// The whole question, ending with a question mark.
    pub question: String,
    /// A very short label for it (at most 12 characters): "Library", "Approach".
    #[serde(default)]
    pub header: String,
    /// Two to four distinct choices; "other" (the user's own words) is always offered too.
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multi_select: bool,
}

/// Questions for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionRequest {
    pub questions: Vec<Question>,
    /// The call's id (the model's `tool_call_id`).
    pub tool_use_id: String,
}

/// What the user answered.
#[derive(Debug, Clone, PartialEq)]
pub enum QuestionAnswer {
    /// Each question's text with its answer (the chosen label, labels joined by `, `, or the
    /// user's own words), in the order asked.
    Answered(Vec<(String, String)>),
    /// The user chose not to answer.
    Declined,
}
