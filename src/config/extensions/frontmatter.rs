//! The YAML front matter of a Markdown file (`---` lines around `key: value` pairs), as Claude
//! Code's commands, agents and skills write it. Read by a real YAML parser (`serde_norway`):
//! every scalar form, multi-line ones included, and lists; nested mappings (`hooks:`,
//! `mcpServers:`) are skipped. Front matter that is not valid YAML, as hand-written files often
//! are (`description: Use when: the user asks`), is read leniently instead: plain, quoted and
//! block scalars, flow and block lists, a value holding `: ` kept whole. A file without front
//! matter is all body.

use std::collections::BTreeMap;

/// One front-matter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Text(String),
    List(Vec<String>),
}

impl Value {
    /// The value as one string (a list joined with `, `).
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::List(items) => items.join(", "),
        }
    }

    /// The value as a list: a list as it is, a text split on commas (`Read, Grep`) or, without
    /// commas, on blanks outside parentheses (`Bash(git add:*) Bash(git status:*)`).
    pub fn list(&self) -> Vec<String> {
        match self {
            Self::List(items) => items.clone(),
            Self::Text(text) => split_list(text),
        }
    }
}

/// The front matter's keys and values, and the body after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    pub fields: BTreeMap<String, Value>,
    pub body: String,
}

impl FrontMatter {
    pub fn text(&self, key: &str) -> Option<String> {
        self.fields
            .get(key)
            .map(Value::text)
            .filter(|t| !t.trim().is_empty())
    }

    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        self.fields.get(key).map(Value::list)
    }
}

/// Splits `text` into its front matter and body.
pub fn parse(text: &str) -> FrontMatter {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return FrontMatter::default();
    };
    if first.trim_end() != "---" {
        return FrontMatter {
            fields: BTreeMap::new(),
            body: text.to_string(),
        };
    }
    let mut yaml = Vec::new();
    let mut consumed = first.len();
    let mut closed = false;
    for line in lines.by_ref() {
        consumed += line.len();
        if matches!(line.trim_end(), "---" | "...") {
            closed = true;
            break;
        }
        yaml.push(line.trim_end_matches(['\n', '\r']));
    }
    if !closed {
        return FrontMatter {
            fields: BTreeMap::new(),
            body: text.to_string(),
        };
    }
    FrontMatter {
        fields: yaml_fields(&yaml.join("\n")).unwrap_or_else(|| fields(&yaml)),
        body: text[consumed..]
            .trim_start_matches(['\n', '\r'])
            .to_string(),
    }
}

/// The fields of front matter that is valid YAML (a mapping, or nothing); `None` otherwise.
fn yaml_fields(text: &str) -> Option<BTreeMap<String, Value>> {
    use serde_norway::Value as Yaml;
    let scalar = |value: &Yaml| match value {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Number(n) => Some(n.to_string()),
        Yaml::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let mapping = match serde_norway::from_str::<Yaml>(text).ok()? {
        Yaml::Mapping(mapping) => mapping,
        Yaml::Null => return Some(BTreeMap::new()),
        _ => return None,
    };
    let mut out = BTreeMap::new();
    for (key, value) in &mapping {
        let Some(key) = scalar(key) else { continue };
        let value = match value {
            Yaml::Sequence(items) => Value::List(items.iter().filter_map(scalar).collect()),
            // `description:` with nothing after it.
            Yaml::Null => Value::Text(String::new()),
            other => match scalar(other) {
                Some(text) => Value::Text(text),
                None => continue,
            },
        };
        out.insert(key, value);
    }
    Some(out)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn fields(lines: &[&str]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') || indent(line) > 0 {
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_string();
        let rest = rest.trim();
        // The lines indented under this key.
        let start = i;
        while i < lines.len() && (lines[i].trim().is_empty() || indent(lines[i]) > 0) {
            i += 1;
        }
        let nested = &lines[start..i];
        let value = match rest {
            "|" | "|-" | "|+" | ">" | ">-" | ">+" => {
                Some(Value::Text(block_scalar(nested, rest.starts_with('>'))))
            }
            "" => block_list(nested),
            _ if rest.starts_with('[') => Some(Value::List(flow_list(rest))),
            _ => {
                // A plain scalar may go on over indented lines.
                let mut text = scalar(rest);
                for more in nested.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
                    text.push(' ');
                    text.push_str(more);
                }
                Some(Value::Text(text))
            }
        };
        if let Some(value) = value {
            out.insert(key, value);
        }
    }
    out
}

fn block_scalar(lines: &[&str], folded: bool) -> String {
    let cut = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = lines
        .iter()
        .map(|l| if l.len() >= cut { &l[cut..] } else { "" })
        .collect();
    let joined = if folded {
        body.join(" ").replace("  ", "\n")
    } else {
        body.join("\n")
    };
    joined.trim_end().to_string()
}

/// `- a` lines; `None` for a nested mapping (or nothing).
fn block_list(lines: &[&str]) -> Option<Value> {
    let items: Vec<String> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .map_while(|l| l.strip_prefix("- ").or((l == "-").then_some("")))
        .map(scalar)
        .collect();
    let all = lines.iter().filter(|l| !l.trim().is_empty()).count();
    (!items.is_empty() && items.len() == all).then_some(Value::List(items))
}

fn flow_list(text: &str) -> Vec<String> {
    let inner = text
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim();
    split_outside(inner, ',')
        .into_iter()
        .map(|item| scalar(item.trim()))
        .filter(|item| !item.is_empty())
        .collect()
}

/// A scalar without its quotes; `\n`, `\t`, `\"` and `\\` expanded in a double-quoted one.
fn scalar(text: &str) -> String {
    let text = text.trim();
    if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        let inner = &text[1..text.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        return out;
    }
    if text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'') {
        return text[1..text.len() - 1].replace("''", "'");
    }
    // A comment after a plain scalar.
    match text.find(" #") {
        Some(at) => text[..at].trim_end().to_string(),
        None => text.to_string(),
    }
}

fn split_list(text: &str) -> Vec<String> {
    let sep = if split_outside(text, ',').len() > 1 {
        ','
    } else {
        ' '
    };
    split_outside(text, sep)
        .into_iter()
        .map(|item| scalar(item.trim()))
        .filter(|item| !item.is_empty())
        .collect()
}

/// `text` split on `sep` outside parentheses and quotes.
fn split_outside(text: &str, sep: char) -> Vec<&str> {
    let (mut depth, mut quote, mut start) = (0usize, None, 0);
    let mut out = Vec::new();
    for (i, c) in text.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('(', None) => depth += 1,
            (')', None) => depth = depth.saturating_sub(1),
            (c, None) if c == sep && depth == 0 => {
                out.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_shapes_claude_files_use() {
        let parsed = parse(
            "---\nname: code-reviewer\ndescription: Reviews code: use it after edits\n\
             tools: Read, Grep, Bash(git diff:*)\nmodel: \"sonnet\"\nlist:\n  - one\n  - 'two'\n\
             flow: [a, \"b c\"]\nlong: |\n  line 1\n  line 2\nhooks:\n  Stop:\n    x: 1\n\
             quoted: \"a\\nb\"\n---\n\nThe body.\n",
        );
        assert_eq!(parsed.body, "The body.\n");
        assert_eq!(parsed.text("name").as_deref(), Some("code-reviewer"));
        assert_eq!(
            parsed.text("description").as_deref(),
            Some("Reviews code: use it after edits")
        );
        assert_eq!(
            parsed.list("tools"),
            Some(vec![
                "Read".into(),
                "Grep".into(),
                "Bash(git diff:*)".into()
            ])
        );
        assert_eq!(parsed.text("model").as_deref(), Some("sonnet"));
        assert_eq!(parsed.list("list"), Some(vec!["one".into(), "two".into()]));
        assert_eq!(parsed.list("flow"), Some(vec!["a".into(), "b c".into()]));
        assert_eq!(parsed.text("long").as_deref(), Some("line 1\nline 2"));
        assert_eq!(parsed.text("quoted").as_deref(), Some("a\nb"));
        assert!(!parsed.fields.contains_key("hooks"));
    }

    #[test]
    fn no_front_matter_or_an_unclosed_one_is_all_body() {
        assert_eq!(parse("Just text\n").body, "Just text\n");
        assert_eq!(parse("---\nname: x\nno end").body, "---\nname: x\nno end");
        assert!(parse("").fields.is_empty());
    }

    #[test]
    fn a_list_written_with_blanks_splits_outside_parentheses() {
        let value = Value::Text("Bash(git add:*) Bash(git status:*)".into());
        assert_eq!(value.list(), ["Bash(git add:*)", "Bash(git status:*)"]);
    }

    #[test]
    fn multi_line_descriptions_are_read_as_yaml_reads_them() {
        let parsed = parse(
            "---\nname: pdf\ndescription:\n  Extracts text from PDFs. Use when\n  the user mentions PDFs.\nallowed-tools:\n  - Read\n  - Bash(python:*)\nversion: 2\n---\nbody\n",
        );
        assert_eq!(
            parsed.text("description").as_deref(),
            Some("Extracts text from PDFs. Use when the user mentions PDFs.")
        );
        assert_eq!(
            parsed.list("allowed-tools"),
            Some(vec!["Read".to_string(), "Bash(python:*)".to_string()])
        );
        assert_eq!(parsed.text("version").as_deref(), Some("2"));
        assert_eq!(parsed.body, "body\n");
        let folded = parse("---\ndescription: >-\n  one\n  two\n\n  three\n---\n");
        assert_eq!(
            folded.text("description").as_deref(),
            Some("one two\nthree")
        );
        // Not YAML (a second `: `), read leniently as before.
        let loose = parse("---\ndescription: Use when: the user asks\n---\n");
        assert_eq!(
            loose.text("description").as_deref(),
            Some("Use when: the user asks")
        );
    }
}
