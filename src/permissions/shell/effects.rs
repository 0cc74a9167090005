//! What a command does beyond what its name says: the options and arguments that make a
//! program usually allowed for reading write a file or run another program (`git diff
//! --output=FILE`, `find -fprint FILE`, `sort -o FILE`, `sed 'w FILE'`, `rg --pre CMD`). An allow
//! rule applies to a command with such a word only when it names that word itself. The
//! commands that do what another does are `equivalents.rs`'s.

use super::words::Word;

/// The first word of `words` (program first, by its basename) that makes it write a file or
/// run a program, by index, with why; `None` when there is none Ling knows of. A word only
/// known when the command runs where such an option could be counts too.
pub fn effect(words: &[Word]) -> Option<(usize, &'static str)> {
    let program = words.first()?.lit()?;
    let found = |pred: &dyn Fn(&str) -> bool, why: &'static str| {
        words
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, w)| w.lit().is_some_and(pred))
            .map(|(i, _)| (i, why))
    };
    let long = |names: &'static [&'static str]| {
        move |t: &str| {
            names
                .iter()
                .any(|n| t == *n || t.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
        }
    };
    match program {
        "find" => found(
            &|t| matches!(t, "-fprint" | "-fprint0" | "-fprintf" | "-fls" | "-delete"),
            "it writes or deletes files (`-fprint`, `-fls`, `-delete`)",
        ),
        "sort" => found(
            &|t| {
                long(&["--output", "--compress-program"])(t)
                    || (t.starts_with("-o") && !t.starts_with("--"))
                    || short_cluster(t, "o")
            },
            "it writes a file (`-o`) or runs a program (`--compress-program`)",
        ),
        "sed" => sed(words),
        "git" => git(words),
        "curl" => found(
            &|t| long(CURL_FILE_OPTIONS)(t) || short_cluster(t, "oODcK"),
            "it writes a file (`-o`, `-O`, `-D`, `-c`) or reads its options from one (`-K`)",
        ),
        "rg" => found(
            &long(&["--pre"]),
            "it runs a program on each file (`--pre`)",
        ),
        "fd" | "fdfind" => found(
            &|t| long(&["--exec", "--exec-batch"])(t) || matches!(t, "-x" | "-X"),
            "it runs a command on what it finds (`--exec`)",
        ),
        "less" | "more" | "most" => found(
            &|t| t.starts_with('+'),
            "it runs the commands it is given with `+` (`+!cmd`)",
        ),
        "man" => found(
            &|t| long(&["--pager", "--html"])(t) || t.starts_with("-P") || t.starts_with("-H"),
            "it runs the program it is given as pager or browser",
        ),
        "tree" => found(&|t| t == "-o", "it writes a file (`-o`)"),
        "yq" => found(
            &|t| long(&["--inplace"])(t) || t == "-i",
            "it rewrites the file in place (`-i`)",
        ),
        "tar" => found(
            &|t| long(TAR_PROGRAM_OPTIONS)(t) || t.starts_with("-I") || t.starts_with("-F"),
            "it runs a program (`--to-command`, `-I`)",
        ),
        "sqlite3" => found(
            &|t| {
                let t = t.to_ascii_lowercase();
                SQLITE_ACTING_COMMANDS.iter().any(|c| t.contains(c))
            },
            "its dot-commands run programs or write files (`.shell`, `.output`)",
        ),
        _ => None,
    }
}

/// curl's long options that write a file, or read its options from one (`--config`).
const CURL_FILE_OPTIONS: &[&str] = &[
    "--output",
    "--remote-name",
    "--remote-name-all",
    "--dump-header",
    "--cookie-jar",
    "--trace",
    "--trace-ascii",
    "--stderr",
    "--config",
    "--libcurl",
    "--etag-save",
    "--hsts",
    "--alt-svc",
    "--output-dir",
];

/// tar's long options that run a program.
const TAR_PROGRAM_OPTIONS: &[&str] = &[
    "--to-command",
    "--use-compress-program",
    "--checkpoint-action",
    "--info-script",
    "--new-volume-script",
    "--rsh-command",
];

/// sqlite3's dot-commands that run a program, write a file or load code.
const SQLITE_ACTING_COMMANDS: &[&str] = &[
    ".shell", ".system", ".output", ".once", ".save", ".backup", ".import", ".excel", ".log",
    ".load",
];

/// A short option cluster (`-sSo`) holding one of `letters`.
pub(super) fn short_cluster(text: &str, letters: &str) -> bool {
    match text.strip_prefix('-') {
        Some(rest) if !rest.starts_with('-') && !rest.is_empty() => rest
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .any(|c| letters.contains(c)),
        _ => false,
    }
}

/// `sed -i`, `sed -f FILE`, and a script with `w`, `W` or `e` (a command, or a flag of `s`).
fn sed(words: &[Word]) -> Option<(usize, &'static str)> {
    const IN_PLACE: &str = "it rewrites files in place (`-i`)";
    const SCRIPT: &str = "its script writes a file or runs a command (`w`, `e`)";
    let mut script_given = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(text) = word.lit() else {
            return Some((i, SCRIPT));
        };
        if text == "--" {
            i += 1;
            break;
        }
        if text.starts_with("--in-place") || (text.starts_with("-i") && !text.starts_with("--")) {
            return Some((i, IN_PLACE));
        }
        if text.starts_with("--file") || text == "-f" || short_cluster(text, "f") {
            return Some((i, "it runs a script from a file, which the rule cannot see"));
        }
        if let Some(script) = text.strip_prefix("--expression=") {
            script_given = true;
            if sed_script_acts(script) {
                return Some((i, SCRIPT));
            }
        } else if text == "-e" || text == "--expression" {
            script_given = true;
            i += 1;
            match words.get(i).map(|w| w.lit()) {
                Some(Some(script)) if !sed_script_acts(script) => {}
                _ => return Some((i, SCRIPT)),
            }
        } else if text.starts_with('-') && text.len() > 1 {
            if short_cluster(text, "i") {
                return Some((i, IN_PLACE));
            }
            if short_cluster(text, "e") {
                // `-ne SCRIPT`: the script is the next word.
                script_given = true;
                i += 1;
                match words.get(i).map(|w| w.lit()) {
                    Some(Some(script)) if !sed_script_acts(script) => {}
                    _ => return Some((i, SCRIPT)),
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if !script_given && let Some(word) = words.get(i) {
        match word.lit() {
            Some(script) if !sed_script_acts(script) => {}
            _ => return Some((i, SCRIPT)),
        }
    }
    None
}

/// Whether a sed script may write a file or run a command: a `w`, `W` or `e` command, or an
/// `s` command with a `w` or `e` flag. What does not parse counts as acting.
fn sed_script_acts(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    loop {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ';') {
            i += 1;
        }
        if i >= chars.len() {
            return false;
        }
        if !skip_sed_address(&chars, &mut i) {
            return true;
        }
        let Some(&command) = chars.get(i) else {
            return false;
        };
        i += 1;
        if sed_command_acts(command, &chars, &mut i) {
            return true;
        }
    }
}

/// Reads a delimited part of a sed script (after its opening delimiter), escapes kept; false
/// when it does not end on the line.
fn sed_delimited(chars: &[char], i: &mut usize, delim: char) -> bool {
    while *i < chars.len() {
        match chars[*i] {
            '\\' => *i += 2,
            c if c == delim => {
                *i += 1;
                return true;
            }
            '\n' => return false,
            _ => *i += 1,
        }
    }
    false
}

/// Skips a command's address: numbers, `$`, `/re/`, `\cREc`, ranges, steps, `!`. False when it
/// does not parse.
fn skip_sed_address(chars: &[char], i: &mut usize) -> bool {
    loop {
        match chars.get(*i) {
            Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') => {
                *i += 1
            }
            Some('/') => {
                *i += 1;
                if !sed_delimited(chars, i, '/') {
                    return false;
                }
                while matches!(chars.get(*i), Some('I' | 'M')) {
                    *i += 1;
                }
            }
            Some('\\') => {
                let Some(&delim) = chars.get(*i + 1) else {
                    return false;
                };
                *i += 2;
                if !sed_delimited(chars, i, delim) {
                    return false;
                }
            }
            _ => return true,
        }
    }
}

/// Whether the sed command `command` (its arguments from `i` on, which this skips) may write a
/// file or run a command; what does not parse counts as acting.
fn sed_command_acts(command: char, chars: &[char], i: &mut usize) -> bool {
    match command {
        'w' | 'W' | 'e' => true,
        's' | 'y' => {
            let Some(&delim) = chars.get(*i) else {
                return true;
            };
            *i += 1;
            if !sed_delimited(chars, i, delim) || !sed_delimited(chars, i, delim) {
                return true;
            }
            if command == 's' {
                while let Some(&flag) = chars.get(*i) {
                    match flag {
                        'w' | 'e' | 'W' => return true,
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' => *i += 1,
                        c if c.is_ascii_digit() => *i += 1,
                        _ => break,
                    }
                }
            }
            false
        }
        // Text to the end of the line (`a`, `i`, `c`, a file to read, a label), or a
        // branch's label to the end of the command.
        'a' | 'i' | 'c' | 'r' | 'R' | ':' | 'b' | 't' | 'T' => {
            let branch = matches!(command, 'b' | 't' | 'T');
            while *i < chars.len() && chars[*i] != '\n' && !(branch && chars[*i] == ';') {
                *i += 1;
            }
            false
        }
        'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l' | '=' | 'q' | 'Q'
        | 'z' | 'F' | '{' | '}' => {
            while matches!(chars.get(*i), Some(c) if c.is_ascii_digit()) {
                *i += 1;
            }
            false
        }
        '#' => {
            while *i < chars.len() && chars[*i] != '\n' {
                *i += 1;
            }
            false
        }
        _ => true,
    }
}

/// `git` subcommands' options that write a file or run a program.
fn git(words: &[Word]) -> Option<(usize, &'static str)> {
    let skipped = super::skip_global_options(words, true);
    let offset = skipped
        .as_ref()
        .map_or(0, |s| words.len().saturating_sub(s.len()));
    let form = skipped.as_deref().unwrap_or(words);
    let sub = form.get(1)?.lit()?;
    let has = |t: &str| {
        let long = |names: &[&str]| {
            names
                .iter()
                .any(|n| t == *n || t.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
        };
        let writes = match sub {
            "diff" | "log" | "show" | "whatchanged" | "range-diff" | "diff-tree" | "diff-index"
            | "diff-files" | "format-patch" => long(&["--output", "--output-directory"]),
            "archive" | "bundle" => long(&["--output"]),
            _ => false,
        } || (matches!(sub, "format-patch" | "archive") && t.starts_with("-o"));
        let runs = long(&[
            "--upload-pack",
            "--receive-pack",
            "--exec",
            "--open-files-in-pager",
        ]) || (sub == "grep" && t.starts_with("-O"))
            || (matches!(sub, "clone" | "fetch" | "pull" | "ls-remote") && t == "-u")
            || (matches!(sub, "rebase") && t == "-x");
        (writes || runs).then_some(if writes {
            "it writes a file (`--output`, `-o`)"
        } else {
            "it runs a program (`--upload-pack`, `--exec`, `-O`)"
        })
    };
    form.iter()
        .enumerate()
        .skip(2)
        .find_map(|(i, w)| w.lit().and_then(has).map(|why| (i + offset, why)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts_that_write_or_run_are_told_apart() {
        for fine in [
            "s/a/b/g",
            "1,5p",
            "/x/d; s|a|b|2",
            "y/abc/xyz/",
            "$!N;P;D",
            "/^#/!s/ /_/gp",
        ] {
            assert!(!sed_script_acts(fine), "{fine}");
        }
        for acts in [
            "w /etc/x",
            "s/a/b/w /tmp/x",
            "1e rm -rf x",
            "s/x/rm y/e",
            "/a/W out",
            "s/a",
            "Z",
        ] {
            assert!(sed_script_acts(acts), "{acts}");
        }
    }
}
