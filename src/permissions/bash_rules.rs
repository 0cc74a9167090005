//! Matching `bash(PREFIX*)` and `bash(EXACT)` rules against what a command runs (see
//! [`super::shell`]): on normalised words, the rule's own text normalised the same way.
//!
//! - A deny rule matches when any command bash would run matches it, in any of the forms a
//!   rule may name it by: as written, past the program's global options (`git -C . push` is
//!   `git push`), or as the command a wrapper runs (`timeout 5 rm x` is `rm x`). A word only
//!   known at run time where the rule needs a word makes the match unknown, which denies.
//! - An allow rule set allows a command text only when every command in it is allowed,
//!   nothing in it is unknown, it parses, and it writes no file by redirection; unless an
//!   exact rule names the whole text. A wrapper that changes who or how a command runs
//!   (`sudo`, `env GIT_DIR=...`, `find`) needs a rule of its own, unless the rule names the
//!   wrapped command too (`bash(sudo apt install*)`). An option that makes a reading command
//!   write a file or run a program (`git diff --output=F`, `sort -o F`, `sed 'w F'`) is allowed
//!   only by a rule that names it ([`super::shell::effects`]; equivalents in
//!   [`super::shell::equivalents`]).
//! - Deny rules also match what a command is equivalent to: `find -delete` is `rm -rf`,
//!   `git send-pack` is `git push`, an alias given on the command line or in `GIT_CONFIG_*` is
//!   what it stands for, and a `git` subcommand that may be an alias from a config file makes
//!   the match unknown.

use super::bash_glob::{Glob, GlobMatch};
use super::shell::{self, Analysis, Command, Word};

/// The command part of a bash rule, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashPattern {
    exact: bool,
    /// A rule with a `*` before its end (`bash(*rm *)`, `bash(git * main)`): matched on each
    /// command's text ([`super::bash_glob`]) instead of word by word.
    glob: Option<Glob>,
    /// The rule's command as words; `None` when it is not one simple command (`cd a &&
    /// make`), which only an exact rule can match, on [`Analysis::canonical`].
    words: Option<Vec<Word>>,
    /// A prefix rule without a blank before its `*` also matches a longer last word
    /// (`bash(git pu*)` matches `git push`).
    partial_last: bool,
    canonical: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Match,
    /// A word only known when the command runs stands where the rule needs a word.
    Unknown,
    NoMatch,
}

impl BashPattern {
    pub fn new(text: &str, exact: bool) -> Self {
        let analysis = shell::analyze(text);
        let words = match analysis.commands.as_slice() {
            // `bash(*)`: every command.
            [] if text.trim().is_empty() => Some(Vec::new()),
            [command] if analysis.error.is_none() => {
                let mut words = command.assignments.clone();
                words.extend(command.words.iter().cloned());
                Some(words)
            }
            _ => None,
        };
        Self {
            exact,
            glob: None,
            words,
            partial_last: !exact && !text.ends_with(char::is_whitespace),
            canonical: analysis.canonical().to_string(),
        }
    }

    /// A rule with wildcards anywhere (`*rm *`); `Err` says why Ling cannot read it.
    pub fn wildcard(text: &str) -> Result<Self, &'static str> {
        let glob = Glob::new(text)?;
        Ok(Self {
            exact: false,
            glob: Some(glob),
            words: None,
            partial_last: false,
            canonical: text.to_string(),
        })
    }

    fn verdict(&self, form: &[Word]) -> Verdict {
        if let Some(glob) = &self.glob {
            return match glob.matches_words(form) {
                GlobMatch::Match => Verdict::Match,
                GlobMatch::Unknown => Verdict::Unknown,
                GlobMatch::NoMatch => Verdict::NoMatch,
            };
        }
        let Some(pattern) = &self.words else {
            return Verdict::NoMatch;
        };
        for (i, want) in pattern.iter().enumerate() {
            let Some(word) = form.get(i) else {
                return Verdict::NoMatch;
            };
            if word.dynamic {
                if want.dynamic && want.text == word.text {
                    continue;
                }
                return Verdict::Unknown;
            }
            if want.dynamic {
                return Verdict::NoMatch;
            }
            let last = i + 1 == pattern.len();
            let same = if last && self.partial_last {
                word.text.starts_with(&want.text)
            } else {
                word.text == want.text
            };
            if !same {
                return Verdict::NoMatch;
            }
        }
        if !self.exact {
            return Verdict::Match;
        }
        match &form[pattern.len().min(form.len())..] {
            [] => Verdict::Match,
            rest if rest.iter().all(|w| w.splits) => Verdict::Unknown,
            _ => Verdict::NoMatch,
        }
    }

    /// Whether the rule names a wrapped command starting at word `start`. A wildcard rule
    /// never does: the wrapped command must be allowed by itself.
    fn covers(&self, start: usize) -> bool {
        if self.glob.is_some() {
            return false;
        }
        self.exact || self.words.as_ref().is_some_and(|w| w.len() > start)
    }

    /// Whether the rule matches the whole text (an exact rule for a compound command, or
    /// one whose words are not a single command).
    fn matches_text(&self, analysis: &Analysis) -> bool {
        if let Some(glob) = &self.glob {
            return glob.matches_text(analysis.canonical());
        }
        if self.exact {
            self.canonical == analysis.canonical()
        } else {
            self.words.is_none() && analysis.canonical().starts_with(&self.canonical)
        }
    }
}

/// The forms a deny rule may name a command by, with the command shown for each.
fn deny_forms(command: &Command, out: &mut Vec<Vec<Word>>) {
    if !command.words.is_empty() {
        out.push(command.words.clone());
        if let Some(skipped) = shell::skip_global_options(&command.words, false) {
            out.push(skipped);
        }
        let (same, scripts) = shell::equivalents::equivalents(&command.assignments, &command.words);
        out.extend(same);
        for script in scripts {
            let analysis = shell::analyze(&script);
            // A `!` alias that does not parse is unknown where a rule needs its program.
            if analysis.error.is_some() || !analysis.opaque.is_empty() {
                out.push(vec![Word::dynamic(script.clone(), true)]);
            }
            for command in &analysis.commands {
                deny_forms(command, out);
            }
        }
    }
    if !command.assignments.is_empty() {
        let mut written = command.assignments.clone();
        written.extend(command.words.iter().cloned());
        out.push(written);
    }
    for inner in &command.inner {
        if let Some(program) = command.words.first() {
            let mut named = vec![program.clone()];
            named.extend(inner.command.words.iter().cloned());
            out.push(named);
        }
        deny_forms(&inner.command, out);
    }
}

/// Every form of every command `analysis` runs that a deny rule may name, worked out once
/// for all the deny rules.
pub fn deny_forms_of(analysis: &Analysis) -> Vec<Vec<Word>> {
    let mut forms = Vec::new();
    for command in &analysis.commands {
        deny_forms(command, &mut forms);
    }
    forms
}

/// How `pattern` matches anything `analysis` runs (its `forms` from [`deny_forms_of`]), and
/// the command it matched.
pub fn deny_verdict(
    pattern: &BashPattern,
    analysis: &Analysis,
    forms: &[Vec<Word>],
) -> (Verdict, String) {
    if pattern.matches_text(analysis) {
        return (Verdict::Match, analysis.canonical().to_string());
    }
    let mut unknown = None;
    for form in forms {
        match pattern.verdict(form) {
            Verdict::Match => return (Verdict::Match, shell::render_words(form)),
            Verdict::Unknown if unknown.is_none() => unknown = Some(shell::render_words(form)),
            _ => {}
        }
    }
    match unknown {
        Some(shown) => (Verdict::Unknown, shown),
        None => (Verdict::NoMatch, String::new()),
    }
}

/// Whether every command `analysis` runs is allowed by one of `patterns`.
pub fn allowed(patterns: &[&BashPattern], analysis: &Analysis) -> bool {
    if patterns.is_empty() || analysis.error.is_some() {
        return false;
    }
    if patterns.iter().any(|p| p.exact && p.matches_text(analysis)) {
        return true;
    }
    if !analysis.opaque.is_empty() || !analysis.writes.is_empty() || analysis.commands.is_empty() {
        return false;
    }
    analysis
        .commands
        .iter()
        .all(|command| command_allowed(patterns, command))
}

fn command_allowed(patterns: &[&BashPattern], command: &Command) -> bool {
    let harmless = harmless_assignments(command);
    let mut forms: Vec<(Vec<Word>, usize)> = Vec::new();
    if harmless && !command.words.is_empty() {
        forms.push((command.words.clone(), 0));
        if let Some(skipped) = shell::skip_global_options(&command.words, true) {
            forms.push((skipped, 0));
        }
    }
    if !command.assignments.is_empty() {
        let mut written = command.assignments.clone();
        written.extend(command.words.iter().cloned());
        forms.push((written, command.assignments.len()));
    }
    let mut matched = false;
    for pattern in patterns {
        for (form, offset) in &forms {
            if pattern.verdict(form) != Verdict::Match {
                continue;
            }
            // A word that makes it write a file or run a program must be named by the rule.
            if let Some((at, _)) = shell::effects::effect(&form[*offset..])
                && !pattern.covers(at + offset)
            {
                continue;
            }
            matched = true;
            if command
                .inner
                .iter()
                .all(|i| pattern.covers(i.start + offset))
            {
                return true;
            }
        }
    }
    // A statement that only sets variables has its assignments judged in `transparent`.
    let settles = command.words.is_empty() || harmless;
    if !(matched || (command.transparent && settles)) {
        return false;
    }
    command
        .inner
        .iter()
        .all(|inner| command_allowed(patterns, &inner.command))
}

fn harmless_assignments(command: &Command) -> bool {
    command
        .assignments
        .iter()
        .all(|a| shell::is_harmless_env(a.text.split('=').next().unwrap_or_default()))
}

/// The rule an "always" answer records: the prefix of the command that really runs
/// (`env LC_ALL=C ls -la` → `bash(ls*)`, `git -C sub status -s` → `bash(git status*)`), or
/// the exact command when that would name a wrapper or an interpreter, the command is
/// compound, or part of it cannot be known.
pub fn session_rule(text: &str, analysis: &Analysis) -> String {
    prefix_rule(analysis).unwrap_or_else(|| exact_rule(text.trim()))
}

fn prefix_rule(analysis: &Analysis) -> Option<String> {
    if analysis.error.is_some() || !analysis.opaque.is_empty() || !analysis.writes.is_empty() {
        return None;
    }
    let [first] = analysis.commands.as_slice() else {
        return None;
    };
    let mut command = first;
    while command.transparent && harmless_assignments(command) && command.inner.len() == 1 {
        command = &command.inner[0].command;
    }
    let program = command.words.first()?.lit()?;
    if !command.inner.is_empty()
        || !harmless_assignments(command)
        || shell::is_interpreter(program)
        || shell::is_wrapper(&command.words)
    {
        return None;
    }
    let mut prefix = Word::literal(program).render();
    if shell::TWO_WORD_COMMANDS.contains(&program) {
        let skipped = shell::skip_global_options(&command.words, true);
        let words = skipped.as_deref().unwrap_or(&command.words);
        if let Some(sub) = words
            .get(1)
            .and_then(Word::lit)
            .filter(|s| !s.starts_with('-'))
        {
            prefix = format!("{prefix} {}", Word::literal(sub).render());
        }
    }
    // Only a rule that would allow this very command again is worth recording.
    let pattern = BashPattern::new(&prefix, false);
    allowed(&[&pattern], analysis).then(|| format!("bash({prefix}*)"))
}

/// `bash(TEXT)`; a text ending in `*` gets a comment after it, or the rule would be a prefix
/// rule.
fn exact_rule(text: &str) -> String {
    if text.ends_with('*') {
        format!("bash({text} #)")
    } else {
        format!("bash({text})")
    }
}

#[cfg(test)]
#[path = "bash_rules_tests.rs"]
mod tests;
