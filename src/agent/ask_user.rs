//! The `ask_user` tool (Claude Code's `AskUserQuestion`): one to four multiple-choice questions,
//! each with a short `header`, two to four options (`label`, `description`) and `multiSelect`;
//! the user may also answer in their own words ("other"). The questions go to the turn's
//! approver over the call's line ([`CallLine::questions`]); the answers come back as Claude
//! returns them (each question with its chosen label, labels joined by `, ` for several, or
//! the user's own text). The user may decline (Esc): the result says so and nothing is chosen
//! for them. With nobody to ask (`-p` without a driver) the call is refused.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

pub use super::asks::{Question, QuestionAnswer, QuestionOption, QuestionRequest};
use super::call_line::CallLine;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args};

pub const ASK_USER: &str = "ask_user";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// One to four questions.
    questions: Vec<Question>,
}

/// Why the questions cannot be asked, or `None`.
fn invalid(questions: &[Question]) -> Option<String> {
    if questions.is_empty() || questions.len() > 4 {
        return Some(format!(
            "ask one to four questions at a time (got {})",
            questions.len()
        ));
    }
    for (i, q) in questions.iter().enumerate() {
        let n = i + 1;
        if q.question.trim().is_empty() {
            return Some(format!("question {n} has no text; put it in `question`"));
        }
        if q.options.len() < 2 || q.options.len() > 4 {
            return Some(format!(
                "question {n} has {} options; give two to four (\"other\" is offered by itself)",
                q.options.len()
            ));
        }
        if q.options.iter().any(|o| o.label.trim().is_empty()) {
            return Some(format!("an option of question {n} has no label"));
        }
        if questions[..i].iter().any(|p| p.question == q.question) {
            return Some(format!(
                "question {n} is asked twice; each must be distinct"
            ));
        }
    }
    None
}

/// The result the model reads, worded as Claude Code's.
pub fn answers_text(answers: &[(String, String)]) -> String {
    let pairs: Vec<String> = answers
        .iter()
        .map(|(q, a)| format!("\"{q}\"=\"{a}\""))
        .collect();
    format!(
        "User has answered your questions: {}. You can now continue with the user's answers in \
         mind.",
        pairs.join(", ")
    )
}

pub struct AskUser;

#[async_trait]
impl Tool for AskUser {
    fn name(&self) -> &str {
        ASK_USER
    }

    fn description(&self) -> &str {
        "Ask the user one to four multiple-choice questions when you need their decision \
         (which approach, which library, what to include). Each question has a short header and \
         two to four options with a label and a description; set multiSelect when several may \
         be chosen. The user can always answer in their own words instead, or decline."
    }

    fn input_schema(&self) -> Value {
        args_schema::<Args>()
    }

    fn kind(&self) -> ToolKind {
        // A question changes nothing: allowed in every mode, plan mode included.
        ToolKind::Read
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(ASK_USER, input)?;
        if let Some(why) = invalid(&args.questions) {
            return Err(ToolError::failed(why));
        }
        let Some(line) = CallLine::of(ctx) else {
            return Err(ToolError::failed("ask_user runs only inside an agent"));
        };
        let request = QuestionRequest {
            questions: args.questions,
            tool_use_id: ctx.call_id.clone().unwrap_or_default(),
        };
        match line.questions(request, false).await {
            Some(QuestionAnswer::Answered(answers)) => Ok(ToolOutput::text(answers_text(&answers))),
            Some(QuestionAnswer::Declined) => Ok(ToolOutput::text(
                "The user declined to answer these questions. Do not assume an answer: go on \
                 with what does not depend on it, or say in your reply what you need to know.",
            )),
            None if ctx.cancel.is_cancelled() => Err(ToolError::Interrupted),
            None => Err(ToolError::failed(
                "nobody can answer questions in this run (ling -p without a driver): decide \
                 on your own where you can, and say in your answer what you would have asked",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn questions(value: Value) -> Vec<Question> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn questions_are_checked_against_claude_s_bounds() {
        let two = json!([{"label": "a", "description": "x"}, {"label": "b"}]);
        let ok = questions(json!([{"question": "Q?", "header": "H", "options": two}]));
        assert!(ok[0].options[1].description.is_empty());
        assert_eq!(invalid(&ok), None);
        assert!(invalid(&[]).is_some_and(|w| w.contains("one to four")));
        let one = questions(json!([{"question": "Q?", "options": [{"label": "a"}]}]));
        assert!(invalid(&one).is_some_and(|w| w.contains("has 1 options")));
        let twice = questions(json!([
            {"question": "Q?", "options": two},
            {"question": "Q?", "options": two}
        ]));
        assert!(invalid(&twice).is_some_and(|w| w.contains("asked twice")));
    }

    #[test]
    fn answers_read_as_claude_s() {
        assert_eq!(
            answers_text(&[
                ("Which?".into(), "a".into()),
                ("More?".into(), "b, c".into())
            ]),
            "User has answered your questions: \"Which?\"=\"a\", \"More?\"=\"b, c\". You can now \
             continue with the user's answers in mind."
        );
    }
}
