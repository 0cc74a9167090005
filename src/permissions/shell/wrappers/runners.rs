//! Programs that run commands in their own way: `find -exec`, shells and `coproc`.

use super::{Inner, Wrapped};
use crate::permissions::shell::programs::is_bash_like_shell;
use crate::permissions::shell::words::Word;

/// `coproc [NAME] command`: bash runs it in the background, and tree-sitter does not parse
/// its compound form, so it is never taken as known; a simple wrapped command is still
/// matched against deny rules.
pub(super) fn coproc(words: &[Word]) -> Wrapped {
    let mut wrapped = Wrapped::runs(1, words, false);
    wrapped.opaque =
        Some("`coproc` runs a command in a way the permission check cannot follow".into());
    wrapped
}

/// `find ... -exec CMD ... ;` (also `-execdir`, `-ok`, `-okdir`, and `+`): each runs CMD,
/// with `{}` replaced by found paths.
pub(super) fn find(words: &[Word]) -> Wrapped {
    let mut wrapped = Wrapped::nothing(false);
    let mut i = 1;
    while i < words.len() {
        let action = words[i].lit();
        if !matches!(action, Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < words.len() {
            match words[end].lit() {
                Some(";") => break,
                Some("+") if end > start && words[end - 1].text == "{}" => break,
                _ => end += 1,
            }
        }
        let command: Vec<Word> = words[start..end]
            .iter()
            .map(|w| {
                if w.text.contains("{}") {
                    Word::dynamic(w.text.clone(), false)
                } else {
                    w.clone()
                }
            })
            .collect();
        if !command.is_empty() {
            wrapped.inner.push(Inner {
                start,
                assignments: Vec::new(),
                words: command,
            });
        }
        i = end + 1;
    }
    wrapped
}

/// A shell: `-c TEXT` is parsed in turn (for bash-like shells); a script file is code the
/// rules cannot see, like any interpreter's; no script at all, `-s` or `-` reads standard
/// input, which cannot be known.
pub(super) fn shell(program: &str, words: &[Word]) -> Wrapped {
    let mut command = false;
    let mut stdin = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(text) = word.lit() else {
            // The command text after `-c`, or a script given as `<(...)`.
            if command || word.text.starts_with("<(") {
                break;
            }
            return Wrapped::opaque(format!(
                "`{program}` is given `{}`, only known when the command runs",
                word.text
            ));
        };
        if text == "--" || text == "-" {
            i += 1;
            stdin |= text == "-" && !command;
            break;
        }
        if text.starts_with("--") {
            i += if matches!(text, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if !(text.starts_with('-') || text.starts_with('+')) || text.len() < 2 {
            break;
        }
        let cluster = &text[1..];
        command |= cluster.contains('c');
        stdin |= cluster.contains('s');
        // `-o NAME` / `+O NAME` take the next word.
        i += if cluster.ends_with('o') || cluster.ends_with('O') {
            2
        } else {
            1
        };
    }
    if command {
        return match words.get(i) {
            None => Wrapped::nothing(false),
            Some(text) if text.dynamic => Wrapped::opaque(format!(
                "`{program} -c` runs `{}`, text only known when the command runs",
                text.text
            )),
            Some(text) if is_bash_like_shell(program) => Wrapped {
                scripts: vec![text.text.clone()],
                ..Wrapped::nothing(false)
            },
            Some(_) => Wrapped::opaque(format!(
                "`{program} -c` runs text in a shell language Ling does not parse"
            )),
        };
    }
    match words.get(i) {
        _ if stdin => Wrapped::opaque(format!(
            "`{program}` reads the commands it runs from standard input"
        )),
        None => Wrapped::opaque(format!(
            "`{program}` with no script reads the commands it runs from standard input"
        )),
        Some(script) if script.dynamic => Wrapped::opaque(format!(
            "`{program}` runs the script `{}`, only known when the command runs",
            script.text
        )),
        Some(script)
            if matches!(
                script.text.as_str(),
                "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0"
            ) =>
        {
            Wrapped::opaque(format!(
                "`{program}` reads the commands it runs from standard input"
            ))
        }
        // A script file: code an interpreter runs, which rules do not see.
        Some(_) => Wrapped::nothing(false),
    }
}
