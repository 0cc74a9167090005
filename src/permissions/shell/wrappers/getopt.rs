//! The option syntax of wrappers, parsed the way their getopt parses it.

use super::super::words::Word;
use super::unknown::Unknown;

/// The option syntax of one wrapper, as its getopt sees it.
#[derive(Default)]
pub struct Spec {
    /// Short options that take a value (`-u USER`, `-uUSER`).
    pub value: &'static str,
    /// Short options with no value.
    pub flag: &'static str,
    /// Short options whose value can only be attached (`nsenter -m[FILE]`).
    pub optional: &'static str,
    /// Long options that take a value, separated by blanks.
    pub long_value: &'static str,
    /// Long options with no value, or an optional `=value`.
    pub long_flag: &'static str,
    /// `nice -5 cmd`.
    pub numeric: bool,
}

/// Options found, and where the first operand is.
pub struct Parsed {
    pub options: Vec<(String, Option<Word>)>,
    pub next: usize,
}

impl Parsed {
    pub fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    pub fn value(&self, name: &str) -> Option<&Word> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_ref())
    }
}

pub fn getopt(program: &str, words: &[Word], from: usize, spec: &Spec) -> Result<Parsed, Unknown> {
    let mut options = Vec::new();
    let mut i = from;
    let unknown = |word: &str| Unknown::Option {
        program: program.to_string(),
        word: word.to_string(),
    };
    while let Some(word) = words.get(i) {
        let Some(text) = word.lit() else {
            return Err(Unknown::DynamicOption {
                program: program.to_string(),
                word: word.text.clone(),
            });
        };
        if text == "--" {
            i += 1;
            break;
        }
        if !text.starts_with('-') || text == "-" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(Word::literal(value))),
                None => (long, None),
            };
            if !name.is_empty() && spec.long_value.split(' ').any(|n| n == name) {
                let value = match attached {
                    Some(value) => value,
                    None => {
                        i += 1;
                        words.get(i).cloned().ok_or_else(|| unknown(text))?
                    }
                };
                options.push((name.to_string(), Some(value)));
            } else if !name.is_empty() && spec.long_flag.split(' ').any(|n| n == name) {
                options.push((name.to_string(), attached));
            } else {
                return Err(unknown(text));
            }
            i += 1;
            continue;
        }
        let cluster = &text[1..];
        if spec.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
            i += 1;
            continue;
        }
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            if spec.value.contains(c) {
                let value = if rest.is_empty() {
                    i += 1;
                    words.get(i).cloned().ok_or_else(|| unknown(text))?
                } else {
                    Word::literal(rest)
                };
                options.push((c.to_string(), Some(value)));
                break;
            } else if spec.optional.contains(c) {
                options.push((
                    c.to_string(),
                    (!rest.is_empty()).then(|| Word::literal(rest)),
                ));
                break;
            } else if spec.flag.contains(c) {
                options.push((c.to_string(), None));
            } else {
                return Err(unknown(text));
            }
        }
        i += 1;
    }
    Ok(Parsed { options, next: i })
}

pub const EMPTY: Spec = Spec {
    value: "",
    flag: "",
    optional: "",
    long_value: "",
    long_flag: "",
    numeric: false,
};

/// The operands before the command must each be one word, or the command's position moves.
pub fn operands_known(
    program: &str,
    words: &[Word],
    from: usize,
    to: usize,
) -> Result<(), Unknown> {
    match words
        .get(from..to.min(words.len()))
        .and_then(|w| w.iter().find(|w| w.splits))
    {
        Some(word) => Err(Unknown::SplitOperand {
            program: program.to_string(),
            word: word.text.clone(),
        }),
        None => Ok(()),
    }
}
