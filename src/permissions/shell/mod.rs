//! What a bash command runs, found by a real parse (tree-sitter-bash): every simple command
//! bash would run, through lists, pipelines, subshells, groups, `if`/`for`/`while`/`case`,
//! command and process substitutions and here-documents, each as its words after quote
//! removal, and through wrappers that run another command (`sudo`, `timeout`, `env -S`,
//! `find -exec`, `sh -c`). What cannot be known from the text (`$x` as the program, `eval`,
//! `source`, aliases, functions, `trap`) is reported, not guessed; so are output redirections
//! to files and text that does not parse.

//! The parse is `parse.rs`'s, the walk over it `walk.rs`'s, and what it finds ([`Analysis`])
//! `analysis.rs`'s.

mod analysis;
pub mod effects;
pub mod equivalents;
mod parse;
mod programs;
mod walk;
mod words;
mod wrappers;

pub use analysis::{Analysis, Command, Inner};
pub use programs::{TWO_WORD_COMMANDS, is_harmless_env, is_interpreter, skip_global_options};
pub use words::{Word, render_words};

/// Whether the program of `words` runs another command (`sudo`, `timeout`, `sh`, `find`).
pub fn is_wrapper(words: &[Word]) -> bool {
    wrappers::unwrap(words).is_some()
}

/// Everything `text` runs.
pub fn analyze(text: &str) -> Analysis {
    walk::analyze_at(text, 0)
}

#[cfg(test)]
#[path = "tests.rs"]
pub(super) mod tests;
