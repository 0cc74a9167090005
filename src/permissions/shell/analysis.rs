//! What a command text runs, as the walk finds it: each simple [`Command`] with the commands
//! it runs in turn, why part of the text cannot be known, the files it writes, and the text in
//! canonical form (quotes normalised, one blank between tokens) for exact rules.

use tree_sitter::{Node, Tree, TreeCursor};

use super::words::{self, Word};

/// A simple command and what it runs in turn.
#[derive(Debug, Clone)]
pub struct Command {
    /// `NAME=value` set for this command only (exported to it), as written.
    pub assignments: Vec<Word>,
    /// The words bash runs, the program by its basename (`/bin/rm` is `rm`). Empty for a
    /// statement that only sets variables (`x=1`, `export A=1`).
    pub words: Vec<Word>,
    /// The program as written (`./scripts/check.sh`, `/bin/rm`), for finding the file it runs;
    /// `None` for a statement that only sets variables.
    pub program: Option<Word>,
    /// Commands it runs: a wrapper's command, each `find -exec`.
    pub inner: Vec<Inner>,
    /// It needs no allow rule of its own (`timeout 5`, `LC_ALL=C`); what it runs still does.
    pub transparent: bool,
}

#[derive(Debug, Clone)]
pub struct Inner {
    /// Where the wrapped command starts among the wrapper's words.
    pub start: usize,
    pub command: Command,
}

/// Everything a command text runs, as far as its text tells.
#[derive(Debug, Default, Clone)]
pub struct Analysis {
    pub commands: Vec<Command>,
    /// Why part of it cannot be known from the text, one sentence each.
    pub opaque: Vec<String>,
    /// Files written by output redirections (not `/dev/null`, not `2>&1`).
    pub writes: Vec<String>,
    /// Where the text does not parse as bash.
    pub error: Option<String>,
    /// The parse, kept for [`Analysis::canonical`], which only exact rules need.
    pub(super) parsed: Option<(Tree, String)>,
    canonical: std::sync::OnceLock<String>,
}

impl Analysis {
    /// The whole text with quotes normalised and one blank between tokens, for exact rules.
    pub fn canonical(&self) -> &str {
        self.canonical.get_or_init(|| match &self.parsed {
            Some((tree, source)) => canonical(tree.root_node(), source),
            None => String::new(),
        })
    }
}

/// Node kinds that are one word of a command.
const WORDS: &[&str] = &[
    "word",
    "number",
    "raw_string",
    "string",
    "ansi_c_string",
    "translated_string",
    "concatenation",
    "simple_expansion",
    "expansion",
];

/// The text as tokens with one blank between them: words after quote removal (quoted again
/// where needed), operators as written, comments left out.
fn canonical(root: Node, src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut push = |token: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(token);
    };
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let kind = node.kind();
        let mut descend = false;
        if WORDS.contains(&kind) {
            push(&words::word(node, src).render());
        } else if node.child_count() == 0 {
            let text = words::node_text(node, src).trim();
            if !text.is_empty() && kind != "comment" {
                push(text);
            }
        } else {
            descend = kind != "comment";
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        if !next_node(&mut cursor) {
            return out;
        }
    }
}

/// Moves a pre-order walk on: to the next sibling, or an ancestor's. False at the end.
fn next_node(cursor: &mut TreeCursor) -> bool {
    loop {
        if cursor.goto_next_sibling() {
            return true;
        }
        if !cursor.goto_parent() {
            return false;
        }
    }
}
