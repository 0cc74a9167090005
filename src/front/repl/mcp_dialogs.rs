//! The REPL's side of MCP: the questions servers ask the user (approving a sampling request,
//! filling in an elicitation form field by field with defaults pre-filled and answers checked,
//! a URL to visit, shown and never opened), and the prompt commands `/mcp__<server>__<prompt>`
//! (listed in `/help`, expanded into the user message of a turn).
//!
//! A server cannot take the terminal away with a flood of questions (`dialog_queue`): they
//! queue and are asked one at a time, only while a turn runs (at the prompt they are declined,
//! so Ctrl-D and `/exit` always reach the REPL); each question offers "decline all from this
//! server"; and Ctrl-C or Ctrl-D at a question interrupts the turn and declines every question
//! still queued or still to come in it.

use async_trait::async_trait;
use serde_json::Map;

use super::view::ReplUi;
use crate::mcp::elicitation::{Choice, ElicitAnswer, FieldKind, Form, FormField};
use crate::mcp::prompts::{expand_prompt, prompt_commands};
use crate::mcp::sampling::SamplingRequest;
use crate::session::Host;
use crate::session::McpAsker;
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;
use crate::ui::term::Term;

/// Lines of each sampling message shown before the question.
const SHOWN_LINES: usize = 12;

/// The choice at every question that declines the rest of the server's questions too.
const DECLINE_ALL: &str = "decline-all";

/// One answer typed at a question; `None` when the user pressed Ctrl-C or Ctrl-D. The
/// pre-filled `initial` text (a server's default) is neutralised like the prompt.
async fn ask(prompt: Term, initial: Option<String>) -> Option<String> {
    let initial = initial.map(|text| Term::plain(&text));
    tokio::task::spawn_blocking(move || {
        let mut editor = rustyline::DefaultEditor::new().ok()?;
        let result = match &initial {
            Some(initial) => editor.readline_with_initial(prompt.as_str(), (initial.as_str(), "")),
            None => editor.readline(prompt.as_str()),
        };
        // Ctrl-C, Ctrl-D or a broken terminal all mean "no answer".
        result.ok()
    })
    .await
    .ok()
    .flatten()
}

/// Asks until one of `choices` (first letters) is typed; `None` on Ctrl-C / Ctrl-D.
async fn choose(prompt: &str, choices: &[&str]) -> Option<String> {
    loop {
        let line = ask(Term::plain(prompt), None).await?;
        let line = line.trim().to_lowercase();
        if let Some(choice) = choices
            .iter()
            .find(|c| line == **c || (line.len() == 1 && c.starts_with(&line)))
        {
            return Some(choice.to_string());
        }
    }
}

fn show_text(style: Style, label: &str, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().take(SHOWN_LINES).enumerate() {
        let head = if i == 0 { label } else { "" };
        stdout_line(term!["  ", style.dim(&format!("{head:>9}")), " ", *line]);
    }
    if lines.len() > SHOWN_LINES {
        stdout_line(term![
            "  ",
            style.dim(&format!(
                "          ... {} more lines",
                lines.len() - SHOWN_LINES
            ))
        ]);
    }
}

#[async_trait]
impl McpAsker for ReplUi {
    async fn approve_sampling(&self, server: &str, request: &SamplingRequest) -> bool {
        let Some(_asking) = self.dialogs.enter(server).await else {
            return false;
        };
        let style = self.style;
        let _floor = self.question().await;
        let limit = request
            .max_tokens
            .map(|n| format!(" (at most {n} tokens)"))
            .unwrap_or_default();
        stdout_line(term![
            style.yellow("?"),
            " MCP server ",
            style.bold(&super::approval::one_row(server)),
            format!(" asks to use the model{limit}:")
        ]);
        if let Some(system) = &request.system_prompt {
            show_text(style, "system:", system);
        }
        for message in &request.messages {
            show_text(style, &format!("{}:", message.role.as_str()), &message.text);
        }
        let prompt = "  send it to the model? [y] yes  [n] no  [d] decline all from this server > ";
        match choose(prompt, &["yes", "no", DECLINE_ALL]).await.as_deref() {
            Some("yes") => true,
            Some("no") => false,
            Some(_) => {
                self.dialogs.decline_server(server);
                false
            }
            None => {
                self.dismiss_questions();
                false
            }
        }
    }

    async fn fill_form(&self, server: &str, form: &Form) -> ElicitAnswer {
        let Some(_asking) = self.dialogs.enter(server).await else {
            return ElicitAnswer::Decline;
        };
        let style = self.style;
        let _floor = self.question().await;
        stdout_line(term![
            style.yellow("?"),
            " MCP server ",
            style.bold(&super::approval::one_row(server)),
            " asks: ",
            &form.message
        ]);
        let prompt =
            "  [y] fill in the form  [n] decline  [c] cancel  [d] decline all from this server > ";
        match self.choose_or_dismiss(server, prompt).await {
            Some("yes") => {}
            Some(answer) => return answer_of(answer),
            None => return ElicitAnswer::Cancel,
        }
        let mut content = Map::new();
        for field in &form.fields {
            match ask_field(style, field).await {
                FieldAnswer::Value(value) => {
                    content.insert(field.name.clone(), value);
                }
                FieldAnswer::Skipped => {}
                FieldAnswer::Cancelled => {
                    self.dismiss_questions();
                    return ElicitAnswer::Cancel;
                }
            }
        }
        ElicitAnswer::Accept(content)
    }

    async fn show_url(&self, server: &str, message: &str, url: &str) -> ElicitAnswer {
        let Some(_asking) = self.dialogs.enter(server).await else {
            return ElicitAnswer::Decline;
        };
        let style = self.style;
        let _floor = self.question().await;
        stdout_line(term![
            style.yellow("?"),
            " MCP server ",
            style.bold(&super::approval::one_row(server)),
            " asks you to open a URL (Ling does not open it):"
        ]);
        if !message.is_empty() {
            stdout_line(term!["  ", message]);
        }
        stdout_line(term!["  ", style.cyan(url)]);
        let prompt =
            "  [y] I will open it  [n] decline  [c] cancel  [d] decline all from this server > ";
        match self.choose_or_dismiss(server, prompt).await {
            Some("yes") => ElicitAnswer::Accept(Map::new()),
            Some(answer) => answer_of(answer),
            None => ElicitAnswer::Cancel,
        }
    }
}

impl ReplUi {
    /// Ctrl-C or Ctrl-D at a question: the turn is interrupted and nothing more is asked in it.
    fn dismiss_questions(&self) {
        self.dialogs.dismiss();
        self.interrupt_turn();
        stdout_line(
            self.style
                .dim("(interrupted: the MCP servers' other questions in this turn are declined)"),
        );
    }

    /// One of yes / no / cancel / decline-all (which declines the server's later questions
    /// too); `None` after Ctrl-C or Ctrl-D, which dismissed the questions.
    async fn choose_or_dismiss(&self, server: &str, prompt: &str) -> Option<&'static str> {
        const CHOICES: [&str; 4] = ["yes", "no", "cancel", DECLINE_ALL];
        let Some(answer) = choose(prompt, &CHOICES).await else {
            self.dismiss_questions();
            return None;
        };
        let answer = CHOICES.into_iter().find(|c| *c == answer)?;
        if answer == DECLINE_ALL {
            self.dialogs.decline_server(server);
        }
        Some(answer)
    }
}

/// The elicitation answer of a choice other than yes.
fn answer_of(choice: &str) -> ElicitAnswer {
    match choice {
        "no" | DECLINE_ALL => ElicitAnswer::Decline,
        _ => ElicitAnswer::Cancel,
    }
}

enum FieldAnswer {
    Value(serde_json::Value),
    Skipped,
    Cancelled,
}

/// One field: its label, description and what to type; the default pre-filled; asked again
/// until the answer fits (an empty answer skips an optional field).
async fn ask_field(style: Style, field: &FormField) -> FieldAnswer {
    let description = field
        .description
        .as_deref()
        .map(|d| format!(" - {d}"))
        .unwrap_or_default();
    stdout_line(term![
        "  ",
        style.bold(field.label()),
        description,
        " ",
        style.dim(&format!("[{}]", field.hint()))
    ]);
    let choices = match &field.kind {
        FieldKind::Choice(choices) | FieldKind::MultiChoice { choices, .. } => choices.clone(),
        _ => Vec::new(),
    };
    // Numbered, so that a choice is a number to type rather than its exact text.
    for (i, choice) in choices.iter().enumerate() {
        stdout_line(term![
            "    ",
            style.bold(&format!("{}.", i + 1)),
            " ",
            &choice.label
        ]);
    }
    loop {
        let Some(line) = ask(Term::plain("    > "), field.default_text()).await else {
            return FieldAnswer::Cancelled;
        };
        let line = by_number(&line, &choices);
        if line.trim().is_empty() {
            if field.required {
                stdout_line(term!["    ", style.yellow("required")]);
                continue;
            }
            return FieldAnswer::Skipped;
        }
        match field.parse_input(&line) {
            Ok(value) => return FieldAnswer::Value(value),
            Err(why) => stdout_line(term![
                "    ",
                style.yellow("expected"),
                " ",
                why.to_string()
            ]),
        }
    }
}

/// An answer of choice numbers (`2`, or `1, 3` for several) as the choices' values.
fn by_number(line: &str, choices: &[Choice]) -> String {
    if choices.is_empty() {
        return line.to_string();
    }
    let picked: Option<Vec<&str>> = line
        .split(',')
        .map(|part| {
            let n: usize = part.trim().parse().ok()?;
            choices.get(n.checked_sub(1)?).map(|c| c.value.as_str())
        })
        .collect();
    match picked {
        Some(values) if !values.is_empty() => values.join(","),
        _ => line.to_string(),
    }
}

/// The `/help` section of the servers' prompts.
pub(super) async fn print_prompt_help(host: &Host, style: Style) {
    let (commands, problems) = prompt_commands(host.mcp()).await;
    if !commands.is_empty() {
        stdout_line(term!["\n", style.bold("MCP prompts")]);
        for command in &commands {
            let usage = command.usage();
            let head = if usage.is_empty() {
                command.command.clone()
            } else {
                format!("{} {usage}", command.command)
            };
            stdout_line(term!["  ", head, "  ", style.dim(&command.description)]);
        }
    }
    for problem in problems {
        stdout_line(term![style.yellow("warning:"), " ", problem.to_string()]);
    }
}

/// `/mcp__<server>__<prompt> [args]`: the expanded prompt to send, or `None` after saying what
/// is wrong.
pub(super) async fn expand_prompt_command(host: &Host, line: &str, style: Style) -> Option<String> {
    let (name, rest) = line.split_once(' ').unwrap_or((line, ""));
    let (commands, problems) = prompt_commands(host.mcp()).await;
    let Some(command) = commands.iter().find(|c| c.command == name) else {
        for problem in problems {
            stdout_line(term![style.yellow("warning:"), " ", problem.to_string()]);
        }
        stdout_line(term![
            style.yellow("?"),
            format!(" no MCP prompt {name}; /help lists the prompts of the connected servers")
        ]);
        return None;
    };
    match expand_prompt(host.mcp(), command, rest.trim()).await {
        Ok(text) => Some(text),
        Err(e) => {
            stdout_line(term![style.red("error:"), " ", e.to_string()]);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_can_be_given_by_its_number() {
        let choices: Vec<Choice> = ["red", "green", "blue"]
            .iter()
            .map(|c| Choice {
                value: c.to_string(),
                label: c.to_uppercase(),
            })
            .collect();
        assert_eq!(by_number("2", &choices), "green");
        assert_eq!(by_number("1, 3", &choices), "red,blue");
        assert_eq!(by_number("4", &choices), "4", "no such number: as typed");
        assert_eq!(by_number("green", &choices), "green");
        assert_eq!(by_number("2", &[]), "2", "a number field keeps its number");
    }
}
