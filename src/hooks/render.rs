//! Text and JSON renderings for `ling hooks list`, `/hooks` and `ling hooks run`. They return
//! strings; printing is the UI's business.

use super::engine::HookListing;
use super::outcome::HookOutcome;

/// `ling hooks list [--json]`: one row per loaded handler, with its source file.
pub fn render_listing(list: &[HookListing], json: bool) -> String {
    if json {
        return serde_json::to_string_pretty(list).unwrap_or_default();
    }
    if list.is_empty() {
        return "no hooks loaded\n".to_string();
    }
    let rows: Vec<[String; 5]> = list
        .iter()
        .map(|l| {
            let mut options = vec![format!("timeout {}s", l.timeout_secs)];
            if l.is_async {
                options.push("async".into());
            }
            if l.fail_closed {
                options.push("failClosed".into());
            }
            if let Some(rule) = &l.condition {
                options.push(format!("if {rule}"));
            }
            [
                l.event.to_string(),
                l.matcher.clone().unwrap_or_else(|| "*".into()),
                l.handler.clone(),
                options.join(", "),
                l.source.display().to_string(),
            ]
        })
        .collect();
    let header = ["EVENT", "MATCHER", "HANDLER", "OPTIONS", "SOURCE"].map(String::from);
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `ling hooks run`: the combined outcome of a made-up event.
pub fn render_outcome(outcome: &HookOutcome, json: bool) -> String {
    if json {
        return serde_json::to_string_pretty(outcome).unwrap_or_default();
    }
    let mut out = String::new();
    let mut line = |label: &str, value: &str| {
        out.push_str(label);
        out.push_str(": ");
        out.push_str(&value.replace('\n', "\n  "));
        out.push('\n');
    };
    line("decision", outcome.decision.map_or("none", |d| d.as_str()));
    if let Some(reason) = &outcome.reason {
        line("reason", reason);
    }
    if let Some(input) = &outcome.updated_input {
        line("updated input", &input.to_string());
    }
    if let Some(output) = &outcome.updated_output {
        line("updated output", output);
    }
    for context in &outcome.additional_context {
        line("context", context);
    }
    for message in &outcome.system_messages {
        line("system message", message);
    }
    if let Some(stop) = &outcome.stop {
        line("stop", stop);
    }
    for notice in &outcome.notices {
        line("notice", &notice.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::hooks::HookDialect;
    use crate::config::hooks::HookEventName;
    use crate::hooks::outcome::{Decision, HookNotice, NoticeKind};
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    #[test]
    fn listing_is_an_aligned_table_or_json() {
        let list = vec![
            HookListing {
                event: HookEventName::PreToolUse,
                matcher: Some("bash".into()),
                handler: "command `guard.sh`".into(),
                timeout_secs: 60.0,
                is_async: false,
                fail_closed: true,
                source: PathBuf::from("/p/.ling/hooks.json"),
                dialect: HookDialect::Ling,
                condition: None,
            },
            HookListing {
                event: HookEventName::Stop,
                matcher: None,
                handler: "http http://127.0.0.1:9/x".into(),
                timeout_secs: 1.5,
                is_async: true,
                fail_closed: false,
                source: PathBuf::from("/h/hooks.json"),
                dialect: HookDialect::Ling,
                condition: None,
            },
        ];
        assert_eq!(
            render_listing(&list, false),
            "EVENT       MATCHER  HANDLER                    OPTIONS                  SOURCE\n\
             PreToolUse  bash     command `guard.sh`         timeout 60s, failClosed  /p/.ling/hooks.json\n\
             Stop        *        http http://127.0.0.1:9/x  timeout 1.5s, async      /h/hooks.json\n"
        );
        let json: serde_json::Value = serde_json::from_str(&render_listing(&list, true)).unwrap();
        assert_eq!(json[0]["event"], "PreToolUse");
        assert_eq!(json[0]["failClosed"], true);
        assert_eq!(json[1]["async"], true);
        assert_eq!(json[1]["timeout"], 1.5);
        assert_eq!(render_listing(&[], false), "no hooks loaded\n");
    }

    #[test]
    fn outcome_text_shows_every_part() {
        let outcome = HookOutcome {
            decision: Some(Decision::Block),
            reason: Some("no force push".into()),
            updated_input: Some(serde_json::json!({"command": "git push"})),
            updated_output: None,
            additional_context: vec!["ctx".into()],
            system_messages: vec![],
            stop: None,
            notices: vec![HookNotice {
                event: HookEventName::PreToolUse,
                handler: "command `g`".into(),
                kind: NoticeKind::Block,
                message: "blocked: no force push".into(),
            }],
        };
        assert_eq!(
            render_outcome(&outcome, false),
            "decision: block\nreason: no force push\nupdated input: {\"command\":\"git push\"}\n\
             context: ctx\nnotice: PreToolUse hook command `g`: blocked: no force push\n"
        );
        assert_eq!(
            render_outcome(&HookOutcome::default(), false),
            "decision: none\n"
        );
        let json: serde_json::Value =
            serde_json::from_str(&render_outcome(&outcome, true)).unwrap();
        assert_eq!(json["decision"], "block");
        assert_eq!(json["notices"][0]["kind"], "block");
    }
}
