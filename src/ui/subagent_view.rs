//! How a sub-agent's work reads on the terminal (the REPL and `-p`'s stderr): a line when it
//! starts, one per tool call it makes (and per refusal, hook notice or warning), and a line
//! with its totals when it ends. Its text is not shown: its answer comes back to the parent.
//! What the model chose (the description, the agent's name, a refusal's words) stays on its
//! one line: a newline in it shows as `⏎`, so it cannot draw a line that looks like Ling's.

use super::render::{call_summary, one_line, tokens};
use super::safe_text::{neutralise, one_row};
use super::style::Style;
use super::term::Term;
use crate::session::{AgentEvent, SubagentEvent, SubagentKind};

/// The most of a sub-agent's description its start line shows.
const DESCRIPTION_CHARS: usize = 120;

/// The line for one sub-agent event, if it has one.
pub fn line(style: Style, event: &SubagentEvent) -> Option<Term> {
    let who = style.cyan(&one_row(&event.agent));
    match &event.kind {
        SubagentKind::Started { description, model } => {
            let what = if description.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", cut(&one_row(description.trim()), DESCRIPTION_CHARS))
            };
            Some(crate::term![
                "  ⎿ ",
                who,
                what,
                style.dim(&one_row(&format!(" ({model}, {})", event.agent_id)))
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
                one_row(tool),
                ": ",
                one_row(message)
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
                one_row(text)
            ]),
            _ => None,
        },
    }
}

/// `text` cut to `max` characters, with an ellipsis when it was longer.
fn cut(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SubagentKind;

    fn started(agent: &str, description: &str) -> SubagentEvent {
        SubagentEvent {
            call_id: "call_t".into(),
            agent: agent.into(),
            agent_id: "agent-1".into(),
            kind: SubagentKind::Started {
                description: description.into(),
                model: "m".into(),
            },
        }
    }

    fn shown(event: &SubagentEvent) -> String {
        line(Style::plain(), event).unwrap().as_str().to_string()
    }

    #[test]
    fn a_description_stays_on_its_one_line_with_its_controls_visible() {
        let event = started(
            "general-purpose",
            "look around\n● bash(rm -rf ~)\n  allow? \x1b[2Jyes\r\tdone",
        );
        insta::assert_snapshot!(shown(&event), @"  ⎿ general-purpose: look around⏎● bash(rm -rf ~)⏎  allow? ^[[2Jyes^M done (m, agent-1)");
        assert!(!shown(&event).contains('\n'));
        // A plain one is as it was; a long one is cut.
        assert_eq!(
            shown(&started("general-purpose", "find the tests")),
            "  ⎿ general-purpose: find the tests (m, agent-1)"
        );
        let long = shown(&started("a", &"x".repeat(500)));
        assert!(long.ends_with("x… (m, agent-1)"), "{long}");
        assert!(long.chars().count() < 150, "{long}");
    }

    #[test]
    fn a_sub_agents_refusal_and_warning_stay_on_their_line() {
        let denied = SubagentEvent {
            kind: SubagentKind::Event(Box::new(AgentEvent::PermissionDenied {
                tool: "bash".into(),
                message: "no\n● fake line".into(),
            })),
            ..started("general-purpose", "")
        };
        assert_eq!(
            shown(&denied),
            "    general-purpose denied bash: no⏎● fake line"
        );
        let warning = SubagentEvent {
            kind: SubagentKind::Event(Box::new(AgentEvent::Warning("a\nb".into()))),
            ..started("general-purpose", "")
        };
        assert_eq!(shown(&warning), "    general-purpose warning: a⏎b");
    }
}
