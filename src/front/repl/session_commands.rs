//! The REPL's commands about the session itself: `/mode`, `/permissions`, `/status` and
//! `/cost`, and the footer after each turn. Each reads or changes the running [`Setup`] and prints through [`crate::ui::output`].

use crate::config::PermissionMode;
use crate::llm::Usage;
use crate::setup::Setup;
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;
use crate::ui::term::Term;

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

pub use crate::ui::render::tokens;

/// The dim line after each turn: how long it took, its tokens in and out, and how full the
/// context window is (`context`: tokens used and the window).
pub fn footer(
    style: Style,
    elapsed: std::time::Duration,
    turn: Usage,
    context: Option<(u64, u64)>,
) -> Term {
    let mut text = format!("{:.1}s", elapsed.as_secs_f64());
    // An interrupted request has no usage: no counts rather than a false zero.
    if turn.prompt_tokens > 0 || turn.completion_tokens > 0 {
        text.push_str(&format!(
            " · {} in{} · {} out",
            tokens(turn.prompt_tokens),
            cached(turn),
            tokens(turn.completion_tokens)
        ));
    }
    if let Some((used, window)) = context {
        let percent = crate::agent::context::percent_of(used, window);
        text.push_str(&format!(" · context {percent}% of {}", tokens(window)));
    }
    style.dim(&text)
}

/// ` (9.1k cached)`: how much of the input the prompt cache served, when it served any.
fn cached(usage: Usage) -> String {
    if usage.cache_read_tokens == 0 {
        String::new()
    } else {
        format!(" ({} cached)", tokens(usage.cache_read_tokens))
    }
}

pub use crate::ui::render::cost;

/// `/cost`: the session's tokens, and what they cost when settings give the model's price.
pub fn cost_report(setup: &Setup, style: Style) {
    let usage = setup.agent.usage();
    stdout_line(format!(
        "tokens this session: {} in, {} out ({} model requests)",
        usage.prompt_tokens,
        usage.completion_tokens,
        setup.agent.total_turns()
    ));
    if usage.cache_read_tokens + usage.cache_write_tokens + usage.reasoning_tokens > 0 {
        stdout_line(format!(
            "of which: {} in read from the prompt cache, {} in written to it, {} out reasoning",
            usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens
        ));
    }
    match setup.settings.prices.get(setup.agent.model()) {
        Some(price) => stdout_line(format!(
            "cost: ${:.4} at ${}/M in, ${}/M out ({})",
            cost(usage, *price),
            price.input_per_m_tok,
            price.output_per_m_tok,
            setup.agent.model()
        )),
        None => stdout_line(style.dim(&format!(
            "no price for {} (settings `prices`: {{\"{}\": {{\"inputPerMTok\": 2.5, \"outputPerMTok\": 10}}}})",
            setup.agent.model(),
            setup.agent.model()
        ))),
    }
}

/// `/status`: what this session runs with.
pub async fn status(setup: &mut Setup, style: Style) {
    let servers: Vec<String> = setup
        .mcp
        .statuses()
        .iter()
        .map(|s| {
            let (state, _) = s.state.report();
            format!("{} ({state}, {} tools)", s.name, s.tools)
        })
        .collect();
    let usage = setup.agent.context_usage().await;
    let context = format!(
        "{} of {} tokens ({}%)",
        tokens(usage.used),
        tokens(usage.window),
        usage.percent()
    );
    let rows = [
        ("model", setup.agent.model().to_string()),
        ("API", setup.settings.api.as_str().to_string()),
        ("base URL", crate::redact::url(&setup.settings.base_url)),
        ("mode", setup.agent.permission_mode().as_str().to_string()),
        (
            "sandbox",
            super::status::sandbox(&setup.sandbox, setup.agent.permission_mode()),
        ),
        ("context", context),
        (
            "MCP servers",
            if servers.is_empty() {
                "none".to_string()
            } else {
                servers.join(", ")
            },
        ),
        ("session", setup.agent.session().id.to_string()),
        (
            "log",
            setup.paths.display(&setup.paths.logs_dir()).into_owned(),
        ),
    ];
    for (name, value) in rows {
        stdout_line(term!["  ", style.bold(&format!("{name:<12}")), " ", value]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Price;

    #[test]
    fn token_counts_and_costs_read_short() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(1_200_000), "1.2M");
        let usage = Usage::new(1_000_000, 500_000);
        let price = Price {
            input_per_m_tok: 2.5,
            output_per_m_tok: 10.0,
            ..Price::default()
        };
        assert!((cost(usage, price) - 7.5).abs() < 1e-9);
        // Anthropic's prices: reads a tenth of the input price, writes a quarter more.
        let cached = Usage {
            cache_read_tokens: 800_000,
            cache_write_tokens: 100_000,
            ..usage
        };
        let priced = Price {
            cache_read_per_m_tok: Some(0.25),
            cache_write_per_m_tok: Some(3.125),
            ..price
        };
        let expected = (100_000.0 * 2.5 + 800_000.0 * 0.25 + 100_000.0 * 3.125 + 5e5 * 10.0) / 1e6;
        assert!((cost(cached, priced) - expected).abs() < 1e-9);
        let line = footer(Style::plain(), std::time::Duration::ZERO, cached, None);
        assert_eq!(line.as_str(), "0.0s · 1.0M in (800.0k cached) · 500.0k out");
        let line = footer(
            Style::plain(),
            std::time::Duration::from_millis(1234),
            usage,
            None,
        );
        assert_eq!(line.as_str(), "1.2s · 1.0M in · 500.0k out");
        let line = footer(
            Style::plain(),
            std::time::Duration::ZERO,
            Usage::default(),
            Some((4200, 128_000)),
        );
        assert_eq!(line.as_str(), "0.0s · context 3% of 128.0k");
    }
}
