//! The walk over one parse: every simple command bash would run, with its assignments and
//! words, the wrappers it goes through followed and the shell text it runs (`sh -c`) analysed
//! in turn; and what cannot be known from the text (a function defined, `eval`, a program only
//! known at run time), a reason in [`Analysis::opaque`] rather than a guess.

use tree_sitter::Node;

use super::analysis::{Analysis, Command, Inner};
use super::parse::parse;
use super::programs::{self, is_harmless_env};
use super::words::{self, Word};
use super::wrappers;

/// How deep `sh -c '...'` texts are followed.
const MAX_SCRIPT_DEPTH: usize = 8;

/// Everything `text` runs, `depth` shell texts deep.
pub(super) fn analyze_at(text: &str, depth: usize) -> Analysis {
    // A final newline changes nothing bash runs, but spares tree-sitter-bash an error-recovery
    // pass it otherwise makes at the end of a pipeline of three or more commands (~45 µs, ten
    // times the parse). Not after a backslash, which it would turn into a line continuation.
    let padded;
    let text = if text.ends_with('\n') || text.ends_with('\\') {
        text
    } else {
        padded = format!("{text}\n");
        padded.as_str()
    };
    let mut out = Analysis::default();
    let tree = match parse(text) {
        Ok(tree) => tree,
        Err(failure) => {
            out.error = Some(failure.to_string());
            return out;
        }
    };
    let root = tree.root_node();
    if root.has_error() {
        out.error = Some(describe_error(root, text));
    }
    let mut walker = Walker {
        src: text,
        out: &mut out,
        depth,
    };
    walker.walk(root);
    out.parsed = Some((tree.clone(), text.to_string()));
    out
}

fn describe_error(root: Node, src: &str) -> String {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let at = node.start_byte();
            let near: String = src.get(at..).unwrap_or_default().chars().take(20).collect();
            return if node.is_missing() || near.is_empty() {
                format!(
                    "the command is incomplete at byte {at} (a missing `{}`)",
                    node.kind()
                )
            } else {
                format!("the command does not parse as bash at byte {at} (near `{near}`)")
            };
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    "the command does not parse as bash".to_string()
}

struct Walker<'a> {
    src: &'a str,
    out: &'a mut Analysis,
    depth: usize,
}

impl Walker<'_> {
    fn opaque(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.out.opaque.contains(&reason) {
            self.out.opaque.push(reason);
        }
    }

    fn text(&self, node: Node) -> &str {
        words::node_text(node, self.src)
    }

    /// Every node once, in source order, with one cursor: no recursion, so no input nests
    /// deep enough to matter.
    fn walk(&mut self, root: Node) {
        let mut cursor = root.walk();
        let mut parents: Vec<&'static str> = Vec::new();
        loop {
            let node = cursor.node();
            let kind = node.kind();
            let descend = self.enter(node, kind, parents.last().copied());
            if descend && cursor.goto_first_child() {
                parents.push(kind);
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                parents.pop();
            }
        }
    }

    /// What a node adds to the analysis; false when its children need no walk.
    fn enter(&mut self, node: Node, kind: &str, parent: Option<&str>) -> bool {
        match kind {
            "command" => self.command(node),
            "function_definition" => {
                let name = node
                    .child_by_field_name("name")
                    .map_or("", |n| words::node_text(n, self.src));
                self.opaque(format!(
                    "it defines a function (`{name}`), so a later command name may run its body"
                ));
            }
            // One that belongs to a command or a declaration is part of it.
            "variable_assignment" if !matches!(parent, Some("command" | "declaration_command")) => {
                let word = self.assignment(node);
                self.setting(vec![word], false);
            }
            "declaration_command" => self.declaration(node),
            "for_statement" => {
                if let Some(variable) = node.child_by_field_name("variable") {
                    let name = self.text(variable).to_string();
                    self.setting(vec![Word::literal(format!("{name}="))], false);
                }
            }
            "file_redirect" => self.redirect(node),
            // `${x@P}` expands `x` like a prompt, command substitutions included.
            "expansion" if self.text(node).contains("@P") => {
                self.opaque("`${...@P}` runs the command substitutions in a variable's value");
            }
            "comment" => return false,
            _ => {}
        }
        true
    }

    /// A simple command: its assignments and words; what its substitutions run is found as
    /// the walk goes on into its children.
    fn command(&mut self, node: Node) {
        let mut assignments = Vec::new();
        let mut argv = Vec::new();
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                match (cursor.field_name(), child.kind()) {
                    (_, "variable_assignment") => assignments.push(self.assignment(child)),
                    (Some("name" | "argument"), _) => argv.push(words::word(child, self.src)),
                    _ => {}
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        if argv.is_empty() {
            if !assignments.is_empty() {
                self.setting(assignments, false);
            }
            return;
        }
        // Before the commands of any `sh -c` text it runs, as bash reads it.
        let at = self.out.commands.len();
        let command = self.build(assignments, argv, 0);
        self.out.commands.insert(at, command);
    }

    /// A simple command from its words: the program by its basename, builtins that run text
    /// as code flagged, wrappers followed.
    fn build(&mut self, assignments: Vec<Word>, mut argv: Vec<Word>, wraps: usize) -> Command {
        let written = argv[0].clone();
        argv[0] = argv[0].basename();
        let program = argv[0].clone();
        match program.lit() {
            None => self.opaque(format!(
                "the program `{}` is only known when the command runs",
                program.text
            )),
            Some(name) => {
                if let Some(reason) = runs_text_as_code(name, &argv) {
                    self.opaque(reason);
                }
            }
        }
        let mut command = Command {
            assignments,
            program: Some(written),
            words: argv,
            inner: Vec::new(),
            transparent: false,
        };
        if wraps > 32 {
            self.opaque("wrappers are nested too deeply to follow");
            return command;
        }
        let Some(wrapped) = wrappers::unwrap(&command.words) else {
            return command;
        };
        if let Some(reason) = wrapped.opaque {
            self.opaque(reason);
        }
        for script in wrapped.scripts {
            self.script(&script);
        }
        for inner in wrapped.inner {
            if inner.words.is_empty() {
                continue;
            }
            let built = self.build(inner.assignments, inner.words, wraps + 1);
            command.inner.push(Inner {
                start: inner.start,
                command: built,
            });
        }
        command.transparent = wrapped.transparent;
        command
    }

    /// Shell text a command runs (`sh -c TEXT`), checked like the command itself.
    fn script(&mut self, text: &str) {
        if self.depth + 1 > MAX_SCRIPT_DEPTH {
            self.opaque("shell text inside shell text is nested too deeply to check");
            return;
        }
        let inner = analyze_at(text, self.depth + 1);
        if inner.error.is_some() {
            self.opaque(format!(
                "the shell text `{}` does not parse as bash",
                words::Word::literal(text).render()
            ));
        }
        self.out.commands.extend(inner.commands);
        for reason in inner.opaque {
            self.opaque(reason);
        }
        self.out.writes.extend(inner.writes);
    }

    /// `NAME=value` as one word, with the checks that apply to every assignment.
    /// The word is literal even when the value is not: a rule may name `NAME=`, and a value
    /// only known at run time is the command's business, not the program's name.
    fn assignment(&mut self, node: Node) -> Word {
        let name = node
            .child_by_field_name("name")
            .map_or("", |n| words::node_text(n, self.src))
            .to_string();
        if programs::is_code_variable(&name) {
            self.opaque(format!("it sets `{name}`, whose value bash runs as code"));
        }
        let value = node
            .child_by_field_name("value")
            .map(|value| words::word(value, self.src));
        if let Some(value) = &value
            && !value.dynamic
            && (value.text.contains("$(") || value.text.contains('`'))
        {
            self.opaque(format!(
                "it stores command text in `{name}`, which bash could run later"
            ));
        }
        let op = if self.text(node).contains("+=") {
            "+="
        } else {
            "="
        };
        Word::literal(format!(
            "{name}{op}{}",
            value.map(|v| v.text).unwrap_or_default()
        ))
    }

    /// A statement that only sets variables: it needs an allow rule only when a variable could
    /// change what later programs run (`PATH=...`, `export GIT_DIR=...`).
    fn setting(&mut self, assignments: Vec<Word>, exported: bool) {
        let transparent = harmless_settings(&assignments, exported);
        self.out.commands.push(Command {
            assignments,
            program: None,
            words: Vec::new(),
            inner: Vec::new(),
            transparent,
        });
    }

    /// `export A=1 B`, `local x=$(...)`, `declare -x ...`: a command of its own words; the
    /// walk goes on into the values.
    fn declaration(&mut self, node: Node) {
        let mut words = Vec::new();
        let mut names = Vec::new();
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                let text = self.text(child).to_string();
                match child.kind() {
                    "variable_assignment" => {
                        let word = self.assignment(child);
                        names.push(word.clone());
                        words.push(word);
                    }
                    "variable_name" => {
                        names.push(Word::literal(format!("{text}=")));
                        words.push(Word::literal(text));
                    }
                    _ if !text.trim().is_empty() => words.push(Word::literal(text)),
                    _ => {}
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        let keyword = words.first().map(|w| w.text.clone()).unwrap_or_default();
        let exported = keyword == "export"
            || words
                .iter()
                .skip(1)
                .any(|w| w.text.starts_with('-') && w.text.contains('x'));
        self.out.commands.push(Command {
            assignments: Vec::new(),
            program: None,
            words,
            inner: Vec::new(),
            transparent: harmless_settings(&names, exported),
        });
    }

    /// An output redirection to a file writes it; `/dev/null` and fd duplications do not.
    fn redirect(&mut self, node: Node) {
        let mut cursor = node.walk();
        let operator = node
            .children(&mut cursor)
            .find(|c| !c.is_named())
            .map(|c| c.kind())
            .unwrap_or_default();
        let Some(destination) = node.child_by_field_name("destination") else {
            return;
        };
        let target = words::word(destination, self.src);
        let duplicates = destination.kind() == "number" || target.text == "-";
        let writes = match operator {
            ">" | ">>" | ">|" | "&>" | "&>>" => true,
            ">&" => !duplicates,
            _ => false,
        };
        let harmless = matches!(
            target.lit(),
            Some("/dev/null" | "/dev/stdout" | "/dev/stderr")
        );
        if writes && !harmless && destination.kind() != "process_substitution" {
            self.out.writes.push(target.render());
        }
    }
}

/// Whether setting these variables cannot change what later programs run: names bash and
/// programs ignore when they are set lower-case and not exported, or harmless ones.
fn harmless_settings(assignments: &[Word], exported: bool) -> bool {
    assignments.iter().all(|a| {
        let name = a.text.split(['=', '+']).next().unwrap_or_default();
        is_harmless_env(name) || (!exported && !name.chars().any(|c| c.is_ascii_uppercase()))
    })
}

/// Builtins that run text or files as commands, or change what a later name runs.
fn runs_text_as_code(program: &str, argv: &[Word]) -> Option<String> {
    let args = &argv[1..];
    let has = |flag: &str| {
        args.iter().any(|w| {
            w.lit()
                .is_some_and(|t| t.starts_with('-') && t.contains(flag))
        })
    };
    match program {
        "eval" => Some("`eval` runs text as a command".into()),
        "source" | "." => Some(format!("`{program}` runs the commands in a file")),
        "trap" => {
            // `trap [-lp] [[ACTION] SIGNAL...]`: one operand is a signal; `-` or `''` resets.
            let operands: Vec<&Word> = args
                .iter()
                .skip_while(|w| matches!(w.lit(), Some("-l" | "-p" | "-lp" | "-pl" | "--")))
                .collect();
            match operands.first() {
                Some(action) if operands.len() > 1 && !matches!(action.lit(), Some("" | "-")) => {
                    Some("`trap` sets a command to run later".into())
                }
                _ => None,
            }
        }
        "alias" if args.iter().any(|w| w.text.contains('=')) => {
            Some("`alias` defines a command name that runs something else".into())
        }
        "enable" if !args.is_empty() => Some("`enable` changes which builtins bash runs".into()),
        "hash" if has("p") => Some("`hash -p` makes a command name run another program".into()),
        "mapfile" | "readarray" if has("C") => Some(format!("`{program} -C` runs a callback")),
        "fc" => Some("`fc` runs commands from the history".into()),
        "let"
            if args
                .iter()
                .any(|w| !w.dynamic && (w.text.contains("$(") || w.text.contains('`'))) =>
        {
            Some("`let` evaluates text that can run commands".into())
        }
        _ => None,
    }
}
