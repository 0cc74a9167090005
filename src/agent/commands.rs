//! Custom slash commands run by the agent: the body's `$ARGUMENTS` and `$1`..`$9` are filled
//! in (as typed in the text, shell-quoted in its shell commands), its `!` shell lines run through the one dispatch point as `bash` calls (PreToolUse
//! hooks, the permission check and the sandbox, shown like any call: never silently) and their
//! output takes their place, its `@file` mentions are attached, and the prompt runs with the
//! command's `allowed-tools` narrowing the tools and its `model` for that run.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::filter::ToolFilter;
use super::subagent::resolve_model;
use super::turn::Turn;
use super::{Agent, AgentError, AgentEvent, Approver, EventSink, RunEnd, RunResult};
use crate::config::extensions::Command;
use crate::llm::ToolCall;

/// The body cut into text and shell commands ([`pieces`]), with `$ARGUMENTS` and `$1`..`$9`
/// filled in from `args` (split like a shell would: quotes group words). The text takes them
/// as typed; a shell command takes each word single-quoted, so an argument is data there and
/// never shell syntax (`/cmd '; rm -rf x'` cannot add a command). The body is cut before it is
/// filled, so an argument cannot make a `!` line either. A body that uses none of them gets
/// the arguments appended, as Claude Code does.
pub fn fill_arguments(body: &str, args: &str) -> Vec<Piece> {
    let words = split_words(args);
    let typed = Fill {
        all: args.to_string(),
        words: words.clone(),
    };
    let quoted = Fill {
        all: words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" "),
        words: words.iter().map(|w| shell_quote(w)).collect(),
    };
    let mut out: Vec<Piece> = pieces(body)
        .into_iter()
        .map(|piece| match piece {
            Piece::Text(text) => Piece::Text(typed.fill(&text)),
            Piece::Line(command) => Piece::Line(quoted.fill(&command)),
            Piece::Span(command) => Piece::Span(quoted.fill(&command)),
        })
        .collect();
    let uses_any = body.contains("$ARGUMENTS") || (1..=9).any(|n| body.contains(&format!("${n}")));
    if !uses_any && !args.trim().is_empty() {
        if let Some(Piece::Text(last)) = out.last_mut() {
            last.truncate(last.trim_end().len());
        }
        out.push(Piece::Text(format!("\n\nARGUMENTS: {}\n", args.trim())));
    }
    out
}

/// What `$ARGUMENTS` and `$1`..`$9` become in one kind of piece.
struct Fill {
    all: String,
    words: Vec<String>,
}

impl Fill {
    /// `template` with each placeholder replaced in one pass, so a value that holds `$1` is
    /// never filled again (a quoted word must stay one word).
    fn fill(&self, template: &str) -> String {
        let mut out = String::with_capacity(template.len());
        let mut rest = template;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix("ARGUMENTS") {
                out.push_str(&self.all);
                rest = tail;
            } else if let Some(n) = after
                .chars()
                .next()
                .and_then(|c| c.to_digit(10))
                .filter(|n| (1..=9).contains(n))
            {
                let index = usize::try_from(n - 1).unwrap_or(usize::MAX);
                out.push_str(self.words.get(index).map_or("", String::as_str));
                rest = &after[1..];
            } else {
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        out
    }
}

/// `word` as one single-quoted shell word: nothing in it is shell syntax.
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Words of `args`: blanks separate them, single or double quotes group them.
fn split_words(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut any = false;
    for c in args.chars() {
        match (c, quote) {
            ('"' | '\'', None) => {
                quote = Some(c);
                any = true;
            }
            (c, Some(q)) if c == q => quote = None,
            (c, None) if c.is_whitespace() => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            (c, _) => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// A piece of a command body: text as it is, or a shell command whose output replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    /// A whole `!command` line (its output replaces the line).
    Line(String),
    /// A `` !`command` `` span inside a line.
    Span(String),
}

/// The body cut into text and shell commands.
pub fn pieces(body: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = String::new();
    for line in body.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(command) = trimmed.strip_prefix('!') {
            let command = command.trim();
            let command = command
                .strip_prefix('`')
                .and_then(|c| c.strip_suffix('`'))
                .unwrap_or(command);
            if !command.is_empty() {
                out.push(Piece::Text(std::mem::take(&mut text)));
                out.push(Piece::Line(command.to_string()));
                continue;
            }
        }
        let mut rest = line;
        while let Some(start) = rest.find("!`") {
            let after = &rest[start + 2..];
            let Some(end) = after.find('`') else { break };
            text.push_str(&rest[..start]);
            out.push(Piece::Text(std::mem::take(&mut text)));
            out.push(Piece::Span(after[..end].trim().to_string()));
            rest = &after[end + 1..];
        }
        text.push_str(rest);
    }
    out.push(Piece::Text(text));
    out.retain(|p| !matches!(p, Piece::Text(t) if t.is_empty()));
    out
}

impl Agent {
    /// The custom command `line` invokes (`/name args`), with its arguments.
    pub fn custom_command(&self, line: &str) -> Option<(Command, String)> {
        let rest = line.trim_start().strip_prefix('/')?;
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let command = self.host.extensions.command(name)?;
        Some((command.clone(), args.trim().to_string()))
    }

    /// Runs what the user typed: a custom command when it names one, else the prompt itself.
    pub async fn run_input(
        &mut self,
        input: &str,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<RunResult, AgentError> {
        if let Some(request) = super::parse_rewind(input) {
            return self.run_rewind(request?, sink).await;
        }
        match self.custom_command(input) {
            Some((command, args)) => {
                self.run_command(&command, &args, sink, approver, cancel)
                    .await
            }
            None => self.run(input, sink, approver, cancel).await,
        }
    }

    /// Runs a custom command with these arguments.
    pub async fn run_command(
        &mut self,
        command: &Command,
        args: &str,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<RunResult, AgentError> {
        if let Some(tools) = &command.allowed_tools {
            let origin = format!("/{}'s allowed-tools", command.name);
            self.host
                .lock_narrowing()
                .push(ToolFilter::new(tools, origin));
        }
        // Before the arguments go in, so that an argument cannot name a variable.
        let body = crate::config::extensions::substitute_session(
            &command.body,
            &self.session().id,
            &self.options.root,
        );
        let filled = fill_arguments(&body, args);
        // The turn begins before its shell lines run: a rewind undoes what they did too.
        self.conversation.turn_checkpoint = self.checkpoint_look().await;
        let expanded = {
            let turn = Turn::new(sink, approver, cancel);
            self.run_shell_pieces(filled, &turn).await
        };
        if cancel.is_cancelled() {
            self.conversation.turn_checkpoint = None;
            self.end_narrowing();
            return Ok(RunResult {
                end: RunEnd::Interrupted,
                text: String::new(),
                num_turns: 0,
                requests: 0,
            });
        }
        let attached = super::attach_files(&self.options.root, &expanded);
        for warning in attached.warnings {
            sink.emit(AgentEvent::Warning(warning));
        }
        let before = self.model().to_string();
        if let Some(asked) = &command.model {
            let (model, warning) =
                resolve_model(Some(asked), &before, &self.host.delegation.aliases);
            if let Some(warning) = warning {
                sink.emit(AgentEvent::Warning(format!("/{}: {warning}", command.name)));
            }
            self.set_model(model);
        }
        let result = self.run(&attached.prompt, sink, approver, cancel).await;
        if self.model() != before {
            self.set_model(before);
        }
        result
    }

    /// The body with each shell command replaced by its output, each run as a `bash` call
    /// through the dispatch point (a refusal's message takes its place, so the model knows).
    async fn run_shell_pieces(&self, pieces: Vec<Piece>, turn: &Turn<'_>) -> String {
        let mut out = String::new();
        for (n, piece) in pieces.into_iter().enumerate() {
            let command = match piece {
                Piece::Text(text) => {
                    out.push_str(&text);
                    continue;
                }
                Piece::Line(command) | Piece::Span(command) => command,
            };
            if turn.is_cancelled() {
                break;
            }
            let call = ToolCall::new(
                format!("command_{n}"),
                "bash",
                json!({ "command": command }).to_string(),
            );
            let output = self.dispatch(&call, turn).await;
            out.push_str(&format!("$ {command}\n{}\n", output.trim_end()));
        }
        out
    }

    /// The run is over: the narrowings of its command and skills end with it.
    pub(super) fn end_narrowing(&self) {
        self.host.lock_narrowing().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The pieces' text, with each shell command as `!{command}`.
    fn filled(body: &str, args: &str) -> String {
        fill_arguments(body, args)
            .into_iter()
            .map(|piece| match piece {
                Piece::Text(text) => text,
                Piece::Line(command) => format!("!{command}\n"),
                Piece::Span(command) => format!("!`{command}`"),
            })
            .collect()
    }

    #[test]
    fn arguments_fill_their_places_or_are_appended() {
        assert_eq!(filled("Fix $ARGUMENTS now", "issue 12"), "Fix issue 12 now");
        assert_eq!(
            filled("Review $1 for $2 ($3)", "src/a.rs \"memory leaks\""),
            "Review src/a.rs for memory leaks ()"
        );
        assert_eq!(
            filled("Just do it.\n", "quickly"),
            "Just do it.\n\nARGUMENTS: quickly\n"
        );
        assert_eq!(filled("Nothing $1", ""), "Nothing ");
        assert_eq!(filled("Cost: $5 and $ARG", "a"), "Cost:  and $ARG");
    }

    #[test]
    fn arguments_are_shell_quoted_words_in_shell_commands_and_typed_in_the_text() {
        let body = "Look at $ARGUMENTS\n!grep -n $1 $2\nSee !`echo $ARGUMENTS` too\n";
        assert_eq!(
            fill_arguments(body, "'; rm -rf x' it's"),
            vec![
                Piece::Text("Look at '; rm -rf x' it's\n".into()),
                Piece::Line("grep -n '; rm -rf x' 'its'".into()),
                Piece::Text("See ".into()),
                Piece::Span("echo '; rm -rf x' 'its'".into()),
                Piece::Text(" too\n".into()),
            ]
        );
        // A quote inside a word, and a word that spells a placeholder: still one word each.
        assert_eq!(
            fill_arguments("!echo $1 $2", "\"a'b\" '$1'"),
            vec![Piece::Line(r"echo 'a'\''b' '$1'".into())]
        );
        // An argument cannot start a shell line of its own.
        assert_eq!(
            fill_arguments("Do $ARGUMENTS", "this\n!touch pwned"),
            vec![Piece::Text("Do this\n!touch pwned".into())]
        );
    }

    #[test]
    fn shell_lines_and_spans_are_cut_out() {
        assert_eq!(
            pieces("Status: !`git status` now\n!ls -la\nend\n"),
            vec![
                Piece::Text("Status: ".into()),
                Piece::Span("git status".into()),
                Piece::Text(" now\n".into()),
                Piece::Line("ls -la".into()),
                Piece::Text("end\n".into()),
            ]
        );
    }
}
