//! How a bash command splits into the simple commands that permission rules are matched
//! against: deny rules look into every part of a chain (past `if`/`then`, `NAME=value` and
//! wrappers such as `sudo`), while allow rules only ever match one plain command.

/// Words before a command that are not the command (`if x; then rm y; fi`).
const KEYWORDS: &[&str] = &["if", "then", "do", "else", "elif", "while", "until"];

/// Commands that run a command named in their arguments. Their options are not parsed
/// (`sudo -u root rm x`), so every later word is tried as the start of the command.
const WRAPPERS: &[&str] = &[
    "time", "exec", "command", "builtin", "env", "nohup", "sudo", "doas", "xargs", "nice",
    "timeout",
];

/// Splits a command into the simple commands a deny rule is matched against: on the shell's
/// separators, groupings and substitutions, and past leading keywords, `NAME=value`
/// assignments and wrappers. Quotes are ignored on purpose: for a deny rule, seeing a command
/// where there is none only makes it stricter.
pub(super) fn simple_commands(command: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for part in command.split([';', '&', '|', '\n', '(', ')', '`']) {
        let mut rest = part;
        let mut wrapped = false;
        loop {
            rest = rest.trim_start_matches(|c: char| c.is_whitespace() || "${}!".contains(c));
            let word = rest.split(char::is_whitespace).next().unwrap_or_default();
            if word.is_empty() {
                break;
            }
            let assignment = assignment_len(rest);
            if wrapped {
                found.push(rest);
            } else if WRAPPERS.contains(&word) {
                wrapped = true;
            } else if assignment.is_none() && !KEYWORDS.contains(&word) {
                found.push(rest);
                break;
            }
            rest = &rest[assignment.unwrap_or(word.len())..];
        }
    }
    found
}

/// The length of a leading `NAME=value` word, its value possibly quoted (`A="x y" rm z`).
fn assignment_len(text: &str) -> Option<usize> {
    let name = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|&end| end > 0 && text[end..].starts_with('='))?;
    if text.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut quote = None;
    for (i, c) in text.char_indices().skip(name + 1) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c.is_whitespace() => return Some(i),
            None => {}
        }
    }
    Some(text.len())
}

/// `eval`, `sh -c` and a shell reading its commands from stdin run text no rule can see into,
/// so they count as matching every bash deny rule.
pub(super) fn runs_text_as_commands(command: &str) -> bool {
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or_default();
    let program = program.rsplit('/').next().unwrap_or_default();
    if program == "eval" {
        return true;
    }
    if !["sh", "bash", "zsh", "dash", "ksh"].contains(&program) {
        return false;
    }
    let mut no_script = true;
    for word in words {
        if word.starts_with('-') && !word.starts_with("--") && word.contains('c') {
            return true;
        }
        no_script &= word.starts_with('-');
    }
    no_script
}

/// A command with no separator, pipe, substitution or output redirection, so a prefix rule
/// cannot be stretched to run something else. `2>&1` is common and harmless, so it is allowed.
pub(super) fn is_simple(command: &str) -> bool {
    !command.replace("2>&1", "").chars().any(|c| {
        matches!(
            c,
            ';' | '&' | '|' | '\n' | '`' | '$' | '>' | '<' | '(' | ')'
        )
    })
}
