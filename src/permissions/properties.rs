//! Properties of the bash rule parser and matcher on generated command texts: no text panics
//! or hangs the parser, quoting a word never changes what it is, and a deny rule for a program
//! denies every command that runs it, however it is spelled, wrapped or combined.

use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::tools::bash::Bash;
use shell::analyze;

/// Words bash reads as syntax, not as a program, when unquoted.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc",
];

/// How long one parse may take before it counts as a hang (a parse takes microseconds).
const HANG: Duration = Duration::from_secs(10);

/// Everything the analysis of `text` says, as comparable text: each command (wrapped ones
/// after their wrapper) as its words, what is unknown, the files written, whether it parsed.
fn summary(text: &str) -> (Vec<String>, Vec<String>, Vec<String>, bool) {
    let analysis = analyze(text);
    (
        shell::tests::commands(text),
        analysis.opaque,
        analysis.writes,
        analysis.error.is_some(),
    )
}

/// A word of plain characters (nothing bash expands or treats as syntax).
fn plain_word() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_./,:@%+-]{1,8}"
}

fn program() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_-]{0,6}".prop_filter("not a reserved word", |w| !RESERVED.contains(&w.as_str()))
}

/// `word` spelled one of the ways bash reads as the same word: as is, in single or double
/// quotes, with an empty quote inside (`r''m`), a backslash before its first character, or
/// ANSI-C quoted (`$'rm'`).
fn spelled(word: &str, how: usize, at: usize) -> String {
    let at = word
        .char_indices()
        .map(|(i, _)| i)
        .nth(at % word.chars().count().max(1))
        .unwrap_or(0);
    match how % 6 {
        0 => word.to_string(),
        1 => format!("'{word}'"),
        2 => format!("\"{word}\""),
        3 => format!("{}''{}", &word[..at], &word[at..]),
        4 => format!("\\{word}"),
        _ => format!("$'{word}'"),
    }
}

/// Text that reaches the parser's corners: shell punctuation, quotes, expansions, wrappers,
/// here-documents and characters that are not text at all.
fn shell_soup() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "rm",
        " ",
        "'",
        "\"",
        "\\",
        "$",
        "(",
        ")",
        "`",
        "{",
        "}",
        "[",
        "]",
        ";",
        "&",
        "|",
        "<",
        ">",
        "\n",
        "#",
        "=",
        "x",
        "-c",
        "sh",
        "env",
        "-S",
        "sudo",
        "find",
        "-exec",
        "*",
        "?",
        "é",
        "\u{0}",
        "\u{1b}",
        "<<",
        "EOF",
        "$'",
        "${",
        "@P",
        "2>&1",
        "timeout",
        "5",
        "--",
        "if",
        "{1..",
        "\u{e0000}",
        "\u{10ffff}",
        "\u{3000}",
        "then",
        "fi",
        "case",
        "in",
        "esac",
        "))",
        "$((",
        "<(",
        "!",
        "&&",
        "||",
        "eval",
    ];
    proptest::collection::vec(proptest::sample::select(PIECES), 0..32).prop_map(|p| p.concat())
}

/// How a command may run `program` with `args`: as a plain command, behind a wrapper, inside
/// a list, pipeline, subshell or substitution, or as the text of `sh -c`.
fn running(program: &str, args: &str, how: usize) -> String {
    let command = format!("{program} {args}");
    match how % 16 {
        0 => command,
        1 => format!("/usr/bin/{command}"),
        2 => format!("timeout 5 {command}"),
        3 => format!("nice -n 19 {command}"),
        4 => format!("env -i PATH=/bin {command}"),
        5 => format!("sudo {command}"),
        6 => format!("ls; {command}"),
        7 => format!("true && {command} | wc -l"),
        8 => format!("({command})"),
        9 => format!("echo $({command})"),
        10 => format!("sh -c '{command}'"),
        11 => format!("find . -exec {command} {{}} +"),
        12 => format!("A=1 {command}"),
        13 => format!("if true; then {command}; fi"),
        14 => format!("command {command}"),
        _ => format!("{{ {command}; }} 2>&1"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any text parses to an analysis (or an error) within the hang limit, and everything
    /// made from the analysis can be rendered.
    #[test]
    fn any_text_is_analysed_without_panic_or_hang(
        text in prop_oneof![shell_soup(), ".{0,64}"],
    ) {
        let (done, finished) = mpsc::channel();
        let input = text.clone();
        std::thread::spawn(move || {
            let analysis = analyze(&input);
            let _ = analysis.canonical();
            let _ = done.send(summary(&input));
        });
        match finished.recv_timeout(HANG) {
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {
                prop_assert!(false, "analysing {text:?} took over {HANG:?}");
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                prop_assert!(false, "analysing {text:?} panicked");
            }
        }
    }

    /// `rm`, `'rm'`, `"rm"`, `r''m`, `\rm` and `$'rm'` are one word to bash, and to the parser.
    #[test]
    fn quoting_a_word_never_changes_the_command(
        program in program(),
        args in proptest::collection::vec(plain_word(), 0..4),
        spellings in proptest::collection::vec((any::<usize>(), any::<usize>()), 5),
        separator in proptest::sample::select(vec!["", "; ls", " | wc", " && true"]),
    ) {
        let words: Vec<&str> = std::iter::once(program.as_str())
            .chain(args.iter().map(String::as_str))
            .collect();
        let plain = format!("{}{separator}", words.join(" "));
        let quoted: Vec<String> = words
            .iter()
            .zip(&spellings)
            .map(|(word, (how, at))| spelled(word, *how, *at))
            .collect();
        let quoted = format!("{}{separator}", quoted.join(" "));
        prop_assert_eq!(summary(&quoted), summary(&plain), "{} vs {}", quoted, plain);
    }

    /// `bash(PROGRAM)` and `bash(PROGRAM*)` deny every command that runs PROGRAM, in every
    /// permission mode, whatever its arguments and however its name is quoted.
    #[test]
    fn a_deny_rule_denies_every_command_running_its_program(
        program in program(),
        args in proptest::collection::vec(plain_word(), 0..3),
        spelling in (any::<usize>(), any::<usize>()),
        how in any::<usize>(),
        prefix in any::<bool>(),
        mode in proptest::sample::select(vec![
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
            PermissionMode::Bypass,
        ]),
    ) {
        let rule = match prefix {
            true => format!("bash({program}*)"),
            false => format!("bash({program})"),
        };
        // An exact rule names the program with no arguments, so not `find -exec PROGRAM {} +`.
        let (args, how) = match prefix {
            true => (args.join(" "), how),
            false => (String::new(), if how % 16 == 11 { 0 } else { how }),
        };
        let command = running(&spelled(&program, spelling.0, spelling.1), &args, how);
        let paths = Paths::with_home("/nonexistent/root".into(), "/nonexistent/home".into());
        let permissions = Permissions::new(mode, &[], std::slice::from_ref(&rule), &paths)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let check = permissions.evaluate(&Bash, &json!({ "command": command })).check;
        prop_assert!(
            matches!(check, Check::Deny { .. }),
            "{rule} let `{command}` through: {check:?}"
        );
    }
}

#[test]
fn spellings_are_the_ones_bash_reads_as_one_word() {
    let all: Vec<String> = (0..6).map(|how| spelled("rm", how, 1)).collect();
    assert_eq!(all, ["rm", "'rm'", "\"rm\"", "r''m", "\\rm", "$'rm'"]);
}
