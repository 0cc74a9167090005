//! MCP prompts as REPL commands: each prompt of a connected server becomes
//! `/mcp__<server>__<prompt>`; its arguments are given as `key=value` or positionally in the
//! order the prompt declares them; the expanded messages' text, joined, is the user message of a
//! normal turn.

use serde_json::{Map, Value};

use super::{McpError, McpManager, ServerState};

/// Why a prompt command could not be listed or expanded; each says what to type instead.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// `key=value` with a key the prompt does not declare; `known` lists those it does.
    #[error("{command} has no argument {key:?}{known}")]
    UnknownArgument {
        command: String,
        key: String,
        known: String,
    },
    #[error("{command} takes {count} argument(s){known}; quote a value that has spaces")]
    TooManyArguments {
        command: String,
        count: usize,
        known: String,
    },
    #[error("{command} needs {missing}: {command} {usage}")]
    MissingArguments {
        command: String,
        missing: String,
        usage: String,
    },
    #[error("a quote is not closed")]
    UnclosedQuote,
    #[error("MCP server {0} is not connected")]
    NotConnected(String),
    #[error("{command}: {source}")]
    Get {
        command: String,
        #[source]
        source: McpError,
    },
    #[error("{0} expanded to nothing")]
    Empty(String),
    #[error("listing the prompts of {server} failed: {source}")]
    List {
        server: String,
        #[source]
        source: McpError,
    },
}

/// One prompt of one server, as a command.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptCommand {
    /// `/mcp__<server>__<prompt>`, characters outside `[A-Za-z0-9_-]` replaced by `_`.
    pub command: String,
    pub server: String,
    pub prompt: String,
    pub description: String,
    pub arguments: Vec<PromptArgument>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PromptArgument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

impl PromptCommand {
    /// The prompt of `prompts/list` as a command.
    pub fn from_listing(server: &str, prompt: &Value) -> Option<Self> {
        let name = prompt["name"].as_str()?;
        let arguments = prompt["arguments"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|a| {
                        Some(PromptArgument {
                            name: a["name"].as_str()?.to_string(),
                            description: a["description"].as_str().map(str::to_string),
                            required: a["required"].as_bool().unwrap_or(false),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let description = prompt["description"]
            .as_str()
            .or(prompt["title"].as_str())
            .unwrap_or_default();
        Some(Self {
            command: command_name(server, name),
            server: server.to_string(),
            prompt: name.to_string(),
            description: description.to_string(),
            arguments,
        })
    }

    /// `city [state]` for the help line.
    pub fn usage(&self) -> String {
        let args: Vec<String> = self
            .arguments
            .iter()
            .map(|a| {
                if a.required {
                    a.name.clone()
                } else {
                    format!("[{}]", a.name)
                }
            })
            .collect();
        args.join(" ")
    }

    /// The `arguments` of `prompts/get` from what the user typed after the command.
    pub fn map_arguments(&self, input: &str) -> Result<Map<String, Value>, PromptError> {
        let mut values = Map::new();
        let mut positional = Vec::new();
        for token in split_args(input)? {
            match token.split_once('=') {
                Some((key, value)) if self.arguments.iter().any(|a| a.name == key) => {
                    values.insert(key.to_string(), Value::String(value.to_string()));
                }
                Some((key, _)) if self.arguments.is_empty() || is_plain_key(key) => {
                    return Err(PromptError::UnknownArgument {
                        command: self.command.clone(),
                        key: key.to_string(),
                        known: self.known_arguments(),
                    });
                }
                _ => positional.push(token),
            }
        }
        let free: Vec<&PromptArgument> = self
            .arguments
            .iter()
            .filter(|a| !values.contains_key(&a.name))
            .collect();
        let mut free = free.into_iter();
        for value in positional {
            let Some(argument) = free.next() else {
                return Err(PromptError::TooManyArguments {
                    command: self.command.clone(),
                    count: self.arguments.len(),
                    known: self.known_arguments(),
                });
            };
            values.insert(argument.name.clone(), Value::String(value));
        }
        let missing: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required && !values.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(PromptError::MissingArguments {
                command: self.command.clone(),
                missing: missing.join(", "),
                usage: self.usage(),
            });
        }
        Ok(values)
    }

    fn known_arguments(&self) -> String {
        if self.arguments.is_empty() {
            return String::new();
        }
        let names: Vec<&str> = self.arguments.iter().map(|a| a.name.as_str()).collect();
        format!(" (its arguments: {})", names.join(", "))
    }
}

/// `key` of `key=value` looks like an argument name (not, say, a URL with a query).
fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `/mcp__<server>__<prompt>`.
pub fn command_name(server: &str, prompt: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("/mcp__{}__{}", clean(server), clean(prompt))
}

/// Splits on whitespace; `"..."` and `'...'` keep spaces (also inside `key="a b"`).
fn split_args(input: &str) -> Result<Vec<String>, PromptError> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_token = false;
    let mut quote: Option<char> = None;
    for c in input.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_token = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_token {
                    tokens.push(std::mem::take(&mut current));
                    in_token = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_token = true;
            }
        }
    }
    if quote.is_some() {
        return Err(PromptError::UnclosedQuote);
    }
    if in_token {
        tokens.push(current);
    }
    Ok(tokens)
}

/// The text of a `prompts/get` result: each message's text (embedded resources as their text),
/// joined by blank lines.
pub fn prompt_text(result: &Value) -> String {
    let messages = result["messages"].as_array().cloned().unwrap_or_default();
    let parts: Vec<String> = messages
        .iter()
        .map(|message| {
            let content = &message["content"];
            match content["type"].as_str() {
                Some("text") => content["text"].as_str().unwrap_or_default().to_string(),
                Some("resource") => {
                    let resource = &content["resource"];
                    let uri = resource["uri"].as_str().unwrap_or_default();
                    match resource["text"].as_str() {
                        Some(text) => format!("<resource uri=\"{uri}\">\n{text}\n</resource>"),
                        None => format!("[binary resource {uri}]"),
                    }
                }
                Some("resource_link") => format!(
                    "[resource link: {}]",
                    content["uri"].as_str().unwrap_or_default()
                ),
                Some(kind) => format!("[{kind} omitted]"),
                None => String::new(),
            }
        })
        .filter(|p| !p.is_empty())
        .collect();
    parts.join("\n\n")
}

/// The prompts of every connected server that offers prompts, as commands. A server whose
/// listing fails is left out; the error is in the list of problems.
pub async fn prompt_commands(manager: &McpManager) -> (Vec<PromptCommand>, Vec<PromptError>) {
    let mut commands = Vec::new();
    let mut problems = Vec::new();
    for status in manager.statuses() {
        if status.state != ServerState::Connected {
            continue;
        }
        let offers = status
            .server_info
            .as_ref()
            .is_some_and(|i| i.capabilities.get("prompts").is_some());
        let Some(client) = manager.client(&status.name).filter(|_| offers) else {
            continue;
        };
        match client.list_prompts().await {
            Ok(prompts) => commands.extend(
                prompts
                    .iter()
                    .filter_map(|p| PromptCommand::from_listing(&status.name, p)),
            ),
            Err(source) => problems.push(PromptError::List {
                server: status.name.clone(),
                source,
            }),
        }
    }
    (commands, problems)
}

/// Runs `prompts/get` for the command with the typed arguments; the text to send.
pub async fn expand_prompt(
    manager: &McpManager,
    command: &PromptCommand,
    input: &str,
) -> Result<String, PromptError> {
    let arguments = command.map_arguments(input)?;
    let client = manager
        .client(&command.server)
        .ok_or_else(|| PromptError::NotConnected(command.server.clone()))?;
    let result = client
        .get_prompt(&command.prompt, Value::Object(arguments))
        .await
        .map_err(|source| PromptError::Get {
            command: command.command.clone(),
            source,
        })?;
    let text = prompt_text(&result);
    if text.trim().is_empty() {
        return Err(PromptError::Empty(command.command.clone()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn args_prompt() -> PromptCommand {
        PromptCommand::from_listing(
            "every thing",
            &json!({"name": "args-prompt", "description": "weather",
                    "arguments": [{"name": "city", "required": true}, {"name": "state"}]}),
        )
        .unwrap()
    }

    #[test]
    fn names_the_command_after_server_and_prompt() {
        let command = args_prompt();
        assert_eq!(command.command, "/mcp__every_thing__args-prompt");
        assert_eq!(command.usage(), "city [state]");
    }

    #[test]
    fn maps_keyed_and_positional_arguments() {
        let command = args_prompt();
        assert_eq!(
            command.map_arguments("Paris").unwrap(),
            json!({"city": "Paris"}).as_object().cloned().unwrap()
        );
        assert_eq!(
            command.map_arguments("state=TX 'San Antonio'").unwrap(),
            json!({"city": "San Antonio", "state": "TX"})
                .as_object()
                .cloned()
                .unwrap()
        );
        assert_eq!(
            command.map_arguments("city=\"New York\" NY").unwrap(),
            json!({"city": "New York", "state": "NY"})
                .as_object()
                .cloned()
                .unwrap()
        );
    }

    #[test]
    fn says_which_required_argument_is_missing_and_rejects_unknown_ones() {
        let command = args_prompt();
        let error = |input: &str| command.map_arguments(input).unwrap_err().to_string();
        assert_eq!(
            error("state=TX"),
            "/mcp__every_thing__args-prompt needs city: /mcp__every_thing__args-prompt city [state]"
        );
        assert_eq!(
            error("town=Paris"),
            "/mcp__every_thing__args-prompt has no argument \"town\" (its arguments: city, state)"
        );
        assert_eq!(
            error("a b c"),
            "/mcp__every_thing__args-prompt takes 2 argument(s) (its arguments: city, state); \
             quote a value that has spaces"
        );
        assert_eq!(error("'open"), "a quote is not closed");
    }

    #[test]
    fn joins_the_text_of_the_expanded_messages() {
        let result = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "first"}},
            {"role": "user", "content": {"type": "resource",
                "resource": {"uri": "demo://r/1", "text": "body"}}}
        ]});
        assert_eq!(
            prompt_text(&result),
            "first\n\n<resource uri=\"demo://r/1\">\nbody\n</resource>"
        );
    }
}
