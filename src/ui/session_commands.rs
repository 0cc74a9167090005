//! The REPL's commands about the session itself: `/mode`, `/permissions`, `/status` and
//! `/cost`. Each reads or changes the running [`Setup`] and prints through [`super::output`].

use super::output::stdout_line;
use super::style::Style;
use crate::config::PermissionMode;
use crate::setup::Setup;
use crate::term;

/// `/mode` shows the permission mode; `/mode NAME` changes it for the rest of the session.
pub fn mode(setup: &Setup, rest: &str, style: Style) {
    if rest.is_empty() {
        stdout_line(format!(
            "mode: {} (Shift-Tab cycles; /mode NAME sets: default, accept-edits, plan, bypass)",
            setup.agent.permission_mode().as_str()
        ));
        return;
    }
    match PermissionMode::parse(rest) {
        Some(mode) => {
            setup.agent.set_permission_mode(mode);
            stdout_line(format!("mode set to {}", mode.as_str()));
        }
        None => stdout_line(term![
            style.yellow("?"),
            format!(" no mode {rest:?}; the modes are default, accept-edits, plan and bypass")
        ]),
    }
}

/// `/permissions` lists the rules in force and where each came from; `/permissions allow RULE`,
/// `deny RULE` and `remove RULE` change them for the rest of the session.
pub fn permissions(setup: &Setup, rest: &str, style: Style) {
    let (verb, rule) = rest
        .split_once(' ')
        .map_or((rest, ""), |(v, r)| (v, r.trim()));
    match (verb, rule) {
        ("", _) => list(setup, style),
        ("allow" | "deny", rule) if !rule.is_empty() => {
            match setup.agent.add_permission_rule(verb == "allow", rule) {
                Ok(()) => stdout_line(format!("{verb} {rule} (for this session)")),
                Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
            }
        }
        ("remove", rule) if !rule.is_empty() => {
            if setup.agent.remove_permission_rule(rule) {
                stdout_line(format!("removed {rule} (for this session)"));
            } else {
                stdout_line(format!(
                    "no rule is written {rule:?}; /permissions lists them"
                ));
            }
        }
        _ => stdout_line("usage: /permissions, or /permissions allow|deny|remove RULE"),
    }
}

fn list(setup: &Setup, style: Style) {
    stdout_line(format!("mode: {}", setup.agent.permission_mode().as_str()));
    let rules = setup.agent.permission_rules();
    if rules.is_empty() {
        stdout_line(style.dim("no rules; /permissions allow|deny RULE adds one"));
        return;
    }
    let width = rules
        .iter()
        .map(|(_, r)| r.chars().count())
        .max()
        .unwrap_or(0);
    for (allow, rule) in rules {
        let origin = setup
            .settings
            .rule_origins
            .iter()
            .find(|(text, _)| *text == rule)
            .map_or("session", |(_, origin)| *origin);
        let kind = if allow {
            style.green("allow")
        } else {
            style.red("deny ")
        };
        stdout_line(term![
            "  ",
            kind,
            " ",
            format!("{rule:<width$}"),
            "  ",
            style.dim(origin)
        ]);
    }
}
