//! The REPL's commands about the session itself: `/mode`, `/permissions`, `/status` and
//! `/cost`, and the footer after each turn. Each reads or changes the session through its host
//! and prints through [`crate::ui::output`].

use crate::config::PermissionMode;
use crate::llm::Usage;
use crate::session::{Command, EventSink, Host, Status};
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;
use crate::ui::term::Term;

/// `/mode` shows the permission mode; `/mode NAME` changes it for the rest of the session.
pub async fn mode(host: &mut Host, name: Option<&str>, style: Style, sink: &dyn EventSink) {
    let Some(name) = name else {
        stdout_line(format!(
            "mode: {} (Shift-Tab cycles; /mode NAME sets: default, accept-edits, plan, bypass)",
            host.status().mode.as_str()
        ));
        return;
    };
    match PermissionMode::parse(name) {
        Some(mode) => {
            super::submit(host, Command::SetMode(mode), sink).await;
            stdout_line(format!("mode set to {}", mode.as_str()));
        }
        None => stdout_line(term![
            style.yellow("?"),
            format!(" no mode {name:?}; the modes are default, accept-edits, plan and bypass")
        ]),
    }
}

/// `/permissions`: the rules in force and where each came from.
pub fn list_rules(host: &Host, style: Style) {
    stdout_line(format!("mode: {}", host.status().mode.as_str()));
    let rules = host.permission_rules();
    if rules.is_empty() {
        stdout_line(style.dim("no rules; /permissions allow|deny RULE adds one"));
        return;
    }
    let width = rules
        .iter()
        .map(|(_, r, _)| r.chars().count())
        .max()
        .unwrap_or(0);
    for (allow, rule, origin) in rules {
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
        let percent = crate::session::percent_of(used, window);
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
pub fn cost_report(host: &Host, style: Style) {
    let usage = host.usage();
    stdout_line(format!(
        "tokens this session: {} in, {} out ({} model requests)",
        usage.prompt_tokens,
        usage.completion_tokens,
        host.total_turns()
    ));
    if usage.cache_read_tokens + usage.cache_write_tokens + usage.reasoning_tokens > 0 {
        stdout_line(format!(
            "of which: {} in read from the prompt cache, {} in written to it, {} out reasoning",
            usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens
        ));
    }
    match host.settings().price(host.model()) {
        Some(price) => stdout_line(format!(
            "cost: ${:.4} at ${}/M in, ${}/M out ({})",
            cost(usage, price),
            price.input_per_m_tok,
            price.output_per_m_tok,
            host.model()
        )),
        None => stdout_line(style.dim(&format!(
            "no price for {} (settings `prices`: {{\"{}\": {{\"inputPerMTok\": 2.5, \"outputPerMTok\": 10}}}})",
            host.model(),
            host.model()
        ))),
    }
}

/// `/status`: what this session runs with (the session's one status value).
pub async fn status(host: &mut Host, style: Style) {
    let usage = host.context_usage().await;
    let facts = StatusFacts {
        api: host.settings().api.as_str(),
        base_url: crate::redact::url(&host.settings().base_url),
        sandbox: host.sandbox().clone(),
        context: (usage.used, usage.window, usage.percent()),
        log: host.paths().display(&host.paths().logs_dir()).into_owned(),
        background: {
            let tasks = host.background_tasks();
            let running = tasks
                .iter()
                .filter(|t| t.state == crate::tools::TaskState::Running)
                .count();
            (running, tasks.len())
        },
        web_search: host.settings().web_search.describe(),
        imported: imported(&host.settings().user_compat_files),
    };
    for (name, value) in status_rows(&host.status(), &facts) {
        stdout_line(term!["  ", style.bold(&format!("{name:<12}")), " ", value]);
    }
}

/// What `/status` shows besides the status value.
pub struct StatusFacts {
    pub api: &'static str,
    pub base_url: String,
    pub sandbox: crate::process::sandbox::Decision,
    /// Tokens used, the window, the percentage.
    pub context: (u64, u64, u64),
    pub log: String,
    /// Background commands running, and started in all.
    pub background: (usize, usize),
    /// Where `web_search` searches, or how to add a provider (`web search: ...`).
    pub web_search: String,
    /// Your own Claude Code and Codex files the session took in (`claudeCompat`,
    /// `codexCompat`), `~`-relative.
    pub imported: Vec<String>,
}

/// `files` as `/status` names them: under the home directory as `~/...`.
fn imported(files: &[std::path::PathBuf]) -> Vec<String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    files
        .iter()
        .map(
            |f| match home.as_deref().and_then(|h| f.strip_prefix(h).ok()) {
                Some(rel) => format!("~/{}", rel.display()),
                None => f.display().to_string(),
            },
        )
        .collect()
}

/// `/status`'s rows: a name and its value.
pub fn status_rows(now: &Status, facts: &StatusFacts) -> Vec<(&'static str, String)> {
    let servers: Vec<String> = now
        .servers
        .iter()
        .map(|s| {
            let (state, _) = s.state.report();
            format!("{} ({state}, {} tools)", s.name, s.tools)
        })
        .collect();
    let (used, window, percent) = facts.context;
    let mut model = now.model.clone();
    if let Some(next) = &now.pending_model {
        model.push_str(&format!(" (next request: {next})"));
    }
    vec![
        ("model", model),
        ("API", facts.api.to_string()),
        ("base URL", facts.base_url.clone()),
        ("mode", now.mode.as_str().to_string()),
        ("sandbox", super::status::sandbox(&facts.sandbox, now.mode)),
        (
            "context",
            format!("{} of {} tokens ({percent}%)", tokens(used), tokens(window)),
        ),
        (
            "MCP servers",
            if servers.is_empty() {
                "none".to_string()
            } else {
                servers.join(", ")
            },
        ),
        ("background", {
            let (running, all) = facts.background;
            format!("{running} running of {all} started (/tasks)")
        }),
        ("session", now.session_id.clone()),
        ("trust", now.trust.as_str().to_string()),
        (
            "web search",
            facts
                .web_search
                .strip_prefix("web search: ")
                .unwrap_or(&facts.web_search)
                .to_string(),
        ),
        (
            "imported",
            if facts.imported.is_empty() {
                "none".to_string()
            } else {
                facts.imported.join(", ")
            },
        ),
        ("log", facts.log.clone()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/status` as the user sees it, pinned.
    #[test]
    fn status_as_the_user_sees_it() {
        use crate::config::{PermissionMode, SandboxMode};
        use crate::mcp::{ServerState, ServerStatus};
        let mut sandbox = crate::process::sandbox::Decision::off();
        sandbox.mode = SandboxMode::WorkspaceWrite;
        sandbox.network = false;
        let server = |name: &str, state: ServerState, tools: usize| ServerStatus {
            name: name.into(),
            transport: "stdio",
            state,
            tools,
            server_info: None,
        };
        let now = Status {
            mode: PermissionMode::Plan,
            model: "gpt-4o".into(),
            pending_model: Some("gpt-4.1".into()),
            sandbox: sandbox.effective(PermissionMode::Plan),
            servers: vec![
                server("db", ServerState::Connected, 3),
                server("web", ServerState::Failed("exited with 1".into()), 0),
            ],
            session_id: "3f2a".into(),
            trust: crate::trust::TrustStatus::Trusted,
            project_root: "/p".into(),
        };
        let facts = StatusFacts {
            api: "chat",
            base_url: "https://api.openai.com/v1".into(),
            sandbox,
            context: (12_345, 128_000, 9),
            log: "~/.ling/logs".into(),
            background: (1, 2),
            web_search: "web search: SearXNG at http://localhost:8888".into(),
            imported: vec![
                "~/.claude/settings.json".into(),
                "~/.codex/rules/default.rules".into(),
            ],
        };
        let rows: Vec<String> = status_rows(&now, &facts)
            .into_iter()
            .map(|(name, value)| format!("{name:<12} {value}"))
            .collect();
        insta::assert_snapshot!(rows.join("\n"));
    }
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
