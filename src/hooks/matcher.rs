//! Hook matchers, compiled once at load: omitted, `""` or `"*"` match everything; a value made
//! only of `[A-Za-z0-9_-]` and `|` is an exact name or a list of exact names; anything else is a
//! regular expression that must match the whole name (so `mcp__memory` alone never matches
//! `mcp__memory__read`, while `mcp__memory__.*` does). A builtin tool's name is tested in both
//! spellings, Ling's and Claude Code's (`bash` and `Bash`, `edit_file` and `Edit`), so matchers
//! written for Claude Code (`Edit|Write`, `(Edit|Write)`, `Notebook.*`) work unchanged.

use regex::Regex;

use super::claude::claude_tool_name;

#[derive(Debug, Clone)]
pub enum Matcher {
    All,
    Names(Vec<String>),
    Regex(Regex),
}

impl Matcher {
    /// `None`, `""` and `"*"` mean all; an invalid regex is an error for the caller to place.
    pub fn parse(text: Option<&str>) -> Result<Self, regex::Error> {
        let Some(text) = text.filter(|t| !t.is_empty() && *t != "*") else {
            return Ok(Self::All);
        };
        let plain = text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'|');
        if plain {
            let names = text
                .split('|')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            return Ok(Self::Names(names));
        }
        Regex::new(&format!("^(?:{text})$")).map(Self::Regex)
    }

    /// Tests a tool name, session source or compaction trigger. Allocates nothing.
    pub fn matches(&self, value: &str) -> bool {
        self.matches_one(value) || claude_tool_name(value).is_some_and(|c| self.matches_one(c))
    }

    fn matches_one(&self, value: &str) -> bool {
        match self {
            Self::All => true,
            Self::Names(names) => names.iter().any(|n| n == value),
            Self::Regex(re) => re.is_match(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(text: &str) -> Matcher {
        Matcher::parse(Some(text)).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn empty_star_and_omitted_match_everything() {
        for m in [
            Matcher::parse(None),
            Matcher::parse(Some("")),
            Matcher::parse(Some("*")),
        ] {
            let m = m.unwrap();
            assert!(matches!(m, Matcher::All));
            assert!(m.matches("bash"));
            assert!(m.matches(""));
        }
    }

    #[test]
    fn plain_names_are_exact_and_lists_split_on_bars() {
        let m = matcher("write_file|edit_file");
        assert!(matches!(m, Matcher::Names(ref n) if n.len() == 2));
        assert!(m.matches("write_file"));
        assert!(m.matches("edit_file"));
        assert!(!m.matches("write"));
        assert!(!m.matches("write_file2"));
        assert!(!m.matches("bash"));

        let m = matcher("bash");
        assert!(m.matches("bash"));
        assert!(!m.matches("bsh"));
        assert!(!m.matches("bash2"));
        assert!(matcher("mcp__memory").matches("mcp__memory"));
        assert!(!matcher("mcp__memory").matches("mcp__memory__read"));
    }

    #[test]
    fn regexes_must_match_the_whole_name() {
        let m = matcher("mcp__sqlite__.*");
        assert!(matches!(m, Matcher::Regex(_)));
        assert!(m.matches("mcp__sqlite__query"));
        assert!(!m.matches("x_mcp__sqlite__query"));
        let m = matcher("read.*|grep");
        assert!(m.matches("read_file"));
        assert!(m.matches("grep"));
        assert!(!m.matches("grep2"));
        assert!(!m.matches("fread"));
        let m = matcher("(write|edit)_file");
        assert!(m.matches("edit_file"));
        assert!(!m.matches("edit_file_x"));
    }

    #[test]
    fn claude_code_tool_names_match_lings_tools() {
        for (text, tool) in [
            ("Edit|Write", "edit_file"),
            ("Edit|Write", "write_file"),
            ("(Edit|Write)", "write_file"),
            ("Bash", "bash"),
            ("Read", "read_file"),
            ("Gr.*", "grep"),
            ("Glob", "glob"),
            ("mcp__db__.*", "mcp__db__query"),
        ] {
            assert!(matcher(text).matches(tool), "{text} should match {tool}");
        }
        for (text, tool) in [
            ("Edit|Write", "bash"),
            ("Notebook.*", "edit_file"),
            ("MultiEdit", "edit_file"),
            ("Bash", "mcp__x__Bash_tool"),
        ] {
            assert!(
                !matcher(text).matches(tool),
                "{text} should not match {tool}"
            );
        }
    }

    #[test]
    fn an_invalid_regex_is_an_error() {
        assert!(Matcher::parse(Some("mcp__(")).is_err());
        assert!(Matcher::parse(Some("[a-")).is_err());
    }
}
