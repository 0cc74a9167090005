//! The pure half of compaction: where the history is cut (every tool call stays with its
//! result), the conversation rendered as text for the summary request and split into parts
//! that fit, the history rebuilt from a summary and the recent messages, and which old tool
//! outputs may be elided from what is sent.

use std::collections::HashSet;

use super::estimate;
use crate::llm::Message;

/// A tool output shorter than this is never elided: the note would save little.
pub const ELIDE_MIN_CHARS: usize = 2_000;
/// How much of one tool output the summary request sees (head and tail).
const RENDERED_TOOL_OUTPUT: usize = 2_000;
/// The first words of the message that carries a summary, so it is recognised again.
pub const SUMMARY_HEADER: &str = "[This conversation was compacted to fit the model's context.";

/// Where to cut `history` so that the messages from the cut on, kept verbatim, cost at most
/// `budget` tokens: never at a tool result (its call stays with it). `None` when nothing
/// before the cut could be summarised.
pub fn cut_point(history: &[Message], budget: u64) -> Option<usize> {
    let mut cost = 0;
    let mut cut = history.len();
    for (index, message) in history.iter().enumerate().rev() {
        cost += estimate::message(message);
        if cost > budget {
            break;
        }
        if !matches!(message, Message::Tool { .. }) {
            cut = index;
        }
    }
    // Keep at least the last message that is not a tool result when it fits nowhere else.
    if cut == history.len() {
        cut = history
            .iter()
            .rposition(|m| !matches!(m, Message::Tool { .. }))?;
    }
    (cut > 0).then_some(cut)
}

/// The index of the last message the user wrote (not a summary).
fn last_user(history: &[Message]) -> Option<usize> {
    history.iter().rposition(|m| match m {
        Message::User { content, .. } => !content.starts_with(SUMMARY_HEADER),
        _ => false,
    })
}

/// The history after compaction: the summary, the user's latest request when it was before
/// the cut, then `history[cut..]` verbatim.
pub fn rebuild(history: &[Message], cut: usize, summary: &str) -> Vec<Message> {
    let mut rebuilt = vec![Message::user(format!(
        "{SUMMARY_HEADER} The earlier part of it is summarised below; the most recent messages \
         follow verbatim.]\n\n<summary>\n{}\n</summary>",
        summary.trim()
    ))];
    if let Some(index) = last_user(history).filter(|&i| i < cut)
        && let Message::User { content, images } = &history[index]
    {
        rebuilt.push(Message::user_with_images(
            format!("[My latest request, from before the summary:]\n\n{content}"),
            images.clone(),
        ));
    }
    rebuilt.extend(history[cut..].iter().cloned());
    rebuilt
}

/// One message as the summary request reads it.
fn render(message: &Message) -> String {
    match message {
        Message::System { content } => format!("SYSTEM:\n{content}\n"),
        Message::User { content, images } => format!("USER:\n{content}\n{}", image_notes(images)),
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let mut text = String::from("ASSISTANT:\n");
            if let Some(content) = content {
                text.push_str(content);
                text.push('\n');
            }
            for call in tool_calls {
                text.push_str(&format!(
                    "(called tool {} with {})\n",
                    call.name(),
                    crate::agent::cap_middle(call.arguments(), RENDERED_TOOL_OUTPUT)
                ));
            }
            text
        }
        Message::Tool {
            content, images, ..
        } => format!(
            "TOOL RESULT:\n{}\n{}",
            crate::agent::cap_middle(content, RENDERED_TOOL_OUTPUT),
            image_notes(images)
        ),
    }
}

/// What the summary request reads for images: their names and sizes (it gets no pictures).
fn image_notes(images: &[crate::media::ImageRef]) -> String {
    images
        .iter()
        .map(|image| format!("(image: {})\n", image.label()))
        .collect()
}

/// `history` as text for the summary request, in parts of at most about `part_tokens` tokens
/// each (one message over it is a part of its own, cut to fit).
pub fn render_parts(history: &[Message], part_tokens: u64) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut cost = 0;
    for message in history {
        let mut text = render(message);
        let mut tokens = estimate::text(&text);
        if tokens > part_tokens {
            // About four characters a token: cut the middle to fit.
            let chars = usize::try_from(part_tokens.saturating_mul(3)).unwrap_or(usize::MAX);
            text = crate::agent::cap_middle(&text, chars.max(200));
            tokens = estimate::text(&text);
        }
        if cost + tokens > part_tokens && !part.is_empty() {
            parts.push(std::mem::take(&mut part));
            cost = 0;
        }
        part.push_str(&text);
        part.push('\n');
        cost += tokens;
    }
    if !part.is_empty() {
        parts.push(part);
    }
    parts
}

/// The tool results that may be elided, oldest first: those before `protect_from` (the recent
/// messages are kept whole) and long enough to be worth it, not already elided.
pub fn elidable(history: &[Message], protect_from: usize, elided: &HashSet<String>) -> Vec<String> {
    history[..protect_from.min(history.len())]
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                tool_call_id,
                content,
                ..
            } if content.len() >= ELIDE_MIN_CHARS && !elided.contains(tool_call_id) => {
                Some(tool_call_id.clone())
            }
            _ => None,
        })
        .collect()
}

/// The note sent instead of an elided tool output.
pub fn elision_note(content: &str) -> String {
    format!(
        "[output elided to save context: {} characters; run the tool again if you need it]",
        content.chars().count()
    )
}

/// `history` as sent: elided tool outputs replaced by their note.
pub fn with_elisions(history: &[Message], elided: &HashSet<String>) -> Vec<Message> {
    history
        .iter()
        .map(|m| match m {
            Message::Tool {
                tool_call_id,
                content,
                ..
            } if elided.contains(tool_call_id) => {
                Message::tool(tool_call_id.clone(), elision_note(content))
            }
            other => other.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    fn call(id: &str) -> Message {
        Message::assistant(None, vec![ToolCall::new(id, "bash", r#"{"command":"ls"}"#)])
    }

    fn conversation() -> Vec<Message> {
        vec![
            Message::user("first request"),
            call("a"),
            Message::tool("a", "x".repeat(4000)),
            Message::assistant(Some("done".into()), Vec::new()),
            Message::user("second request"),
            call("b"),
            Message::tool("b", "y".repeat(400)),
            call("c"),
            Message::tool("c", "z".repeat(400)),
        ]
    }

    #[test]
    fn the_cut_never_separates_a_call_from_its_result() {
        let history = conversation();
        for budget in 0..3000 {
            let Some(cut) = cut_point(&history, budget) else {
                continue;
            };
            assert!(cut > 0 && cut < history.len());
            assert!(
                !matches!(history[cut], Message::Tool { .. }),
                "budget {budget} cut at a tool result"
            );
        }
        // A budget for the last call and its result keeps those two.
        let last_two = estimate::messages(&history[7..]);
        assert_eq!(cut_point(&history, last_two), Some(7));
        assert_eq!(cut_point(&history, last_two + 5), Some(7));
        let last_four = estimate::messages(&history[5..]);
        assert_eq!(cut_point(&history, last_four), Some(5));
        // A large one keeps everything: nothing to summarise.
        assert_eq!(cut_point(&history, 1_000_000), None);
    }

    #[test]
    fn the_rebuilt_history_has_the_summary_the_latest_request_and_the_recent_messages() {
        let history = conversation();
        let rebuilt = rebuild(&history, 7, "we listed files");
        assert_eq!(rebuilt.len(), 4);
        let Message::User { content, .. } = &rebuilt[0] else {
            panic!("{rebuilt:?}")
        };
        assert!(content.starts_with(SUMMARY_HEADER) && content.contains("we listed files"));
        assert_eq!(
            rebuilt[1],
            Message::user("[My latest request, from before the summary:]\n\nsecond request")
        );
        assert_eq!(&rebuilt[2..], &history[7..]);
        // Cut at the latest request itself: it is kept once, verbatim.
        let rebuilt = rebuild(&history, 4, "s");
        assert_eq!(&rebuilt[1..], &history[4..]);
    }

    #[test]
    fn parts_fit_their_budget_and_long_outputs_are_cut() {
        let history = conversation();
        let parts = render_parts(&history, 400);
        assert!(parts.len() > 1, "{parts:?}");
        for part in &parts {
            assert!(estimate::text(part) <= 800, "{}", estimate::text(part));
        }
        let all = render_parts(&history, 100_000).join("");
        assert!(all.contains("USER:\nfirst request") && all.contains("called tool bash"));
        assert!(!all.contains(&"x".repeat(3000)), "tool outputs are capped");
    }

    #[test]
    fn only_old_long_outputs_are_elided() {
        let history = conversation();
        let mut elided = HashSet::new();
        assert_eq!(elidable(&history, 4, &elided), vec!["a".to_string()]);
        assert!(elidable(&history, 2, &elided).is_empty());
        elided.insert("a".to_string());
        assert!(elidable(&history, 9, &elided).is_empty());
        let sent = with_elisions(&history, &elided);
        assert_eq!(
            sent[2],
            Message::tool(
                "a",
                "[output elided to save context: 4000 characters; run the tool again if you need it]"
            )
        );
        assert_eq!(sent[6], history[6]);
    }
}
