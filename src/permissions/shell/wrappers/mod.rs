//! Programs that run another command named in their arguments (`sudo -u root rm x`, `timeout
//! 5 rm x`, `env -S 'rm x'`, `find . -exec rm {} ;`, `sh -c 'rm x'`), each with its own
//! options parsed, so rules see the command that really runs. An option Ling does not know
//! makes the wrapped command unknown rather than guessed.

mod getopt;
mod privileged;
mod runners;
mod unknown;

use getopt::{EMPTY, Spec, getopt, operands_known};
use unknown::Unknown;

use super::programs::{is_harmless_env, is_shell};
use super::words::Word;

/// What a wrapper runs.
#[derive(Debug, Default)]
pub struct Wrapped {
    /// Commands given as words.
    pub inner: Vec<Inner>,
    /// Shell text it runs (`sh -c TEXT`, `su -c TEXT`, `watch TEXT`), to be parsed in turn.
    pub scripts: Vec<String>,
    /// Why what it runs cannot be known from the text.
    pub opaque: Option<String>,
    /// It changes nothing that matters to a rule (`timeout`, `nice`): an allow rule for the
    /// wrapped command is enough. Otherwise (`sudo`, `chroot`, `find`) the wrapper itself
    /// needs an allow rule too.
    pub transparent: bool,
}

#[derive(Debug)]
pub struct Inner {
    /// Where the wrapped command starts among the wrapper's words: a rule longer than this
    /// names the wrapped command itself (`bash(sudo apt install*)`).
    pub start: usize,
    /// `NAME=value` the wrapper sets for it (`env A=1 cmd`).
    pub assignments: Vec<Word>,
    pub words: Vec<Word>,
}

impl Wrapped {
    pub(super) fn runs(start: usize, words: &[Word], transparent: bool) -> Self {
        let mut wrapped = Self {
            transparent,
            ..Self::default()
        };
        if start < words.len() {
            wrapped.inner.push(Inner {
                start,
                assignments: Vec::new(),
                words: words[start..].to_vec(),
            });
        }
        wrapped
    }

    pub(super) fn opaque(reason: impl Into<String>) -> Self {
        Self {
            opaque: Some(reason.into()),
            ..Self::default()
        }
    }

    pub(super) fn nothing(transparent: bool) -> Self {
        Self {
            transparent,
            ..Self::default()
        }
    }
}

/// Whether a word is `NAME=value` (an assignment `env` and `sudo` accept before the command).
pub fn assignment_name(word: &Word) -> Option<&str> {
    let (name, _) = word.lit()?.split_once('=')?;
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// What `words` (program first, by its basename) runs when the program is a wrapper, `find`
/// or a shell; `None` for any other program.
pub fn unwrap(words: &[Word]) -> Option<Wrapped> {
    let program = words.first()?.lit()?;
    let result = match program {
        "nice" => simple(program, words, &NICE, 0),
        "ionice" => ionice(words),
        "setsid" => simple(program, words, &SETSID, 0),
        "stdbuf" => simple(program, words, &STDBUF, 0),
        "timeout" => simple(program, words, &TIMEOUT, 1),
        "nohup" | "builtin" | "unbuffer" | "busybox" => Ok(Wrapped::runs(1, words, true)),
        "time" => time(words),
        "command" => command(words),
        "exec" => simple(program, words, &EXEC, 0),
        "xargs" => xargs(words),
        "watch" => watch(words),
        "flock" => flock(words),
        "taskset" => sched(program, words, &TASKSET, &["p"]),
        "chrt" => sched(program, words, &CHRT, &["p", "m", "max", "pid"]),
        "fakeroot" => simple(program, words, &FAKEROOT, 0),
        "env" => env(words),
        "sudo" => privileged::sudo(words),
        "doas" => privileged::doas(words),
        "su" | "runuser" => privileged::su(program, words),
        "pkexec" => privileged::privileged(program, words, &privileged::PKEXEC, 0),
        "chroot" => privileged::privileged(program, words, &privileged::CHROOT, 1),
        "nsenter" => privileged::privileged(program, words, &privileged::NSENTER, 0),
        "unshare" => privileged::privileged(program, words, &privileged::UNSHARE, 0),
        "sg" => privileged::sg(words),
        "coproc" => Ok(runners::coproc(words)),
        "find" => Ok(runners::find(words)),
        "script" => script(words),
        _ if is_shell(program) => Ok(runners::shell(program, words)),
        _ => return None,
    };
    Some(result.unwrap_or_else(|unknown| Wrapped::opaque(unknown.to_string())))
}

const NICE: Spec = Spec {
    value: "n",
    long_value: "adjustment",
    numeric: true,
    ..EMPTY
};
const SETSID: Spec = Spec {
    flag: "cfw",
    long_flag: "ctty fork wait",
    ..EMPTY
};
const STDBUF: Spec = Spec {
    value: "ioe",
    long_value: "input output error",
    ..EMPTY
};
const TIMEOUT: Spec = Spec {
    value: "ks",
    flag: "v",
    long_value: "kill-after signal",
    long_flag: "preserve-status foreground verbose",
    ..EMPTY
};
const EXEC: Spec = Spec {
    value: "a",
    flag: "cl",
    ..EMPTY
};
const FAKEROOT: Spec = Spec {
    value: "lsib",
    flag: "uh",
    long_value: "lib faked",
    ..EMPTY
};
/// Options, then `operands` words of its own (`timeout DURATION`), then the command.
fn simple(program: &str, words: &[Word], spec: &Spec, operands: usize) -> Result<Wrapped, Unknown> {
    let parsed = getopt(program, words, 1, spec)?;
    let start = parsed.next + operands;
    operands_known(program, words, parsed.next, start)?;
    Ok(Wrapped::runs(start, words, true))
}

fn ionice(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "cnpPu",
        flag: "t",
        long_value: "class classdata pid pgid uid",
        long_flag: "ignore",
        ..EMPTY
    };
    let parsed = getopt("ionice", words, 1, &SPEC)?;
    if ["p", "P", "u", "pid", "pgid", "uid"]
        .iter()
        .any(|o| parsed.has(o))
    {
        return Ok(Wrapped::nothing(true));
    }
    Ok(Wrapped::runs(parsed.next, words, true))
}

fn time(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "fo",
        flag: "apqv",
        long_value: "format output",
        long_flag: "append portability quiet verbose",
        ..EMPTY
    };
    let parsed = getopt("time", words, 1, &SPEC)?;
    // `-o FILE` writes a file: not something an allow rule for the timed command covers.
    let writes = parsed.has("o") || parsed.has("output");
    Ok(Wrapped::runs(parsed.next, words, !writes))
}

fn command(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        flag: "pvV",
        ..EMPTY
    };
    let parsed = getopt("command", words, 1, &SPEC)?;
    // `command -v rm` only says where `rm` is.
    if parsed.has("v") || parsed.has("V") {
        return Ok(Wrapped::nothing(true));
    }
    Ok(Wrapped::runs(parsed.next, words, true))
}

fn xargs(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "aEdILnPs",
        flag: "0oprtx",
        optional: "iel",
        long_value: "arg-file delimiter max-args max-procs max-chars process-slot-var",
        long_flag: "null open-tty interactive no-run-if-empty verbose exit show-limits replace eof max-lines",
        ..EMPTY
    };
    let parsed = getopt("xargs", words, 1, &SPEC)?;
    let replace = match (
        parsed.value("I"),
        parsed
            .options
            .iter()
            .find(|(n, _)| n == "i" || n == "replace"),
    ) {
        (Some(value), _) => Some(value.text.clone()),
        (None, Some((_, value))) => {
            Some(value.as_ref().map_or("{}".to_string(), |v| v.text.clone()))
        }
        (None, None) => None,
    };
    let mut wrapped = Wrapped::runs(parsed.next, words, true);
    // With `-I {}` the input replaces `{}` anywhere, even in the program's name.
    if let (Some(replace), Some(inner)) = (replace, wrapped.inner.first_mut()) {
        for word in &mut inner.words {
            if !replace.is_empty() && word.text.contains(&replace) {
                *word = Word::dynamic(word.text.clone(), false);
            }
        }
    }
    Ok(wrapped)
}

fn watch(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "nq",
        flag: "bcCeghptwrx",
        optional: "d",
        long_value: "interval equexit",
        long_flag: "beep color no-color errexit chgexit exec no-title no-wrap precise no-rerun differences",
        ..EMPTY
    };
    let parsed = getopt("watch", words, 1, &SPEC)?;
    if parsed.has("x") || parsed.has("exec") {
        return Ok(Wrapped::runs(parsed.next, words, true));
    }
    // Without `-x`, watch joins its arguments and gives them to `sh -c`.
    Ok(script_of(
        "watch",
        &words[parsed.next.min(words.len())..],
        true,
    ))
}

/// Shell text made of `words` joined by blanks, as `watch` and `sg` build it.
pub(super) fn script_of(program: &str, words: &[Word], transparent: bool) -> Wrapped {
    if words.is_empty() {
        return Wrapped::nothing(transparent);
    }
    match words.iter().find(|w| w.dynamic) {
        Some(word) => Wrapped::opaque(format!(
            "`{program}` runs shell text built from `{}`, only known when the command runs",
            word.text
        )),
        None => Wrapped {
            scripts: vec![
                words
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            ],
            transparent,
            ..Wrapped::default()
        },
    }
}

fn flock(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "wEc",
        flag: "sxenuoFv",
        long_value: "timeout wait conflict-exit-code command",
        long_flag: "shared exclusive nonblock nb unlock close no-fork verbose",
        ..EMPTY
    };
    let mut parsed = getopt("flock", words, 1, &SPEC)?;
    operands_known("flock", words, parsed.next, parsed.next + 1)?;
    // Options may also follow the lock file (`flock FILE -c CMD`).
    let after = getopt("flock", words, parsed.next + 1, &SPEC)?;
    let start = after.next;
    parsed.options.extend(after.options);
    if let Some(text) = parsed.value("c").or_else(|| parsed.value("command")) {
        return Ok(script_of("flock", std::slice::from_ref(text), true));
    }
    Ok(Wrapped::runs(start, words, true))
}

/// `taskset`/`chrt`: options, one operand (mask or priority), then the command; with
/// `-p` they act on a running process and run nothing.
fn sched(
    program: &str,
    words: &[Word],
    spec: &Spec,
    no_command: &[&str],
) -> Result<Wrapped, Unknown> {
    let parsed = getopt(program, words, 1, spec)?;
    if no_command.iter().any(|o| parsed.has(o)) {
        return Ok(Wrapped::nothing(true));
    }
    operands_known(program, words, parsed.next, parsed.next + 1)?;
    Ok(Wrapped::runs(parsed.next + 1, words, true))
}

const TASKSET: Spec = Spec {
    flag: "acp",
    long_flag: "all-tasks cpu-list pid",
    ..EMPTY
};
const CHRT: Spec = Spec {
    value: "TPD",
    flag: "abdefiorRpmv",
    long_value: "sched-runtime sched-period sched-deadline",
    long_flag: "all-tasks batch deadline fifo idle other rr reset-on-fork pid max verbose ext",
    ..EMPTY
};

fn env(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "uCSPa",
        flag: "i0v",
        long_value: "unset chdir split-string argv0",
        long_flag: "ignore-environment null debug block-signal default-signal ignore-signal list-signal-handling",
        ..EMPTY
    };
    let mut words = words.to_vec();
    let from = 1;
    let mut path_changed = false;
    let mut splits = 0;
    loop {
        let parsed = getopt("env", &words, from, &SPEC)?;
        path_changed |= parsed.has("P");
        let mut i = parsed.next;
        // A lone `-` is `-i` (an empty environment), then more assignments may follow.
        while words.get(i).and_then(Word::lit) == Some("-") {
            i += 1;
        }
        while words.get(i).and_then(assignment_name).is_some() {
            i += 1;
        }
        // `-S TEXT` splits TEXT into more arguments, options and assignments included.
        let split = parsed.value("S").or_else(|| parsed.value("split-string"));
        match split {
            Some(text) if splits < 8 => {
                let Some(text) = text.lit() else {
                    return Err(Unknown::EnvSplitDynamic(text.text.clone()));
                };
                let mut expanded = words[..from].to_vec();
                expanded.extend(env_split(text)?);
                expanded.extend_from_slice(&words[parsed.next..]);
                words = expanded;
                splits += 1;
            }
            Some(_) => return Err(Unknown::EnvSplitNested),
            None => {
                let assignments = words[parsed.next..i].to_vec();
                let transparent = !path_changed
                    && assignments
                        .iter()
                        .all(|a| assignment_name(a).is_some_and(is_harmless_env));
                let mut wrapped = Wrapped::nothing(transparent);
                if i < words.len() {
                    wrapped.inner.push(Inner {
                        start: i,
                        assignments,
                        words: words[i..].to_vec(),
                    });
                }
                return Ok(wrapped);
            }
        }
    }
}

/// `script [options] [FILE]`: with `-c TEXT` it runs TEXT with the shell (and writes the
/// typescript file); without, an interactive shell whose commands come from the terminal.
fn script(words: &[Word]) -> Result<Wrapped, Unknown> {
    const SPEC: Spec = Spec {
        value: "cEIOBmTo",
        flag: "aefqhV",
        optional: "t",
        long_value: "command echo log-in log-out log-io logging-format output-limit log-timing",
        long_flag: "append return flush force quiet help version timing",
        ..EMPTY
    };
    let parsed = getopt("script", words, 1, &SPEC)?;
    // Written to the typescript file: not what an allow rule for the command covers.
    match parsed.value("c").or_else(|| parsed.value("command")) {
        Some(text) => Ok(script_of("script", std::slice::from_ref(text), false)),
        None => Err(Unknown::InteractiveScript),
    }
}

/// How `env -S` splits its text: blanks separate words; single quotes, double quotes and
/// backslashes quote; `${NAME}` is only known when it runs.
fn env_split(text: &str) -> Result<Vec<Word>, Unknown> {
    let mut words = Vec::new();
    let mut current: Option<String> = None;
    let mut dynamic = false;
    let mut chars = text.chars().peekable();
    let mut quote = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if let Some(word) = current.take() {
                    words.push(if dynamic {
                        Word::dynamic(word, false)
                    } else {
                        Word::literal(word)
                    });
                    dynamic = false;
                }
                continue;
            }
            (None, '#') if current.is_none() => break,
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => current.get_or_insert_default().push(c),
            (_, '\\') => {
                let escaped = match chars.next() {
                    Some('_') => ' ',
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('c') => break,
                    Some(other) => other,
                    None => '\\',
                };
                current.get_or_insert_default().push(escaped);
            }
            (_, '$') => {
                dynamic = true;
                current.get_or_insert_default().push('$');
            }
            (_, c) => current.get_or_insert_default().push(c),
        }
        current.get_or_insert_default();
    }
    if quote.is_some() {
        return Err(Unknown::EnvSplitQuote);
    }
    if let Some(word) = current.take() {
        words.push(if dynamic {
            Word::dynamic(word, false)
        } else {
            Word::literal(word)
        });
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_split_follows_env_quoting() {
        let split = env_split(r#"rm -rf 'a b' "c d" e\_f # comment"#).unwrap();
        let texts: Vec<&str> = split.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["rm", "-rf", "a b", "c d", "e f"]);
        assert_eq!(env_split("'open").err(), Some(Unknown::EnvSplitQuote));
        assert!(env_split("${HOME}/x").unwrap().iter().all(|w| w.dynamic));
    }
}
