//! Tool search: when the MCP tools' definitions would take more than a share of the context
//! (`toolSearch` settings), the model is offered their names only, in the description of a
//! `search_tools` tool, and a tool's full definition from the request after the model picked it
//! (by searching for it or by calling it), as Claude Code's ToolSearch does. Every MCP tool stays
//! callable throughout: only what each request carries changes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use crate::config::tool_search::{ToolSearchMode, ToolSearchSettings};
use crate::llm::Message;
use crate::mcp::{McpManager, McpToolInfo};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args};

/// The name the model knows the search by.
pub const SEARCH_TOOLS: &str = "search_tools";
/// Tools one search returns (and loads) unless it asks for another number.
const DEFAULT_RESULTS: usize = 5;
const MAX_RESULTS: usize = 20;

/// Which MCP tools the model has picked; shared by the agent and its `search_tools`.
#[derive(Clone, Default)]
pub struct ToolSearch {
    settings: ToolSearchSettings,
    loaded: Arc<Mutex<HashSet<String>>>,
}

impl ToolSearch {
    pub fn new(settings: ToolSearchSettings) -> Self {
        Self {
            settings,
            loaded: Arc::default(),
        }
    }

    /// The same settings with nothing picked yet (a sub-agent's own).
    pub fn fresh(&self) -> Self {
        Self::new(self.settings)
    }

    /// The MCP tools offered by name only in the next request: none when their definitions fit
    /// the budget (mode `auto`) or tool search is off; otherwise every one the model has not
    /// picked yet. A tool called in `history` counts as picked. `window` is the model's context
    /// window in tokens, which `threshold` is a share of.
    pub fn deferred(
        &self,
        tools: &[McpToolInfo],
        history: &[Message],
        window: u64,
    ) -> HashSet<String> {
        let defer = match self.settings.mode {
            ToolSearchMode::Off => false,
            ToolSearchMode::On => true,
            ToolSearchMode::Auto => {
                let size: usize = tools.iter().map(definition_chars).sum();
                size > self.settings.budget_chars(window)
            }
        };
        if !defer || tools.is_empty() {
            return HashSet::new();
        }
        let Ok(mut loaded) = self.loaded.lock() else {
            return HashSet::new();
        };
        for message in history {
            if let Message::Assistant { tool_calls, .. } = message {
                loaded.extend(tool_calls.iter().map(|c| c.function.name.clone()));
            }
        }
        tools
            .iter()
            .map(|t| t.exposed_name.clone())
            .filter(|name| !loaded.contains(name))
            .collect()
    }

    /// The `search_tools` tool over `manager`'s tools, naming the `deferred` ones.
    pub fn tool(&self, manager: Arc<McpManager>, deferred: &HashSet<String>) -> SearchTools {
        let mut names: Vec<&str> = deferred.iter().map(String::as_str).collect();
        names.sort_unstable();
        let description = format!(
            "Search the MCP tools whose definitions are not loaded yet, to save context. They \
             are: {}. Give a few words of what you need (or \"select:NAME,NAME\" for exact \
             tools); the matching tools come back with their descriptions and parameters, and \
             from your next request you can call them as any other tool.",
            names.join(", ")
        );
        SearchTools {
            manager,
            loaded: Arc::clone(&self.loaded),
            description,
        }
    }
}

/// What one tool's definition costs in a request, in characters of JSON.
fn definition_chars(tool: &McpToolInfo) -> usize {
    tool.exposed_name.len() + tool.description.len() + tool.input_schema.to_string().len() + 60
}

pub struct SearchTools {
    manager: Arc<McpManager>,
    loaded: Arc<Mutex<HashSet<String>>>,
    description: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Words describing the tool needed, or `select:NAME,NAME` for exact names.
    query: String,
    /// How many tools to return (default 5, at most 20).
    max_results: Option<usize>,
}

#[async_trait]
impl Tool for SearchTools {
    fn name(&self) -> &str {
        SEARCH_TOOLS
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        args_schema::<SearchArgs>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: SearchArgs = parse_args(SEARCH_TOOLS, input)?;
        let limit = args
            .max_results
            .unwrap_or(DEFAULT_RESULTS)
            .clamp(1, MAX_RESULTS);
        let tools = self.manager.tools();
        let found = search(&tools, &args.query, limit);
        if found.is_empty() {
            return Ok(ToolOutput::text(format!(
                "No MCP tool matches {:?}; try other words, or select:NAME with a name from \
                 the search_tools description.",
                args.query
            )));
        }
        if let Ok(mut loaded) = self.loaded.lock() {
            loaded.extend(found.iter().map(|t| t.exposed_name.clone()));
        }
        let mut text = format!(
            "{} tool(s) found and loaded; call them from your next request:\n",
            found.len()
        );
        for tool in found {
            text.push_str(&format!(
                "\n- {}: {}\n",
                tool.exposed_name, tool.description
            ));
            text.push_str(&format!("  parameters: {}\n", tool.input_schema));
        }
        Ok(ToolOutput::text(text))
    }
}

/// The best `limit` matches of `query`: exact names with `select:`, else tools scored by the
/// query's words in their name (most) and description.
fn search<'a>(tools: &'a [McpToolInfo], query: &str, limit: usize) -> Vec<&'a McpToolInfo> {
    if let Some(names) = query.trim().strip_prefix("select:") {
        let wanted: Vec<&str> = names.split(',').map(str::trim).collect();
        return tools
            .iter()
            .filter(|t| {
                wanted
                    .iter()
                    .any(|w| *w == t.exposed_name || *w == t.original_name)
            })
            .take(limit)
            .collect();
    }
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &McpToolInfo)> = tools
        .iter()
        .map(|tool| (score(tool, &words), tool))
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.exposed_name.cmp(&b.1.exposed_name))
    });
    scored.into_iter().take(limit).map(|(_, t)| t).collect()
}

fn score(tool: &McpToolInfo, words: &[String]) -> usize {
    let name = tool.exposed_name.to_lowercase();
    let parts: Vec<&str> = name.split(['_', '-']).filter(|p| !p.is_empty()).collect();
    let description = tool.description.to_lowercase();
    words
        .iter()
        .map(|word| {
            if parts.contains(&word.as_str()) {
                4
            } else if name.contains(word.as_str()) {
                2
            } else if description.contains(word.as_str()) {
                1
            } else {
                0
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> McpToolInfo {
        McpToolInfo {
            exposed_name: format!("mcp__s__{name}"),
            server: "s".into(),
            original_name: name.into(),
            description: format!("[MCP:s] {description}"),
            input_schema: json!({"type": "object", "properties": {}}),
            read_only: false,
            annotations: None,
        }
    }

    #[test]
    fn names_count_more_than_descriptions_and_select_is_exact() {
        let tools = vec![
            tool("create_issue", "Opens an issue in a tracker"),
            tool("list_issues", "Lists issues"),
            tool("send_mail", "Sends mail about an issue"),
            tool("weather", "Forecast"),
        ];
        let names = |found: Vec<&McpToolInfo>| -> Vec<String> {
            found.iter().map(|t| t.original_name.clone()).collect()
        };
        assert_eq!(
            names(search(&tools, "create an issue", 5)),
            ["create_issue", "list_issues", "send_mail"]
        );
        assert_eq!(names(search(&tools, "issue", 1)), ["create_issue"]);
        assert_eq!(
            names(search(&tools, "select:weather, mcp__s__send_mail", 5)),
            ["send_mail", "weather"]
        );
        assert!(search(&tools, "database", 5).is_empty());
    }

    #[test]
    fn auto_defers_only_over_the_budget_and_a_called_tool_counts_as_picked() {
        let tools: Vec<McpToolInfo> = (0..100).map(|i| tool(&format!("t{i}"), "x")).collect();
        let small = ToolSearchSettings::default();
        assert!(
            ToolSearch::new(small)
                .deferred(&tools, &[], 128_000)
                .is_empty()
        );
        let search = ToolSearch::new(ToolSearchSettings::default());
        assert_eq!(search.deferred(&tools, &[], 1000).len(), 100);
        let call = crate::llm::ToolCall {
            id: "c".into(),
            kind: "function".into(),
            function: crate::llm::FunctionCall {
                name: "mcp__s__t7".into(),
                arguments: "{}".into(),
            },
        };
        let history = vec![Message::assistant(None, vec![call])];
        let deferred = search.deferred(&tools, &history, 1000);
        assert_eq!(deferred.len(), 99);
        assert!(!deferred.contains("mcp__s__t7"));
        let off = ToolSearchSettings {
            mode: ToolSearchMode::Off,
            ..ToolSearchSettings::default()
        };
        assert!(ToolSearch::new(off).deferred(&tools, &[], 1000).is_empty());
    }
}
