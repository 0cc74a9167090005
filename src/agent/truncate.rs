//! Capping tool output before it reaches the model: the head and the tail are kept, and a note in
//! the middle says how much was cut.

/// Cuts `text` to about `limit` characters, keeping head and tail on character boundaries.
pub fn cap_middle(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_string();
    }
    let head_chars = limit * 2 / 3;
    let tail_chars = limit - head_chars;
    let head_end = text
        .char_indices()
        .nth(head_chars)
        .map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - tail_chars)
        .map_or(text.len(), |(i, _)| i);
    let cut = total - head_chars - tail_chars;
    let cut_lines = text[head_end..tail_start].matches('\n').count();
    format!(
        "{}\n\n[... {cut} characters ({cut_lines} lines) cut from the middle of this output ...]\n\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(cap_middle("abc", 10), "abc");
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_says_how_much_was_cut() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let capped = cap_middle(&text, 60);
        assert!(capped.starts_with("line 0\nline 1\n"), "{capped}");
        assert!(capped.ends_with("line 99\n"), "{capped}");
        let cut = text.chars().count() - 60;
        assert!(
            capped.contains(&format!("[... {cut} characters")),
            "{capped}"
        );
    }

    #[test]
    fn multibyte_characters_are_never_split() {
        let text = "é".repeat(50);
        let capped = cap_middle(&text, 10);
        assert!(capped.starts_with("éééééé"));
        assert!(capped.contains("40 characters"));
    }
}
