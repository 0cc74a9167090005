//! The `toolSearch` settings: when the MCP tools' definitions would take more than a share of
//! the model's context, the model gets their names and a `search_tools` tool instead, and a
//! tool's full definition only once it picked it (`docs/mcp.md`, "Tool search").

use schemars::JsonSchema;
use serde::Deserialize;

/// The default share of the context window the MCP tools' definitions may take (10%).
pub const DEFAULT_TOOL_SEARCH_THRESHOLD: f64 = 0.10;
/// How many characters of JSON one token is counted as.
pub const CHARS_PER_TOKEN: u64 = 4;

/// `toolSearch` of `settings.json` as written.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RawToolSearch {
    /// `auto` (default): offer MCP tools by name behind `search_tools` when their definitions
    /// would take more than `threshold` of the context window; `on`: always; `off`: never.
    #[schemars(extend("enum" = ["auto", "on", "off"], "default" = "auto"))]
    pub mode: Option<String>,
    /// The share of the context window (0 to 1) the MCP tools' definitions may take before
    /// `auto` defers them. Default 0.1.
    #[schemars(range(min = 0.0, max = 1.0), extend("default" = DEFAULT_TOOL_SEARCH_THRESHOLD))]
    pub threshold: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSearchMode {
    Auto,
    On,
    Off,
}

/// Resolved `toolSearch`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolSearchSettings {
    pub mode: ToolSearchMode,
    pub threshold: f64,
}

impl Default for ToolSearchSettings {
    fn default() -> Self {
        Self {
            mode: ToolSearchMode::Auto,
            threshold: DEFAULT_TOOL_SEARCH_THRESHOLD,
        }
    }
}

/// Why `toolSearch` cannot be used; each message names the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolSearchError {
    #[error("toolSearch.mode {0:?} is not one of auto, on, off")]
    Mode(String),
    #[error(
        "toolSearch.threshold {0} is not a share between 0 and 1 (0.1 is 10% of the context \
         window)"
    )]
    Threshold(f64),
}

impl ToolSearchSettings {
    /// Each key from the project's settings, else the user's, else the default.
    pub fn resolve(
        project: Option<&RawToolSearch>,
        user: Option<&RawToolSearch>,
    ) -> Result<Self, ToolSearchError> {
        fn pick<T>(
            project: Option<&RawToolSearch>,
            user: Option<&RawToolSearch>,
            f: impl Fn(&RawToolSearch) -> Option<T>,
        ) -> Option<T> {
            project.and_then(&f).or_else(|| user.and_then(&f))
        }
        let mode = match pick(project, user, |s| s.mode.clone()).as_deref() {
            None | Some("auto") => ToolSearchMode::Auto,
            Some("on") => ToolSearchMode::On,
            Some("off") => ToolSearchMode::Off,
            Some(other) => return Err(ToolSearchError::Mode(other.to_string())),
        };
        let threshold =
            pick(project, user, |s| s.threshold).unwrap_or(DEFAULT_TOOL_SEARCH_THRESHOLD);
        if !(0.0..=1.0).contains(&threshold) {
            return Err(ToolSearchError::Threshold(threshold));
        }
        Ok(Self { mode, threshold })
    }

    /// The most characters of MCP tool definitions offered in full before `auto` defers them,
    /// for a context window of `window` tokens (settings `contextWindow`, else what the server
    /// or the table of well-known models says).
    pub fn budget_chars(&self, window: u64) -> usize {
        let tokens = self.threshold * window as f64;
        usize::try_from((tokens * CHARS_PER_TOKEN as f64) as u64).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_the_project_then_the_user_and_bad_values_say_what_to_change() {
        let user = RawToolSearch {
            mode: Some("on".into()),
            threshold: Some(0.2),
        };
        let project = RawToolSearch {
            threshold: Some(0.05),
            ..RawToolSearch::default()
        };
        let got = ToolSearchSettings::resolve(Some(&project), Some(&user)).unwrap();
        assert_eq!(got.mode, ToolSearchMode::On);
        assert_eq!(got.threshold, 0.05);
        assert_eq!(got.budget_chars(128_000), 25_600);
        assert_eq!(
            ToolSearchSettings::resolve(None, None).unwrap(),
            ToolSearchSettings::default()
        );
        let bad = RawToolSearch {
            mode: Some("sometimes".into()),
            ..RawToolSearch::default()
        };
        let error = ToolSearchSettings::resolve(Some(&bad), None).unwrap_err();
        assert_eq!(error, ToolSearchError::Mode("sometimes".into()));
        assert!(
            error.to_string().contains("not one of auto, on, off"),
            "{error}"
        );
        let bad = RawToolSearch {
            threshold: Some(10.0),
            ..RawToolSearch::default()
        };
        assert!(
            ToolSearchSettings::resolve(None, Some(&bad))
                .unwrap_err()
                .to_string()
                .contains("between 0 and 1")
        );
    }
}
