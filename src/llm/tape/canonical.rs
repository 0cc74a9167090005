//! What a recorded request is known by: its body made canonical, then hashed. Canonical means
//! the same on every run of the same session: the project root, `LING_HOME` and the working
//! directory are written as `$ROOT`, `$LING_HOME` and `$CWD`, today's date as `$DATE`, UUIDs
//! and sub-agent ids as `$ID` (wherever they appear: the system prompt, tool results, file
//! paths). The JSON keeps its key order, which Ling writes the same way each time. Each
//! top-level part (`model`, `messages[3]`, `tools[0]`, ...) is hashed too, so that a request the
//! recording did not see is said by the first part that differs.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The strings of one machine and run that a request body may contain, and what stands for
/// them.
#[derive(Debug, Default, Clone)]
pub struct Normaliser {
    /// (text, stand-in), longest text first so that a root inside the home is replaced whole.
    replace: Vec<(String, &'static str)>,
    date: String,
}

static IDS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\ba[0-9a-f]{11}\b",
    )
    .ok()
});

impl Normaliser {
    /// `paths`: (a directory, its stand-in); each is also replaced as the link-free path.
    pub fn new(paths: &[(&std::path::Path, &'static str)]) -> Self {
        let mut replace = Vec::new();
        for (path, name) in paths {
            let text = path.display().to_string();
            if text.len() > 1 {
                replace.push((text, *name));
            }
            if let Ok(real) = path.canonicalize() {
                replace.push((real.display().to_string(), *name));
            }
        }
        replace.sort_by_key(|r| std::cmp::Reverse(r.0.len()));
        replace.dedup();
        Self {
            replace,
            date: chrono::Local::now().format("%Y-%m-%d").to_string(),
        }
    }

    fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (from, to) in &self.replace {
            if out.contains(from.as_str()) {
                out = out.replace(from.as_str(), to);
            }
        }
        if out.contains(&self.date) {
            out = out.replace(&self.date, "$DATE");
        }
        match IDS.as_ref() {
            Some(ids) => ids.replace_all(&out, "$$ID").into_owned(),
            None => out,
        }
    }

    fn value(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.text(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.value(v)),
            _ => {}
        }
    }
}

/// A request as the recording knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Known {
    pub hash: String,
    /// (part name, its hash), in the body's order.
    pub parts: Vec<(String, String)>,
    /// Each part's canonical text, for saying how a sent request differs (not recorded).
    pub texts: Vec<String>,
}

/// The canonical form of `body` and its hashes.
pub fn known(body: &[u8], norm: &Normaliser) -> Known {
    let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
        let text = norm.text(&String::from_utf8_lossy(body));
        return Known {
            hash: sha(text.as_bytes()),
            parts: vec![("body".into(), sha(text.as_bytes()))],
            texts: vec![text],
        };
    };
    norm.value(&mut value);
    let whole = value.to_string();
    let mut parts = Vec::new();
    let mut texts = Vec::new();
    if let Value::Object(map) = &value {
        for (key, part) in map {
            match part {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let text = item.to_string();
                        parts.push((format!("{key}[{i}]"), sha(text.as_bytes())));
                        texts.push(text);
                    }
                    parts.push((format!("{key}.length"), items.len().to_string()));
                    texts.push(items.len().to_string());
                }
                other => {
                    let text = other.to_string();
                    parts.push((key.clone(), sha(text.as_bytes())));
                    texts.push(text);
                }
            }
        }
    }
    Known {
        hash: sha(whole.as_bytes()),
        parts,
        texts,
    }
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The first part of `sent` that `recorded` does not have alike, with the sent text of it.
pub fn first_difference(sent: &Known, recorded: &[(String, String)]) -> (String, String) {
    for ((name, hash), text) in sent.parts.iter().zip(&sent.texts) {
        match recorded.iter().find(|(n, _)| n == name) {
            Some((_, h)) if h == hash => continue,
            Some(_) => return (name.clone(), text.clone()),
            None => {
                return (
                    name.clone(),
                    format!("{text} (not in the recorded request)"),
                );
            }
        }
    }
    match recorded
        .iter()
        .find(|(n, _)| !sent.parts.iter().any(|(s, _)| s == n))
    {
        Some((name, _)) => (
            name.clone(),
            "(missing: the recorded request has it)".into(),
        ),
        None => ("the path".into(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::Path;

    #[test]
    fn paths_dates_and_ids_do_not_change_the_hash_and_the_first_difference_is_named() {
        let today = chrono::Local::now().format("%Y-%m-%d");
        let body = |root: &str, id: &str, prompt: &str| {
            serde_json::json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": format!("cwd {root}/src, date {today}")},
                    {"role": "user", "content": prompt},
                    {"role": "tool", "content": format!("agent {id} done")}
                ]
            })
            .to_string()
        };
        let one = Normaliser::new(&[(Path::new("/tmp/.tmpAAAA"), "$ROOT")]);
        let two = Normaliser::new(&[(Path::new("/tmp/.tmpBBBBBB"), "$ROOT")]);
        let a = known(body("/tmp/.tmpAAAA", "a0123456789a", "hi").as_bytes(), &one);
        let b = known(
            body("/tmp/.tmpBBBBBB", "a9876543210f", "hi").as_bytes(),
            &two,
        );
        assert_eq!(a, b);
        let c = known(
            body("/tmp/.tmpAAAA", "a0123456789a", "bye").as_bytes(),
            &one,
        );
        assert_ne!(a.hash, c.hash);
        let (part, text) = first_difference(&c, &a.parts);
        assert_eq!(part, "messages[1]");
        assert!(text.contains("bye"), "{text}");
    }
}
