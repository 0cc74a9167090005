//! Codex's execpolicy rules (`rules/*.rules` of Codex's home, and a project's
//! `.codex/rules/`), read as Ling's permission rules: each `prefix_rule(pattern = [...],
//! decision = "forbidden" | "prompt" | "allow")` becomes `bash` rules matching the commands that
//! start with those words (a nested list is a choice of words), a deny, ask or allow rule. The
//! files are Starlark; the subset Codex documents is read (`prefix_rule`, and
//! `host_executable`, which changes nothing here), and anything else is an error at load naming
//! the file and line, never a rule that silently matches nothing.

use std::path::{Path, PathBuf};

use super::ConfigError;

/// The rules of the files read, in Ling's syntax.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodexRules {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    /// The files read.
    pub files: Vec<PathBuf>,
}

impl CodexRules {
    /// Every `*.rules` file of `dir`, in name order; `narrowing_only` keeps only forbidden and
    /// prompt rules (an untrusted project's). A missing folder has none.
    pub fn add_dir(&mut self, dir: &Path, narrowing_only: bool) -> Result<(), ConfigError> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "rules") && p.is_file())
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                source,
            })?;
            let rules = parse(&text).map_err(|(line, message)| ConfigError::Invalid {
                path: path.clone(),
                message: format!("line {line}: {message}"),
            })?;
            for (decision, lines) in rules {
                let list = match decision {
                    Decision::Forbidden => &mut self.deny,
                    Decision::Prompt => &mut self.ask,
                    Decision::Allow if narrowing_only => continue,
                    Decision::Allow => &mut self.allow,
                };
                list.extend(lines);
            }
            self.files.push(path);
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Allow,
    Prompt,
    Forbidden,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Punct(char),
}

#[derive(Debug, Clone, PartialEq)]
enum Val {
    Str(String),
    List(Vec<Val>),
    Ident(String),
}

type Problem = (usize, String);
/// A call as written: its function's name, its line, its `key = value` arguments.
type Call = (String, usize, Vec<(String, Val)>);

fn tokens(text: &str) -> Result<Vec<(usize, Token)>, Problem> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '#' => {
                while chars.peek().is_some_and(|c| *c != '\n') {
                    chars.next();
                }
            }
            '"' | '\'' => {
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None | Some('\n') => return Err((line, "a string is not closed".into())),
                        Some(q) if q == c => break,
                        Some('\\') => match chars.next() {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some(other) => s.push(other),
                            None => return Err((line, "a string is not closed".into())),
                        },
                        Some(other) => s.push(other),
                    }
                }
                out.push((line, Token::Str(s)));
            }
            '(' | ')' | '[' | ']' | ',' | '=' => out.push((line, Token::Punct(c))),
            c if c.is_alphanumeric() || c == '_' => {
                let mut s = String::from(c);
                while chars
                    .peek()
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    s.extend(chars.next());
                }
                out.push((line, Token::Ident(s)));
            }
            other => return Err((line, format!("`{other}` is not in the rules language"))),
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    at: usize,
}

impl Parser {
    fn line(&self) -> usize {
        self.tokens
            .get(self.at.min(self.tokens.len().saturating_sub(1)))
            .map_or(1, |(l, _)| *l)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).map(|(_, t)| t.clone());
        self.at += 1;
        token
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|(_, t)| t)
    }

    fn expect(&mut self, c: char) -> Result<(), Problem> {
        match self.next() {
            Some(Token::Punct(p)) if p == c => Ok(()),
            _ => Err((self.line(), format!("expected `{c}`"))),
        }
    }

    fn value(&mut self) -> Result<Val, Problem> {
        match self.next() {
            Some(Token::Str(s)) => Ok(Val::Str(s)),
            Some(Token::Ident(s)) => Ok(Val::Ident(s)),
            Some(Token::Punct('[')) => {
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(&Token::Punct(']')) {
                        self.at += 1;
                        return Ok(Val::List(items));
                    }
                    items.push(self.value()?);
                    match self.next() {
                        Some(Token::Punct(',')) => {}
                        Some(Token::Punct(']')) => return Ok(Val::List(items)),
                        _ => return Err((self.line(), "expected `,` or `]`".into())),
                    }
                }
            }
            _ => Err((self.line(), "expected a string or a list".into())),
        }
    }

    /// `name(key = value, ...)`.
    fn call(&mut self) -> Result<Call, Problem> {
        let line = self.line();
        let Some(Token::Ident(name)) = self.next() else {
            return Err((line, "expected a call such as prefix_rule(...)".into()));
        };
        self.expect('(')?;
        let mut args = Vec::new();
        loop {
            match self.next() {
                Some(Token::Punct(')')) => return Ok((name, line, args)),
                Some(Token::Ident(key)) => {
                    self.expect('=')?;
                    args.push((key, self.value()?));
                    match self.next() {
                        Some(Token::Punct(',')) => {}
                        Some(Token::Punct(')')) => return Ok((name, line, args)),
                        _ => return Err((self.line(), "expected `,` or `)`".into())),
                    }
                }
                _ => return Err((self.line(), "expected `key = value` arguments".into())),
            }
        }
    }
}

/// The rules of one file: each `prefix_rule`'s decision and its Ling rules.
fn parse(text: &str) -> Result<Vec<(Decision, Vec<String>)>, Problem> {
    let mut parser = Parser {
        tokens: tokens(text)?,
        at: 0,
    };
    let mut out = Vec::new();
    while parser.peek().is_some() {
        let (name, line, args) = parser.call()?;
        match name.as_str() {
            "prefix_rule" => out.push(prefix_rule(line, args)?),
            "host_executable" => {}
            other => {
                return Err((
                    line,
                    format!(
                        "`{other}` is not supported; Ling reads prefix_rule and host_executable"
                    ),
                ));
            }
        }
    }
    Ok(out)
}

fn prefix_rule(line: usize, args: Vec<(String, Val)>) -> Result<(Decision, Vec<String>), Problem> {
    let mut pattern = None;
    let mut decision = Decision::Allow;
    for (key, value) in args {
        match (key.as_str(), value) {
            ("pattern", Val::List(items)) if !items.is_empty() => pattern = Some(items),
            ("decision", Val::Str(d)) => {
                decision = match d.as_str() {
                    "allow" => Decision::Allow,
                    "prompt" => Decision::Prompt,
                    "forbidden" => Decision::Forbidden,
                    _ => {
                        return Err((
                            line,
                            format!("decision `{d}` is not allow, prompt or forbidden"),
                        ));
                    }
                }
            }
            ("justification" | "match" | "not_match", _) => {}
            (key, _) => return Err((line, format!("prefix_rule: `{key}` is not understood"))),
        }
    }
    let pattern = pattern.ok_or((
        line,
        "prefix_rule needs a non-empty `pattern` list".to_string(),
    ))?;
    // Each position: its choice of words.
    let mut prefixes: Vec<String> = vec![String::new()];
    for item in pattern {
        let words = match item {
            Val::Str(word) => vec![word],
            Val::List(choices) => choices
                .into_iter()
                .map(|c| match c {
                    Val::Str(word) => Ok(word),
                    _ => Err((
                        line,
                        "a choice in `pattern` must be a list of strings".to_string(),
                    )),
                })
                .collect::<Result<_, _>>()?,
            Val::Ident(_) => return Err((line, "`pattern` holds strings".into())),
        };
        if words.iter().any(|w| w.is_empty() || w.contains([')', '*'])) {
            return Err((
                line,
                "a word of `pattern` Ling cannot match (empty, `)` or `*`)".into(),
            ));
        }
        prefixes = prefixes
            .iter()
            .flat_map(|p| {
                words.iter().map(move |w| {
                    if p.is_empty() {
                        w.clone()
                    } else {
                        format!("{p} {w}")
                    }
                })
            })
            .collect();
    }
    let rules = prefixes
        .into_iter()
        .flat_map(|p| [format!("bash({p})"), format!("bash({p} *)")])
        .collect();
    Ok((decision, rules))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_rules_become_bash_rules() {
        let text = r#"
# Never delete recursively.
prefix_rule(
    pattern = ["rm", "-rf"],
    decision = "forbidden",
    justification = "use trash",
    match = [["rm", "-rf", "/"]],
)
prefix_rule(pattern = ["git", ["push", "fetch"]], decision = "prompt")
prefix_rule(pattern = ['cargo', 'test'])
host_executable(name = "git", paths = ["/usr/bin/git"])
"#;
        let rules = parse(text).unwrap();
        assert_eq!(
            rules,
            vec![
                (
                    Decision::Forbidden,
                    vec!["bash(rm -rf)".into(), "bash(rm -rf *)".into()]
                ),
                (
                    Decision::Prompt,
                    vec![
                        "bash(git push)".into(),
                        "bash(git push *)".into(),
                        "bash(git fetch)".into(),
                        "bash(git fetch *)".into()
                    ]
                ),
                (
                    Decision::Allow,
                    vec!["bash(cargo test)".into(), "bash(cargo test *)".into()]
                ),
            ]
        );
    }

    #[test]
    fn what_ling_cannot_read_is_an_error_with_its_line() {
        assert_eq!(parse("\n\nload('x')").unwrap_err().0, 3);
        assert!(parse("prefix_rule(pattern = [])").is_err());
        assert!(parse("prefix_rule(pattern = [\"rm\"], decision = \"deny\")").is_err());
        assert!(parse("prefix_rule(pattern = [\"rm\"], when = \"x\")").is_err());
        assert!(parse("prefix_rule(pattern = [\"rm\"]").is_err());
        assert!(parse("prefix_rule(pattern = [\"a*\"])").is_err());
    }
}
