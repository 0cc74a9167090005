//! Workspace trust on the terminal: the REPL's question before anything of an untrusted project
//! runs (`[t] trust this folder  [o] open without it  [q] quit`), and the text `ling trust`
//! shows. Both list what the project's config would bring (every hook, MCP server and widening
//! setting, from `trust::listing`) and, when it changed since it was trusted, what
//! changed. Project text may hold control characters: any string that does is shown escaped.

use std::borrow::Cow;

use rustyline::error::ReadlineError;

use super::TerminalError;
use super::output::{stdout, stdout_line};
use super::style::Style;
use super::term::Term;
use crate::config::Paths;
use crate::trust::{
    Changes, FileChangeKind, HookTarget, Item, ProjectConfig, ProjectListing, ServerTarget,
};

/// What the user chose at the trust question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Record trust and load the project's config.
    Trust,
    /// Open the REPL without the project's config (as `-p` runs an untrusted project).
    Open,
    /// Exit without running anything.
    Quit,
}

/// Shows what the untrusted project would bring and asks. Ctrl-C or Ctrl-D quits.
pub async fn ask(project: &ProjectConfig, paths: &Paths) -> Result<Answer, TerminalError> {
    let style = Style::for_stdout();
    let header = if project.changed_since_trusted() {
        format!(
            "The project config of {} changed since you trusted it{}.",
            shown(&project.root().display().to_string()),
            project
                .previous_trusted_at()
                .map(|at| format!(" ({at})"))
                .unwrap_or_default()
        )
    } else {
        format!(
            "{} has project config (.ling/) that Ling uses only in a folder you trust.",
            shown(&project.root().display().to_string())
        )
    };
    stdout_line(style.bold(&header));
    stdout(describe(project, paths, style));
    stdout_line(
        style.dim("Trust it only if you trust whoever wrote it: hooks and servers run as you."),
    );
    let prompt = crate::term![
        style.yellow("trust?"),
        " [t] trust this folder  [o] open without it  [q] quit › "
    ];
    tokio::task::spawn_blocking(move || {
        let mut editor = rustyline::DefaultEditor::new().map_err(TerminalError::Editor)?;
        loop {
            match editor.readline(prompt.as_str()) {
                Ok(line) => match line.trim().to_lowercase().as_str() {
                    "t" | "trust" => return Ok(Answer::Trust),
                    "o" | "open" => return Ok(Answer::Open),
                    "q" | "quit" => return Ok(Answer::Quit),
                    _ => continue,
                },
                Err(ReadlineError::Interrupted | ReadlineError::Eof) => return Ok(Answer::Quit),
                Err(e) => return Err(TerminalError::Answer(e)),
            }
        }
    })
    .await
    .map_err(TerminalError::EditorStopped)?
}

/// What the project would bring, then what changed since it was trusted (when it was).
pub fn describe(project: &ProjectConfig, paths: &Paths, style: Style) -> Term {
    let mut out = Term::plain("It would bring:\n");
    out += render_listing(&project.listing(paths), style);
    if let Some(changes) = project.changes(paths) {
        out += "What changed since it was trusted:\n";
        out += render_changes(&changes, style);
    }
    out
}

/// Each project file and its items, indented.
pub fn render_listing(listing: &ProjectListing, style: Style) -> Term {
    let mut out = Term::new();
    for file in &listing.files {
        out += crate::term!["  ", style.bold(&crate::trust::shown_name(file.name)), "\n"];
        match &file.items {
            Err(error) => {
                out += crate::term![
                    "    ",
                    style.red("cannot be parsed:"),
                    " ",
                    shown(error).as_ref(),
                    "\n"
                ]
            }
            Ok(items) if items.is_empty() => {
                out += crate::term![
                    "    ",
                    style.dim("nothing that runs code or widens what Ling may do"),
                    "\n"
                ]
            }
            Ok(items) => {
                for item in items {
                    out += crate::term!["    ", render_item(item), "\n"];
                }
            }
        }
    }
    out
}

fn render_changes(changes: &Changes, style: Style) -> Term {
    let mut out = Term::new();
    for file in &changes.files {
        let what = match file.kind {
            FileChangeKind::Added => "is new",
            FileChangeKind::Removed => "was removed",
            FileChangeKind::Changed => "changed",
        };
        out += format!("  {} {what}\n", crate::trust::shown_name(file.name));
        for item in &file.added {
            out += crate::term!["    ", style.green("+"), " ", render_item(item), "\n"];
        }
        for item in &file.removed {
            out += crate::term!["    ", style.red("-"), " ", render_item(item), "\n"];
        }
        if file.added.is_empty() && file.removed.is_empty() && file.error.is_none() {
            out += crate::term![
                "    ",
                style.dim("(nothing listed changed: options or formatting)"),
                "\n"
            ];
        }
    }
    out
}

fn render_item(item: &Item) -> String {
    match item {
        Item::Hook {
            event,
            matcher,
            handler,
        } => {
            let on = matcher
                .as_deref()
                .map(|m| format!(" [{}]", shown(m)))
                .unwrap_or_default();
            match handler {
                HookTarget::Command(command) => {
                    format!("hook {event}{on}: runs `{}`", shown(command))
                }
                HookTarget::Http { url, variables } => format!(
                    "hook {event}{on}: POSTs to {}{}",
                    shown(url),
                    variables_note(variables)
                ),
            }
        }
        Item::Server {
            name,
            transport,
            target,
            variables,
            replaces_user_server,
            disabled,
        } => {
            let target = match target {
                ServerTarget::Command { command, args } => {
                    let words: Vec<String> = std::iter::once(command)
                        .chain(args)
                        .map(|word| quoted(word))
                        .collect();
                    format!("runs `{}`", words.join(" "))
                }
                ServerTarget::Url(url) => format!("connects to {}", shown(url)),
            };
            let mut line = format!("server {} ({transport}): {target}", shown(name));
            line.push_str(&variables_note(variables));
            if *replaces_user_server {
                line.push_str("; replaces your server of the same name (~/.ling/mcp.json)");
            }
            if *disabled {
                line.push_str(" (disabled)");
            }
            line
        }
        Item::Setting { key, value, effect } => {
            format!("setting {}: {} — {effect}", shown(key), shown(value))
        }
    }
}

fn variables_note(variables: &[String]) -> String {
    if variables.is_empty() {
        return String::new();
    }
    let names: Vec<String> = variables.iter().map(|v| format!("${}", shown(v))).collect();
    format!("; reads {} from your environment", names.join(", "))
}

/// A word of a command line: as it is, or quoted when it is empty or holds blanks or quotes.
fn quoted(word: &str) -> String {
    if word.is_empty()
        || word
            .chars()
            .any(|c| c.is_whitespace() || c == '"' || c == '\'')
    {
        format!("{word:?}")
    } else {
        shown(word).into_owned()
    }
}

/// Project text as it may reach the terminal: a string holding any control or otherwise
/// invisible character is shown escaped (`"a\u{1b}[2Jb"`), so it cannot move the cursor, clear
/// the screen or hide what follows.
pub fn shown(text: &str) -> Cow<'_, str> {
    let invisible =
        |c: char| c.is_control() || (!matches!(c, '"' | '\'' | '\\') && c.escape_debug().len() > 1);
    if text.chars().any(invisible) {
        Cow::Owned(format!("{text:?}"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(shown("touch ok"), "touch ok");
        assert_eq!(shown("a\u{1b}[2Jb"), "\"a\\u{1b}[2Jb\"");
        assert_eq!(shown("ls\rrm -rf ~"), "\"ls\\rrm -rf ~\"");
        assert_eq!(shown("x\u{202e}y"), "\"x\\u{202e}y\"");
        assert_eq!(quoted("two words"), "\"two words\"");
    }
}
