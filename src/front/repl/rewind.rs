//! The REPL's `/rewind` (also Esc Esc at an empty prompt): a picker of the session's user
//! messages with what each turn changed, then what to put back (code and conversation, code
//! only, conversation only); `/rewind N [code|conversation]` skips the picker. A file someone
//! other than Ling changed since is shown and overwritten only with a yes. The message gone
//! back before comes back into the input line when the conversation was rewound. And `/fork`.

use crate::config::extensions::RESERVED_COMMANDS;
use crate::session::{
    Command, EventSink, Host, Reply, RewindPoint, RewindRequest, RewindScope, parse_rewind,
};
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// `/rewind [ARGS]`: what goes back into the input line, if anything.
pub(super) async fn rewind(
    host: &mut Host,
    args: &str,
    style: Style,
    sink: &dyn EventSink,
) -> Option<String> {
    debug_assert!(RESERVED_COMMANDS.contains(&"rewind"));
    let mut request = if args.is_empty() {
        pick(host, style).await?
    } else {
        match parse_rewind(&format!("/rewind {args}"))? {
            Ok(request) => request,
            Err(e) => {
                stdout_line(term![style.yellow("?"), " ", e.to_string()]);
                return None;
            }
        }
    };
    if request.scope != RewindScope::Conversation && !request.force && !request.dry_run {
        request.force = overwrite_changed(host, request, style, sink).await?;
    }
    let Reply::Rewound(report) = super::submit(host, Command::Rewind(request), sink).await else {
        return None;
    };
    let root = host.paths().project_root.clone();
    for line in report.describe(&root).lines() {
        stdout_line(style.dim(line));
    }
    if let Some(why) = report.left_behind() {
        stdout_line(term![style.yellow("note:"), " ", why]);
    }
    (request.scope != RewindScope::Code && !request.dry_run).then_some(report.prompt)
}

/// The picker: which message, then what to put back. `None`: cancelled.
async fn pick(host: &Host, style: Style) -> Option<RewindRequest> {
    let points = host.rewind_points();
    if points.is_empty() {
        stdout_line(style.dim("nothing to rewind yet: this session has no message"));
        return None;
    }
    let width = crate::ui::output::terminal_width().unwrap_or(80);
    let number_width = points.len().to_string().len() + 2;
    for point in &points {
        let changes = changes(point);
        let room = width.saturating_sub(number_width + changes.chars().count() + 6);
        let prompt = crate::ui::render::one_line(&point.prompt, room.max(10));
        stdout_line(term![
            style.bold(&format!(
                "  {:>number_width$}",
                format!("[{}]", point.number)
            )),
            " ",
            prompt,
            "  ",
            style.dim(&changes)
        ]);
    }
    let count = points.len();
    let answer = read(format!(
        "rewind to just before which message? [1-{count}, Enter to cancel] "
    ))
    .await;
    let Some(to) = answer
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=count).contains(n))
    else {
        stdout_line(style.dim("not rewound"));
        return None;
    };
    let scope = read(
        "put back: [1] code and conversation  [2] code only  [3] conversation only  (Enter: cancel) "
            .to_string(),
    )
    .await;
    let scope = match scope.trim() {
        "1" => RewindScope::Both,
        "2" => RewindScope::Code,
        "3" => RewindScope::Conversation,
        _ => {
            stdout_line(style.dim("not rewound"));
            return None;
        }
    };
    Some(RewindRequest {
        to,
        scope,
        force: false,
        dry_run: false,
    })
}

/// `+3 files, −1, 2 commands`: what a turn changed, for the picker.
fn changes(point: &RewindPoint) -> String {
    let Some(c) = point.changes else {
        return "no checkpoint of its files".into();
    };
    let mut parts = Vec::new();
    if c.created + c.changed > 0 {
        parts.push(format!(
            "+{} file{}",
            c.created + c.changed,
            plural(c.created + c.changed)
        ));
    }
    if c.removed > 0 {
        parts.push(format!("−{}", c.removed));
    }
    if c.commands > 0 {
        parts.push(format!("{} command{}", c.commands, plural(c.commands)));
    }
    if parts.is_empty() {
        "no file changed".into()
    } else {
        parts.join(", ")
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Files someone other than Ling changed since the message, found by a dry run: shown, and
/// `Some(true)` when the user says to overwrite them; `None`: cancelled.
async fn overwrite_changed(
    host: &mut Host,
    request: RewindRequest,
    style: Style,
    sink: &dyn EventSink,
) -> Option<bool> {
    let dry = RewindRequest {
        scope: RewindScope::Code,
        dry_run: true,
        ..request
    };
    let Reply::Rewound(report) = super::submit(host, Command::Rewind(dry), sink).await else {
        return None;
    };
    let changed: Vec<_> = report
        .files
        .iter()
        .flat_map(|f| &f.not_restored)
        .filter(|n| n.why == crate::checkpoint::Kept::ChangedOutside)
        .collect();
    if changed.is_empty() {
        return Some(false);
    }
    let root = host.paths().project_root.clone();
    stdout_line(term![
        style.yellow("changed outside Ling since then:"),
        format!(" {} file(s)", changed.len())
    ]);
    for kept in &changed {
        let shown = kept.path.strip_prefix(&root).unwrap_or(&kept.path);
        stdout_line(format!(
            "  {}",
            crate::ui::safe_text::one_row(&shown.display().to_string())
        ));
    }
    let answer = read("overwrite them too? [y/N] ".to_string()).await;
    Some(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// One answer typed at `prompt`; empty on Ctrl-C, Ctrl-D or Esc.
pub(super) async fn read(prompt: String) -> String {
    tokio::task::spawn_blocking(move || {
        let mut editor = rustyline::DefaultEditor::new().ok()?;
        editor.readline(&prompt).ok()
    })
    .await
    .ok()
    .flatten()
    .unwrap_or_default()
}

/// `/fork`: the conversation goes on in a new session; the one it was is left as it is.
pub(super) async fn fork(host: &mut Host, style: Style, sink: &dyn EventSink) {
    let before = host.session_id().to_string();
    if let Reply::Forked(id) = super::submit(host, Command::Fork, sink).await {
        stdout_line(style.dim(&format!(
            "forked: this conversation goes on as session {id}; {before} is left as it was \
             (ling --resume {before})"
        )));
    }
}
