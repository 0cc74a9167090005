//! The `WWW-Authenticate` header of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1): the `Bearer`
//! challenge's `resource_metadata`, `scope` and `error` parameters. Parameter values are tokens
//! or quoted strings with `\` escapes; other schemes and unknown parameters are skipped.

/// What a `Bearer` challenge asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// RFC 9728: where the Protected Resource Metadata is.
    pub resource_metadata: Option<String>,
    /// The scopes the resource wants, space separated as sent.
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
}

impl Challenge {
    /// Parses every `WWW-Authenticate` value given; the first `Bearer` challenge wins.
    pub fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        for value in values {
            if let Some(challenge) = parse_one(value) {
                return challenge;
            }
        }
        Self::default()
    }

    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The `Bearer` challenge in one header value, if there is one.
fn parse_one(value: &str) -> Option<Challenge> {
    let mut rest = value.trim_start();
    let mut found = None;
    while !rest.is_empty() {
        // A scheme name, then its parameters up to the next scheme.
        let end = rest.find([' ', ',']).unwrap_or(rest.len());
        let scheme = &rest[..end];
        rest = rest[end..].trim_start_matches([' ', ',']);
        let (params, after) = parameters(rest);
        rest = after;
        if scheme.eq_ignore_ascii_case("bearer") && found.is_none() {
            let mut challenge = Challenge::default();
            for (name, value) in params {
                match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => challenge.resource_metadata = Some(value),
                    "scope" => challenge.scope = Some(value),
                    "error" => challenge.error = Some(value),
                    _ => {}
                }
            }
            found = Some(challenge);
        }
    }
    found
}

/// `name=value` pairs, comma separated, until something that is not one (the next scheme).
fn parameters(mut rest: &str) -> (Vec<(String, String)>, &str) {
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some(eq) = rest.find('=') else {
            return (params, rest);
        };
        let name = rest[..eq].trim();
        if name.is_empty() || name.contains([' ', ',', '"']) {
            return (params, rest);
        }
        let after = rest[eq + 1..].trim_start();
        let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
            quoted_string(quoted)
        } else {
            let end = after.find([',', ' ']).unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        params.push((name.to_string(), value));
        rest = tail;
    }
}

/// The rest of a quoted string (after its opening quote), unescaped, and what follows it.
fn quoted_string(text: &str) -> (String, &str) {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (value, &text[i + 1..]),
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            c => value.push(c),
        }
    }
    (value, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let c = Challenge::parse([
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#,
        ]);
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert!(c.insufficient_scope());
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
    }

    #[test]
    fn skips_other_schemes_and_unquoted_values_work() {
        let c = Challenge::parse([r#"Basic realm="x", Bearer scope=read, error=invalid_token"#]);
        assert_eq!(c.scope.as_deref(), Some("read"));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            Challenge::parse(["Basic realm=\"a\""]),
            Challenge::default()
        );
        assert_eq!(Challenge::parse(["Bearer"]), Challenge::default());
    }

    #[test]
    fn quoted_strings_unescape_and_never_panic() {
        let c = Challenge::parse([r#"Bearer scope="a \"b\"", error="x"#]);
        assert_eq!(c.scope.as_deref(), Some("a \"b\""));
        assert_eq!(c.error.as_deref(), Some("x"));
        for junk in [
            "",
            "=",
            "Bearer =",
            "Bearer a=\"",
            "Bearer ,,,",
            "\u{e9}=\u{e9}",
        ] {
            let _ = Challenge::parse([junk]);
        }
    }
}
