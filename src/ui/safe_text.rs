//! Makes text from outside Ling (model text, tool output, MCP servers, hooks, HTTP bodies) safe
//! for a terminal: every character a terminal would act on instead of showing is made visible.
//!
//! C0 controls other than newline and tab (`ESC` → `^[`, `\r` → `^M`, `BEL` → `^G`), DEL (`^?`),
//! C1 controls (U+0080..U+009F → `<U+009B>`) and the Unicode bidi overrides and isolates
//! (U+202A..U+202E, U+2066..U+2069, which make shown text differ from what runs: "Trojan
//! Source") are shown instead of acted on. Every escape sequence (CSI, OSC 52 clipboard writes,
//! OSC 0/2 titles, DCS...) starts with ESC or a C1 control, so none survives. A `\r\n` pair within
//! one piece of text becomes `\n`.
//!
//! The mapping is per character, so text that arrives in deltas is safe piece by piece: an escape
//! split over two deltas cannot slip through (a `\r\n` split over two shows as `^M` and a
//! newline). Text that needs no change is returned borrowed; the scan is one pass over the bytes.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character made visible; borrowed when there is none.
pub fn neutralise(text: &str) -> Cow<'_, str> {
    match find_special(text.as_bytes(), 0) {
        None => Cow::Borrowed(text),
        Some(first) => {
            let mut out = String::with_capacity(text.len() + 16);
            push_from(text, first, 0, &mut out);
            Cow::Owned(out)
        }
    }
}

/// `text` for a piece that must stay on one row (a sub-agent's description, an approval's
/// rule): neutralised, each newline shown as `⏎` and each tab as a space, so text from outside
/// Ling cannot start a line that looks like Ling's own.
pub fn one_row(text: &str) -> String {
    neutralise(text).replace('\n', "⏎").replace('\t', " ")
}

/// Appends the neutralised form of `text` to `out`.
pub fn neutralise_into(text: &str, out: &mut String) {
    match find_special(text.as_bytes(), 0) {
        None => out.push_str(text),
        Some(first) => push_from(text, first, 0, out),
    }
}

/// Whether `text` would be changed by [`neutralise`].
pub fn needs_neutralising(text: &str) -> bool {
    find_special(text.as_bytes(), 0).is_some()
}

/// A JSON text (already escaped by serde_json, so without raw C0 controls) with the C1 controls
/// and bidi characters left raw inside its strings written as `\uXXXX` escapes: the same JSON
/// value, safe for a terminal. Borrowed when there is none.
pub fn json_for_terminal(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let Some(mut at) = find_special(bytes, 0) else {
        return Cow::Borrowed(json);
    };
    let mut out = String::with_capacity(json.len() + 16);
    let mut run = 0;
    loop {
        out.push_str(&json[run..at]);
        let (c, len) = char_at(json, at);
        // Not reachable from serde_json output, but a raw C0 control must not pass either.
        let _ = write!(out, "\\u{:04x}", u32::from(c));
        run = at + len;
        match find_special(bytes, run) {
            Some(next) => at = next,
            None => break,
        }
    }
    out.push_str(&json[run..]);
    Cow::Owned(out)
}

/// Writes `text[run..]` to `out`, neutralised; `at` is the first special character at or after
/// `run`.
fn push_from(text: &str, mut at: usize, mut run: usize, out: &mut String) {
    let bytes = text.as_bytes();
    loop {
        out.push_str(&text[run..at]);
        let (c, len) = char_at(text, at);
        push_visible(c, bytes.get(at + len).copied(), out);
        run = at + len;
        match find_special(bytes, run) {
            Some(next) => at = next,
            None => break,
        }
    }
    out.push_str(&text[run..]);
}

/// The character at byte `at` (a char boundary) and its length in bytes.
fn char_at(text: &str, at: usize) -> (char, usize) {
    let c = text[at..].chars().next().unwrap_or('\0');
    (c, c.len_utf8())
}

/// The visible form of one special character; `next` is the byte after it.
fn push_visible(c: char, next: Option<u8>, out: &mut String) {
    match c {
        // `\r\n` is a line end; the newline itself follows as plain text.
        '\r' if next == Some(b'\n') => {}
        '\x7f' => out.push_str("^?"),
        c if u32::from(c) < 0x20 => {
            out.push('^');
            out.push(char::from(
                u8::try_from(u32::from(c) ^ 0x40).unwrap_or(b'?'),
            ));
        }
        c => {
            let _ = write!(out, "<U+{:04X}>", u32::from(c));
        }
    }
}

/// The byte index of the first character at or after `from` that must be made visible. Only
/// ASCII bytes and the lead bytes 0xC2 / 0xE2 can start one, so every index returned is a char
/// boundary of valid UTF-8.
fn find_special(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        if !(0x20..0x7f).contains(&b) {
            let special = match b {
                b'\t' | b'\n' => false,
                0x00..=0x1f | 0x7f => true,
                // U+0080..U+009F: C2 80..C2 9F.
                0xc2 => matches!(bytes.get(i + 1), Some(0x80..=0x9f)),
                // U+202A..U+202E: E2 80 AA..AE; U+2066..U+2069: E2 81 A6..A9.
                0xe2 => matches!(
                    (bytes.get(i + 1), bytes.get(i + 2)),
                    (Some(0x80), Some(0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
                ),
                _ => false,
            };
            if special {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn n(text: &str) -> String {
        neutralise(text).into_owned()
    }

    #[test]
    fn osc_52_clipboard_write_is_shown_not_run() {
        assert_eq!(
            n("hi\x1b]52;c;cm0gLXJmIH4=\x07there"),
            "hi^[]52;c;cm0gLXJmIH4=^Gthere"
        );
        // OSC ended by ST (ESC \) instead of BEL.
        assert_eq!(n("\x1b]52;c;eA==\x1b\\"), "^[]52;c;eA==^[\\");
    }

    #[test]
    fn osc_0_and_2_title_changes_are_shown() {
        assert_eq!(n("\x1b]0;pwned\x07"), "^[]0;pwned^G");
        assert_eq!(n("\x1b]2;pwned\x1b\\"), "^[]2;pwned^[\\");
    }

    #[test]
    fn csi_screen_clear_and_cursor_moves_are_shown() {
        assert_eq!(n("\x1b[2J\x1b[H\x1b[1A\x1b[2K"), "^[[2J^[[H^[[1A^[[2K");
        assert_eq!(n("\x1bP1$r\x1b\\"), "^[P1$r^[\\");
    }

    #[test]
    fn a_carriage_return_cannot_overwrite_what_was_shown() {
        assert_eq!(
            n("touch PWNED\r\x1b[Kls"),
            "touch PWNED^M^[[Kls",
            "a lone \\r shows"
        );
        assert_eq!(n("a\r\nb\r\n"), "a\nb\n", "\\r\\n is a line end");
        assert_eq!(n("a\r\r\n"), "a^M\n");
        assert_eq!(n("\r"), "^M");
    }

    #[test]
    fn c1_controls_and_del_are_shown() {
        assert_eq!(n("a\u{9b}2Jb"), "a<U+009B>2Jb", "C1 CSI");
        assert_eq!(n("\u{9d}0;t\u{9c}"), "<U+009D>0;t<U+009C>", "C1 OSC and ST");
        assert_eq!(n("\u{80}\u{85}\u{9f}"), "<U+0080><U+0085><U+009F>");
        assert_eq!(n("x\x7fy"), "x^?y");
        assert_eq!(n("\0\x01\x08\x0b\x0c\x1f"), "^@^A^H^K^L^_");
    }

    #[test]
    fn bidi_overrides_and_isolates_are_shown() {
        assert_eq!(
            n("if admin \u{202e}{ }\u{2066}"),
            "if admin <U+202E>{ }<U+2066>"
        );
        for c in [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{2067}', '\u{2068}',
        ] {
            assert!(needs_neutralising(&c.to_string()), "{c:?}");
        }
        assert_eq!(n("\u{2069}"), "<U+2069>");
        // Neighbours of those ranges are ordinary text.
        for c in [
            '\u{2029}', '\u{202f}', '\u{2065}', '\u{206a}', '\u{a0}', '\u{7e}',
        ] {
            assert!(!needs_neutralising(&c.to_string()), "{c:?}");
        }
    }

    #[test]
    fn an_escape_split_across_two_deltas_is_still_shown() {
        let deltas = ["before \x1b", "]52;c;eA==\x07 \u{9b}", "2J after"];
        let joined: String = deltas.iter().map(|d| n(d)).collect();
        assert_eq!(joined, "before ^[]52;c;eA==^G <U+009B>2J after");
        assert!(!joined.contains('\x1b'));
    }

    #[test]
    fn tabs_newlines_and_valid_utf8_are_untouched_and_borrowed() {
        for text in [
            "plain ascii",
            "tab\there\nnewline\n",
            "héllo wörld ✓ — «» 日本語 🦀",
            "\u{a0}\u{ff}\u{100}\u{2028}",
            "",
        ] {
            assert!(
                matches!(neutralise(text), Cow::Borrowed(t) if t == text),
                "{text:?}"
            );
        }
        assert_eq!(n("é\x1bé"), "é^[é");
        let mut out = String::from("> ");
        neutralise_into("a\x1bb", &mut out);
        assert_eq!(out, "> a^[b");
    }

    #[test]
    fn json_for_a_terminal_escapes_c1_and_bidi_and_stays_the_same_value() {
        let value = serde_json::json!({"t": "a\u{9b}2J\u{202e}b\x1b]0;x\x07", "n": 1});
        let text = value.to_string();
        let safe = json_for_terminal(&text);
        assert!(!needs_neutralising(&safe), "{safe}");
        let back: serde_json::Value =
            serde_json::from_str(&safe).unwrap_or_else(|e| panic!("{e}: {safe}"));
        assert_eq!(back, value);
        assert!(matches!(
            json_for_terminal("{\"a\":\"é\"}"),
            Cow::Borrowed(_)
        ));
    }
}
