//! tree-sitter-bash, one parser per thread, given text it cannot be crashed by.

use std::borrow::Cow;
use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

thread_local! {
    /// Making a parser costs more than parsing a short command, so each thread keeps one.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Why there is no parse at all (text that does not parse as bash still has one).
#[derive(Debug, thiserror::Error)]
pub(super) enum ParseFailure {
    #[error("the bash parser is busy")]
    Busy,
    #[error("the bash grammar cannot be loaded: {0}")]
    Grammar(#[from] tree_sitter::LanguageError),
    #[error("the bash parser gave no result")]
    NoResult,
}

/// The tree-sitter-bash parse of `text`.
pub(super) fn parse(text: &str) -> Result<Tree, ParseFailure> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| ParseFailure::Busy)?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_bash::LANGUAGE.into())?;
            *slot = Some(parser);
        }
        slot.as_mut()
            .and_then(|parser| parser.parse(shielded(text).as_bytes(), None))
            .ok_or(ParseFailure::NoResult)
    })
}

/// `text` made safe for tree-sitter-bash 0.25, whose scanner hands the character after a `{`
/// (and after `{1..`) to C's `isdigit`, which is undefined past one byte: `{` then U+E0000
/// reads out of bounds and kills the process. For the parse, such a character is written as
/// as many `x` as it has bytes. Bash reads both as plain word characters, and every byte
/// offset stays the same, so the words are still cut from the real text.
pub(super) fn shielded(text: &str) -> Cow<'_, str> {
    /// Where the scanner would be: after `{` or `{1..` it tests the next character.
    #[derive(Clone, Copy)]
    enum At {
        Other,
        Tested,
        Dot,
    }
    if text.is_ascii() || !text.contains('{') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = At::Other;
    for c in text.chars() {
        if matches!(at, At::Tested) && !c.is_ascii() {
            out.extend(std::iter::repeat_n('x', c.len_utf8()));
            at = At::Other;
            continue;
        }
        out.push(c);
        at = match (at, c) {
            (_, '{') => At::Tested,
            (At::Tested, '0'..='9') => At::Tested,
            (At::Tested, '.') => At::Dot,
            (At::Dot, '.') => At::Tested,
            _ => At::Other,
        };
    }
    Cow::Owned(out)
}
