//! The REPL's line editor: rustyline with `\` continuation, Tab completion shown as a list
//! (slash commands with their descriptions, `/model` names from the server, `@path` project
//! files matched fuzzily, the index built again after a tool may have written files),
//! Shift-Tab to cycle the permission mode (said in place, with what it means), a prompt that
//! shows the mode when it is not `default`, and a pasted block of several lines shown as
//! `[pasted N lines]` (and sent whole).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, ConditionalEventHandler, Context, Event, EventContext, EventHandler, Helper, KeyCode,
    KeyEvent, Modifiers, RepeatCount,
};

use crate::config::PermissionMode;
use crate::llm::LlmConfig;
use crate::ui::style::Style;

/// Project files offered for `@` completion at most (a huge tree is cut, not walked whole).
const MAX_FILES: usize = 20_000;

/// What completion needs from the session, shared with the REPL loop.
pub struct ReplHelper {
    commands: Vec<(String, String)>,
    root: PathBuf,
    /// The project's files for `@` completion, listed at the first use after a refresh.
    files: Mutex<Option<Arc<Vec<String>>>>,
    models: OnceLock<Vec<String>>,
    model_config: Mutex<LlmConfig>,
    runtime: tokio::runtime::Handle,
    /// Set by Shift-Tab: the line being edited, to be restored after the mode changes.
    pub cycle: Arc<Mutex<Option<String>>>,
    /// Esc at an empty prompt, twice: `/rewind`.
    escapes: Arc<Mutex<Escapes>>,
    /// Bracketed pastes of the line being edited.
    pastes: Arc<Mutex<Pastes>>,
}

/// A bracketed paste as it arrives, key by key, and the blocks of the line being edited that
/// stand as `[pasted N lines]` until the line is sent.
#[derive(Default)]
struct Pastes {
    /// Inside a paste: what it brought so far.
    open: Option<String>,
    /// The pasted blocks of the current line, in order.
    blocks: Vec<String>,
}

/// What a pasted block of `lines` lines shows as in the line being edited.
fn placeholder(lines: usize) -> String {
    format!("[pasted {lines} lines]")
}

impl ReplHelper {
    pub fn new(commands: Vec<(String, String)>, root: PathBuf, model_config: LlmConfig) -> Self {
        Self {
            commands,
            root,
            files: Mutex::new(None),
            models: OnceLock::new(),
            model_config: Mutex::new(model_config),
            runtime: tokio::runtime::Handle::current(),
            cycle: Arc::new(Mutex::new(None)),
            escapes: Arc::default(),
            pastes: Arc::default(),
        }
    }

    /// The key bindings this helper needs on its editor.
    pub fn bind(editor: &mut rustyline::Editor<Self, rustyline::history::DefaultHistory>) {
        let cycle = editor.helper().map(|h| h.cycle.clone()).unwrap_or_default();
        editor.bind_sequence(
            KeyEvent(KeyCode::BackTab, Modifiers::NONE),
            EventHandler::Conditional(Box::new(CycleMode(cycle))),
        );
        // Esc Esc at an empty prompt opens `/rewind`, as in Claude Code (two Esc keys read
        // together come as Alt-Esc).
        let escapes = editor
            .helper()
            .map(|h| h.escapes.clone())
            .unwrap_or_default();
        for modifiers in [Modifiers::NONE, Modifiers::ALT] {
            editor.bind_sequence(
                KeyEvent(KeyCode::Esc, modifiers),
                EventHandler::Conditional(Box::new(EscTwice(escapes.clone()))),
            );
        }
        // rustyline inserts a bracketed paste whole and shows it; these take the paste key by
        // key instead, so that a block of several lines shows as one placeholder.
        let pastes = editor
            .helper()
            .map(|h| h.pastes.clone())
            .unwrap_or_default();
        editor.bind_sequence(
            KeyEvent(KeyCode::BracketedPasteStart, Modifiers::NONE),
            EventHandler::Conditional(Box::new(Paste(pastes.clone()))),
        );
        editor.bind_sequence(
            KeyEvent(KeyCode::BracketedPasteEnd, Modifiers::NONE),
            EventHandler::Conditional(Box::new(Paste(pastes.clone()))),
        );
        editor.bind_sequence(
            Event::Any,
            EventHandler::Conditional(Box::new(Paste(pastes))),
        );
    }

    /// `line` as sent: each `[pasted N lines]` placeholder replaced by its block, in order.
    pub fn expand_pastes(&self, line: String) -> String {
        let mut pastes = self.pastes.lock().unwrap_or_else(|e| e.into_inner());
        pastes.open = None;
        let mut line = line;
        for block in std::mem::take(&mut pastes.blocks) {
            let shown = placeholder(block.lines().count());
            if let Some(at) = line.find(&shown) {
                line.replace_range(at..at + shown.len(), &block);
            }
        }
        line
    }

    /// Whether Esc Esc at an empty prompt is why the editor returned.
    pub fn take_rewind(&self) -> bool {
        let mut escapes = self.escapes.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut escapes.asked)
    }

    /// Takes the line saved by Shift-Tab, if that is why the editor returned.
    pub fn take_cycle(&self) -> Option<String> {
        self.cycle.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn files(&self) -> Arc<Vec<String>> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        files
            .get_or_insert_with(|| Arc::new(project_files(&self.root)))
            .clone()
    }

    /// A tool may have written files: the `@` index is listed again at its next use.
    pub fn refresh_files(&self) {
        *self.files.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The server's models, asked once (bounded) on the first `/model` completion.
    fn models(&self) -> &[String] {
        self.models.get_or_init(|| {
            let config = self
                .model_config
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            // Completion runs on the editor's blocking thread, outside the runtime's workers.
            self.runtime
                .block_on(async move { crate::llm::list_models(&config).await })
        })
    }
}

/// Regular files under `root` that git would not ignore, relative, sorted, at most [`MAX_FILES`].
fn project_files(root: &std::path::Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(root)
        .hidden(true)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            e.path()
                .strip_prefix(root)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .take(MAX_FILES)
        .collect();
    files.sort();
    files
}

/// The files that match `partial`, best first: those starting with it, then those whose name
/// starts with it, then those holding it, then those holding its characters in order
/// (`srmai` finds `src/main.rs`); case is ignored.
pub fn fuzzy_files<'a>(files: &'a [String], partial: &str) -> Vec<&'a str> {
    let wanted = partial.to_lowercase();
    let mut ranked: Vec<(u8, usize, &str)> = files
        .iter()
        .filter_map(|f| {
            let lower = f.to_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            let rank = if lower.starts_with(&wanted) {
                0
            } else if name.starts_with(&wanted) {
                1
            } else if lower.contains(&wanted) {
                2
            } else if in_order(&lower, &wanted) {
                3
            } else {
                return None;
            };
            Some((rank, f.len(), f.as_str()))
        })
        .collect();
    ranked.sort();
    ranked.into_iter().map(|(_, _, f)| f).collect()
}

fn in_order(text: &str, wanted: &str) -> bool {
    let mut chars = text.chars();
    wanted.chars().all(|w| chars.any(|c| c == w))
}

/// What a permission mode means, for the row Shift-Tab shows.
pub fn mode_meaning(mode: PermissionMode) -> &'static str {
    mode.meaning().short
}

/// After Shift-Tab: the prompt row it left (and the mode row of an earlier press, when
/// `replace`) is wiped, and the new mode is said on one row above the next prompt.
pub fn show_mode(style: Style, mode: PermissionMode, line: &str, replace: bool) {
    let width = crate::ui::output::terminal_width().unwrap_or(80).max(1);
    let shown = prompt(style, mode).raw.chars().count() + line.chars().count();
    let mut rows = shown / width + 1;
    if replace {
        rows += 1;
    }
    // rustyline ended the interrupted line with a newline: go back up over it.
    crate::ui::output::stdout(crate::ui::term::Term::wipe_rows_above(rows));
    crate::ui::output::stdout_line(crate::term![
        style.bold(mode.as_str()),
        style.dim(&format!(": {} (Shift-Tab: next mode)", mode_meaning(mode)))
    ]);
}

/// The prompt for `mode`: `> `, or the mode's name before it (bypass in red).
pub fn prompt(style: Style, mode: PermissionMode) -> ModePrompt {
    if mode == PermissionMode::Default {
        return ModePrompt {
            raw: "> ".into(),
            styled: "> ".into(),
        };
    }
    let raw = format!("{} > ", mode.as_str());
    let name = if mode == PermissionMode::Bypass {
        style.red(mode.as_str())
    } else {
        style.yellow(mode.as_str())
    };
    ModePrompt {
        styled: crate::term![name, " > "].as_str().to_string(),
        raw,
    }
}

/// The mode after `mode` in Shift-Tab's cycle.
pub fn next_mode(mode: PermissionMode) -> PermissionMode {
    match mode {
        PermissionMode::Default => PermissionMode::AcceptEdits,
        PermissionMode::AcceptEdits => PermissionMode::Plan,
        PermissionMode::Plan => PermissionMode::Bypass,
        PermissionMode::Bypass | PermissionMode::DontAsk => PermissionMode::Default,
    }
}

/// A prompt with its plain and its coloured form (the same width).
pub struct ModePrompt {
    raw: String,
    styled: String,
}

impl rustyline::Prompt for ModePrompt {
    fn raw(&self) -> &str {
        &self.raw
    }

    fn styled(&self) -> &str {
        &self.styled
    }
}

/// Esc Esc at an empty prompt asks for `/rewind`. The line editor (emacs keys) waits after an
/// Esc for the key it begins (Alt-x is Esc x), so Esc Esc comes as one Esc event, a lone Esc
/// as nothing until the next key.
#[derive(Default)]
struct Escapes {
    asked: bool,
}

struct EscTwice(Arc<Mutex<Escapes>>);

impl ConditionalEventHandler for EscTwice {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        if !ctx.line().is_empty() {
            return None;
        }
        self.0.lock().unwrap_or_else(|e| e.into_inner()).asked = true;
        Some(Cmd::Interrupt)
    }
}

struct CycleMode(Arc<Mutex<Option<String>>>);

impl ConditionalEventHandler for CycleMode {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(ctx.line().to_string());
        Some(Cmd::Interrupt)
    }
}

/// Takes a bracketed paste key by key: at its start nothing is inserted, each key inside it is
/// kept, and at its end the block goes into the line: as typed when it is one line, else as
/// `[pasted N lines]`, the block kept for [`ReplHelper::expand_pastes`].
struct Paste(Arc<Mutex<Pastes>>);

impl ConditionalEventHandler for Paste {
    fn handle(&self, evt: &Event, _: RepeatCount, _: bool, _: &EventContext) -> Option<Cmd> {
        let key = evt.get(0)?;
        let mut pastes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match key {
            KeyEvent(KeyCode::BracketedPasteStart, _) => {
                pastes.open = Some(String::new());
                Some(Cmd::Noop)
            }
            KeyEvent(KeyCode::BracketedPasteEnd, _) => {
                let block = pastes.open.take()?;
                let block = block.trim_end_matches('\n').to_string();
                let lines = block.lines().count();
                if lines <= 1 {
                    return Some(Cmd::Insert(1, block));
                }
                pastes.blocks.push(block);
                Some(Cmd::Insert(1, placeholder(lines)))
            }
            _ => {
                let open = pastes.open.as_mut()?;
                match *key {
                    KeyEvent(KeyCode::Char(c), Modifiers::NONE | Modifiers::SHIFT) => open.push(c),
                    KeyEvent(KeyCode::Enter, _)
                    | KeyEvent(KeyCode::Char('J' | 'M'), Modifiers::CTRL) => open.push('\n'),
                    KeyEvent(KeyCode::Tab, _) | KeyEvent(KeyCode::Char('I'), Modifiers::CTRL) => {
                        open.push('\t')
                    }
                    // Other keys inside a paste (escape sequences, controls) are dropped.
                    _ => {}
                }
                Some(Cmd::Noop)
            }
        }
    }
}

impl Helper for ReplHelper {}
impl Hinter for ReplHelper {
    type Hint = String;
}
impl Highlighter for ReplHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        Cow::Borrowed(line)
    }
}

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        if ctx.input().ends_with('\\') {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let head = &line[..pos];
        if let Some(partial) = head.strip_prefix("/model ") {
            let pairs = self
                .models()
                .iter()
                .filter(|m| m.starts_with(partial.trim_start()))
                .map(|m| Pair {
                    display: m.clone(),
                    replacement: m.clone(),
                })
                .collect();
            return Ok((head.len() - partial.trim_start().len(), pairs));
        }
        if head.starts_with('/') && !head.contains(' ') {
            let width = self
                .commands
                .iter()
                .map(|(n, _)| n.len())
                .max()
                .unwrap_or(0);
            let pairs = self
                .commands
                .iter()
                .filter(|(name, _)| name.starts_with(head))
                .map(|(name, help)| Pair {
                    display: format!("{name:<width$}  {help}"),
                    replacement: name.clone(),
                })
                .collect();
            return Ok((0, pairs));
        }
        let start = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        if let Some(partial) = head[start..].strip_prefix('@') {
            let files = self.files();
            let pairs = fuzzy_files(&files, partial)
                .into_iter()
                .take(200)
                .map(|f| Pair {
                    display: f.to_string(),
                    replacement: format!("@{f}"),
                })
                .collect();
            return Ok((start, pairs));
        }
        Ok((pos, Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_names_a_mode_other_than_default() {
        use rustyline::Prompt;
        assert_eq!(prompt(Style::plain(), PermissionMode::Default).raw(), "> ");
        assert_eq!(
            prompt(Style::plain(), PermissionMode::Plan).raw(),
            "plan > "
        );
        let bypass = prompt(Style { color: true }, PermissionMode::Bypass);
        assert_eq!(bypass.raw(), "bypass > ");
        assert_eq!(bypass.styled(), "\x1b[31mbypass\x1b[0m > ");
        let mut mode = PermissionMode::Default;
        let mut seen = Vec::new();
        for _ in 0..4 {
            mode = next_mode(mode);
            seen.push(mode.as_str());
        }
        assert_eq!(seen, ["accept-edits", "plan", "bypass", "default"]);
    }

    #[test]
    fn at_completion_matches_fuzzily_best_first() {
        let files: Vec<String> = [
            "README.md",
            "src/main.rs",
            "src/ui/mod.rs",
            "tests/main_test.rs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            fuzzy_files(&files, "src/"),
            vec!["src/main.rs", "src/ui/mod.rs"]
        );
        assert_eq!(
            fuzzy_files(&files, "main"),
            vec!["src/main.rs", "tests/main_test.rs"]
        );
        assert_eq!(fuzzy_files(&files, "srmai"), vec!["src/main.rs"]);
        assert_eq!(fuzzy_files(&files, "readme"), vec!["README.md"]);
        assert!(fuzzy_files(&files, "zzz").is_empty());
    }

    #[test]
    fn project_files_skip_what_git_ignores() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("target/out"), "").unwrap();
        assert_eq!(project_files(dir.path()), vec!["src/main.rs"]);
    }
}
