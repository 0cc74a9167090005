//! How a sub-agent's work reads on the terminal (the REPL and `-p`'s stderr): a line when it
//! starts, one per tool call it makes (and per refusal, hook notice or warning), and a line
//! with its totals when it ends. Its text is not shown: its answer comes back to the parent.

use super::render::{call_summary, one_line, tokens};
use super::safe_text::neutralise;
use super::style::Style;
use super::term::Term;
use crate::agent::{AgentEvent, SubagentEvent, SubagentKind};

/// The line for one sub-agent event, if it has one.
pub fn line(style: Style, event: &SubagentEvent) -> Option<Term> {
    let who = style.cyan(&event.agent);
    match &event.kind {
        SubagentKind::Started { description, model } => {
            let what = if description.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", description.trim())
            };
            Some(crate::term![
                "  ⎿ ",
                who,
                what,
                style.dim(&format!(" ({model}, {})", event.agent_id))
            ])
        }
        SubagentKind::Finished {
            usage,
            num_turns,
            tool_calls,
            ok,
        } => {
            let mark = if *ok {
                style.green("✓")
            } else {
                style.red("✗")
            };
            Some(crate::term![
                "  ⎿ ",
                who,
                " ",
                mark,
                style.dim(&format!(
                    " {tool_calls} tool calls · {num_turns} requests · {} in · {} out",
                    tokens(usage.prompt_tokens),
                    tokens(usage.completion_tokens)
                ))
            ])
        }
        SubagentKind::Event(inner) => match inner.as_ref() {
            AgentEvent::ToolCallBegin { name, input, .. } => Some(crate::term![
                "    ",
                who,
                style.dim(" › "),
                call_summary(name, input)
            ]),
            AgentEvent::ToolCallEnd {
                name,
                content,
                is_error: true,
                ..
            } => Some(crate::term![
                "    ",
                who,
                style.dim(" › "),
                name.as_str(),
                " ",
                style.red(&format!("✗ {}", one_line(&neutralise(content.trim()), 90)))
            ]),
            AgentEvent::PermissionDenied { tool, message } => Some(crate::term![
                "    ",
                who,
                " ",
                style.yellow("denied"),
                " ",
                tool.as_str(),
                ": ",
                message.as_str()
            ]),
            AgentEvent::Hook(notice) => Some(crate::term![
                "    ",
                who,
                " ",
                super::render::hook_line(style, notice)
            ]),
            AgentEvent::Warning(text) => Some(crate::term![
                "    ",
                who,
                " ",
                style.yellow("warning:"),
                " ",
                text.as_str()
            ]),
            _ => None,
        },
    }
}
