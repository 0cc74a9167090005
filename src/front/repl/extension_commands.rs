//! The REPL's view of the run's custom commands, skills and agent definitions: the `/help`
//! section of custom commands, `/agents`, `/skills`, and the completion entries (each command
//! with its description). Loading and running them is the agent's (`config::extensions`,
//! `agent::commands`).

use crate::config::extensions::Scope;
use crate::session::Host;
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// `/name [hint]` and the description of each custom command, for Tab completion.
pub fn completion_entries(host: &Host) -> Vec<(String, String)> {
    host.extensions()
        .commands
        .iter()
        .map(|c| (format!("/{}", c.name), describe(&c.description, c.scope)))
        .collect()
}

fn describe(description: &str, scope: Scope) -> String {
    let description = description.lines().next().unwrap_or("").trim();
    format!("{description} ({})", scope.as_str())
}

/// The custom commands section of `/help`.
pub fn print_help(host: &Host, style: Style) {
    let commands = &host.extensions().commands;
    if commands.is_empty() {
        return;
    }
    stdout_line(style.bold("\nCustom commands"));
    for command in commands {
        let hint = command
            .argument_hint
            .as_deref()
            .map(|h| format!(" {h}"))
            .unwrap_or_default();
        stdout_line(term![
            "  ",
            format!("/{}{hint}", command.name),
            "  ",
            style.dim(&describe(&command.description, command.scope))
        ]);
    }
}

/// `/agents`: the agent types `task` offers, with where each comes from.
pub fn print_agents(host: &Host, style: Style) {
    stdout_line(style.bold("Agents (the task tool's types)"));
    stdout_line(term![
        "  ",
        style.bold("general-purpose"),
        "  ",
        style.dim("builtin: every tool of this session")
    ]);
    for def in &host.extensions().agents {
        let mut detail = def.description.lines().next().unwrap_or("").to_string();
        if let Some(tools) = &def.tools {
            detail.push_str(&format!("; tools: {}", tools.join(", ")));
        }
        if let Some(model) = &def.model {
            detail.push_str(&format!("; model: {model}"));
        }
        stdout_line(term![
            "  ",
            style.bold(&def.name),
            "  ",
            detail,
            style.dim(&format!(
                " ({}, {})",
                def.scope.as_str(),
                def.path.display()
            ))
        ]);
    }
    let running = host.live().agents();
    if !running.is_empty() {
        stdout_line(style.bold("\nRunning now (/agents stop ID stops one)"));
        for row in running {
            let indent = "  ".repeat(row.depth);
            let kind = if row.background { ", background" } else { "" };
            stdout_line(term![
                indent,
                style.bold(&row.agent_id),
                "  ",
                format!(
                    "{} {:?} ({}s{kind})",
                    row.agent, row.description, row.seconds
                ),
                "  ",
                style.dim(&row.last_step)
            ]);
        }
    }
    let children = host.children();
    if !children.is_empty() {
        stdout_line(style.bold("\nSub-agents of this session (task resume=ID continues one)"));
        for (id, child) in children {
            stdout_line(format!(
                "  {id}  {} ({} messages)",
                child.agent,
                child.messages.len()
            ));
        }
    }
}

/// `/skills`: every skill with its description and folder.
pub fn print_skills(host: &Host, style: Style) {
    let skills = &host.extensions().skills;
    if skills.is_empty() {
        stdout_line(
            "no skills (.ling/skills/NAME/SKILL.md, .claude/skills/NAME/SKILL.md, \
             ~/.ling/skills/NAME/SKILL.md)",
        );
        return;
    }
    stdout_line(style.bold("Skills (the model loads one when a task calls for it)"));
    for skill in skills {
        stdout_line(term![
            "  ",
            style.bold(&skill.name),
            "  ",
            skill.description.lines().next().unwrap_or(""),
            style.dim(&format!(
                " ({}, {})",
                skill.scope.as_str(),
                skill.dir.display()
            ))
        ]);
    }
}
