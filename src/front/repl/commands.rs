//! Carrying out the REPL's slash commands ([`super::slash`] parses them): one call each, most
//! of them one command of the session host.

use tokio_util::sync::CancellationToken;

use super::mcp_status::print_mcp_status;
use super::slash::{COMMANDS, McpSlash, PermissionsSlash, Slash};
use super::view::ReplUi;
use super::{submit, tool_view};
use crate::session::{Command, Host, Io, McpCommand, Reply};
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// What `/init` asks the model to do.
const INIT_PROMPT: &str = include_str!("../../prompts/init.md");

pub(super) enum Flow {
    /// Back at the prompt with this text already typed (a rewound message).
    Prefill(String),
    Continue,
    Exit,
    /// An MCP prompt command expanded into this user message.
    Send(String),
}

pub(super) async fn slash_command(
    host: &mut Host,
    slash: Slash,
    style: Style,
    ui: &ReplUi,
) -> Flow {
    match slash {
        Slash::Exit => return Flow::Exit,
        Slash::Help => help(host, style).await,
        Slash::Agents(None) => super::extension_commands::print_agents(host, style),
        Slash::Agents(Some(id)) => match host.live().stop_agent(&id) {
            Ok(()) => stdout_line(style.dim(&format!("stopping sub-agent {id}"))),
            Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
        },
        Slash::Skills => super::extension_commands::print_skills(host, style),
        Slash::Mcp(mcp) => mcp_command(host, mcp, style, ui).await,
        Slash::Tools => print_tools(host, style).await,
        Slash::Clear => {
            let reply = submit(host, Command::Clear, ui).await;
            ui.clear_changes();
            stdout_line(style.dim("conversation cleared; new session started"));
            if let Reply::Stopped(reason) = reply {
                stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
                return Flow::Exit;
            }
        }
        Slash::Compact(instructions) => {
            super::context::compact(host, &instructions, style, ui).await
        }
        Slash::Context => super::context::context(host, style).await,
        Slash::Todos => super::ask_user::print_todos(&host.todos(), style),
        Slash::Resume(id) => super::context::resume(host, &id, style, ui).await,
        Slash::Rewind(args) => {
            if let Some(prompt) = super::rewind::rewind(host, &args, style, ui).await {
                return Flow::Prefill(prompt);
            }
        }
        Slash::Fork => super::rewind::fork(host, style, ui).await,
        Slash::Mode(name) => super::session_commands::mode(host, name.as_deref(), style, ui).await,
        Slash::Status => super::session_commands::status(host, style).await,
        Slash::Cost => super::session_commands::cost_report(host, style),
        Slash::Permissions(command) => permissions(host, command, style, ui).await,
        Slash::Diff => print_diff(ui, style),
        Slash::Tasks => super::tasks::print_tasks(host, style),
        Slash::Goal(goal) => super::tasks::goal(host, goal, style, ui).await,
        Slash::Init => return Flow::Send(INIT_PROMPT.to_string()),
        Slash::Theme(setting) => theme(setting, style),
        Slash::ThemeUsage => stdout_line("usage: /theme, or /theme dark|light|auto"),
        Slash::Expand => expand(ui, style),
        Slash::Hooks => {
            let listing = host.hooks_listing();
            if listing.is_empty() {
                stdout_line("no hooks loaded (~/.ling/hooks.json, .ling/hooks.json)");
            } else {
                stdout_line(crate::hooks::render_listing(&listing, false).trim_end());
            }
        }
        Slash::Model(None) => stdout_line(format!("model: {}", host.model())),
        Slash::Model(Some(model)) => {
            if let Reply::Done = submit(host, Command::SetModel(model.clone()), ui).await
                && host.model() == model
            {
                stdout_line(format!("model set to {model}"));
            }
        }
        Slash::McpPrompt(line) => {
            if let Some(prompt) =
                super::mcp_dialogs::expand_prompt_command(host, &line, style).await
            {
                return Flow::Send(prompt);
            }
        }
        Slash::Custom(line) => return Flow::Send(line),
        Slash::Unknown(other) => stdout_line(term![
            style.yellow("?"),
            format!(" unknown command {other}; /help lists the commands")
        ]),
    }
    Flow::Continue
}

async fn help(host: &Host, style: Style) {
    stdout_line(style.bold("Commands"));
    for (name, help) in COMMANDS {
        stdout_line(format!("  {name:<10} {help}"));
    }
    stdout_line(
        "\nEnd a line with \\ to continue on the next one. Ctrl-C interrupts a running turn.",
    );
    super::mcp_dialogs::print_prompt_help(host, style).await;
    super::extension_commands::print_help(host, style);
}

async fn mcp_command(host: &mut Host, mcp: McpSlash, style: Style, ui: &ReplUi) {
    let command = match mcp {
        McpSlash::Status => return print_mcp_status(host, style),
        McpSlash::Usage => {
            return stdout_line(
                "usage: /mcp, /mcp reconnect NAME, /mcp login NAME, /mcp enable NAME or /mcp disable NAME",
            );
        }
        McpSlash::Login(name) => McpCommand::Login {
            login: crate::ui::login::browser_login(&name, false, host.child_env()),
            server: name,
        },
        McpSlash::Reconnect(name) => {
            stdout_line(style.dim(&format!("reconnecting {name}...")));
            McpCommand::Reconnect(name)
        }
        McpSlash::Enable(name) => McpCommand::Enable(name),
        McpSlash::Disable(name) => McpCommand::Disable(name),
    };
    let cancel = CancellationToken::new();
    let io = Io::unattended(ui, &cancel);
    match host.submit(Command::Mcp(command), &io).await {
        Ok(_) => print_mcp_status(host, style),
        Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
    }
}

async fn print_tools(host: &mut Host, style: Style) {
    host.sync_tools().await;
    let width = crate::ui::output::terminal_width().unwrap_or(80);
    for tool in host.tools().iter() {
        // The first sentence, on the rest of the row.
        let first = tool.description().lines().next().unwrap_or("");
        let sentence = first
            .split_inclusive(". ")
            .next()
            .unwrap_or(first)
            .trim_end();
        let room = width.saturating_sub(28).max(20);
        stdout_line(term![
            "  ",
            style.bold(&format!("{:<24}", tool.name())),
            " ",
            style.dim(&crate::ui::render::one_line(sentence, room))
        ]);
    }
}

async fn permissions(host: &mut Host, command: PermissionsSlash, style: Style, ui: &ReplUi) {
    match command {
        PermissionsSlash::List => super::session_commands::list_rules(host, style),
        PermissionsSlash::Usage => {
            stdout_line("usage: /permissions, or /permissions allow|deny|remove RULE")
        }
        PermissionsSlash::Add { allow, rule } => {
            let verb = if allow { "allow" } else { "deny" };
            let command = Command::AddRule {
                allow,
                rule: rule.clone(),
            };
            if let Reply::Done = submit(host, command, ui).await
                && host
                    .permission_rules()
                    .iter()
                    .any(|(a, r, _)| *a == allow && *r == rule)
            {
                stdout_line(format!("{verb} {rule} (for this session)"));
            }
        }
        PermissionsSlash::Remove(rule) => {
            match submit(host, Command::RemoveRule(rule.clone()), ui).await {
                Reply::NoSuchRule => stdout_line(format!(
                    "no rule is written {rule:?}; /permissions lists them"
                )),
                _ => stdout_line(format!("removed {rule} (for this session)")),
            }
        }
    }
}

fn print_diff(ui: &ReplUi, style: Style) {
    let diffs = ui.session_diff();
    if diffs.is_empty() {
        stdout_line(
            style.dim("no file changed by this session (commands run by bash are not tracked)"),
        );
    }
    for (summary, _) in &diffs {
        stdout_line(term!["  ", style.bold(summary)]);
    }
    for (_, diff) in diffs {
        stdout_line(crate::ui::render::styled_display(style, &diff));
    }
}

fn theme(setting: Option<crate::config::ThemeSetting>, style: Style) {
    if let Some(setting) = setting {
        crate::ui::markdown::set_theme(super::theme::resolve(setting));
    }
    let theme = match crate::ui::markdown::theme() {
        crate::ui::markdown::Theme::Dark => "dark",
        crate::ui::markdown::Theme::Light => "light",
    };
    let colours = if !style.color {
        " (colours are off: NO_COLOR, TERM=dumb or not a terminal)"
    } else {
        ""
    };
    stdout_line(format!("theme: {theme}{colours}"));
}

fn expand(ui: &ReplUi, style: Style) {
    match ui.last_call() {
        (Some(output), input) => {
            // The whole call (a command longer than its line), then its whole output.
            if let Some((name, input)) = input {
                let whole = match input.get("command").and_then(serde_json::Value::as_str) {
                    Some(command) => command.to_string(),
                    None => serde_json::to_string_pretty(&input).unwrap_or_default(),
                };
                stdout_line(term![style.cyan("●"), " ", style.bold(&name)]);
                for line in whole.lines() {
                    stdout_line(term![style.dim("│ "), line]);
                }
            }
            stdout_line(tool_view::whole(&output));
        }
        (None, _) => stdout_line(style.dim("no tool has run yet")),
    }
}
