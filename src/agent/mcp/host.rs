//! What Ling answers when an MCP server asks something of the client: `sampling/createMessage`
//! is answered with the agent's own model (no tools), and `elicitation/create` with the user's
//! answers. Both go through an [`McpAsker`] (the REPL user) when there is one; without one (`-p`)
//! sampling is refused unless `allowSampling`, and elicitation declined unless the
//! `accept-defaults` policy fills in the defaults. URL-mode elicitation only ever shows the URL.

use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::elicitation::{ElicitAnswer, Form, accept_defaults};
use crate::config::ElicitationPolicy;
use crate::llm::{FinishReason, LlmClient, Message};
use crate::mcp::jsonrpc::{ErrorObject, INTERNAL_ERROR, INVALID_PARAMS};
use crate::mcp::{ClientHandler, HandlerSupport};

/// The JSON-RPC code MCP uses for a sampling request the user (or the policy) rejected.
pub const SAMPLING_REFUSED: i64 = -1;

/// One sampling request, as shown to the user and sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    pub server: String,
    pub system_prompt: Option<String>,
    /// `(role, text)`, `role` being `user` or `assistant`.
    pub messages: Vec<(String, String)>,
    pub max_tokens: Option<u32>,
}

impl SamplingRequest {
    pub fn parse(server: &str, params: &Value) -> Result<Self, String> {
        let list = params["messages"]
            .as_array()
            .ok_or("sampling/createMessage needs \"messages\"")?;
        let mut messages = Vec::with_capacity(list.len());
        for message in list {
            let role = match message["role"].as_str() {
                Some(role @ ("user" | "assistant")) => role.to_string(),
                other => return Err(format!("message role {other:?} is not user or assistant")),
            };
            let blocks = match &message["content"] {
                Value::Array(blocks) => blocks.clone(),
                block => vec![block.clone()],
            };
            let text: Vec<String> = blocks.iter().map(block_text).collect();
            messages.push((role, text.join("\n")));
        }
        Ok(Self {
            server: server.to_string(),
            system_prompt: params["systemPrompt"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            messages,
            max_tokens: params["maxTokens"]
                .as_u64()
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        })
    }

    /// The conversation sent to the model.
    pub fn chat_messages(&self) -> Vec<Message> {
        let mut messages = Vec::with_capacity(self.messages.len() + 1);
        if let Some(system) = &self.system_prompt {
            messages.push(Message::system(system.clone()));
        }
        for (role, text) in &self.messages {
            messages.push(match role.as_str() {
                "assistant" => Message::Assistant {
                    content: Some(text.clone()),
                    tool_calls: Vec::new(),
                },
                _ => Message::user(text.clone()),
            });
        }
        messages
    }
}

/// A content block's text; media the model API here cannot take become a placeholder.
fn block_text(block: &Value) -> String {
    match block["type"].as_str() {
        Some("text") => block["text"].as_str().unwrap_or_default().to_string(),
        Some(kind) => format!(
            "[{kind} {} omitted]",
            block["mimeType"].as_str().unwrap_or("content")
        ),
        None => String::new(),
    }
}

/// Whoever can answer a server's questions: the REPL user.
#[async_trait]
pub trait McpAsker: Send + Sync {
    /// Shows the request (server, system prompt, messages); true lets it go to the model.
    async fn approve_sampling(&self, request: &SamplingRequest) -> bool;
    /// Asks for the form's fields, or lets the user decline or cancel.
    async fn fill_form(&self, server: &str, form: &Form) -> ElicitAnswer;
    /// Shows a URL the server wants the user to visit (never opened by Ling); `Accept` means
    /// the user will go there.
    async fn show_url(&self, server: &str, message: &str, url: &str) -> ElicitAnswer;
}

/// What the settings allow when nobody is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPolicy {
    /// `--allow-sampling` / `allowSampling`: sampling requests go to the model without a question.
    pub allow_sampling: bool,
    /// Someone can be asked (the REPL). Sampling is declared to servers only when it can be
    /// served: here, or with `allow_sampling`.
    pub interactive: bool,
    /// How form elicitation is answered when nobody can be asked.
    pub elicitation: ElicitationPolicy,
}

/// The [`ClientHandler`] of a Ling run.
pub struct McpHost {
    llm: Mutex<LlmClient>,
    policy: HostPolicy,
    asker: RwLock<Option<Arc<dyn McpAsker>>>,
}

impl McpHost {
    pub fn new(llm: LlmClient, policy: HostPolicy) -> Arc<Self> {
        Arc::new(Self {
            llm: Mutex::new(llm),
            policy,
            asker: RwLock::new(None),
        })
    }

    /// From now on, questions go to `asker` (the REPL installs itself).
    pub fn set_asker(&self, asker: Arc<dyn McpAsker>) {
        if let Ok(mut slot) = self.asker.write() {
            *slot = Some(asker);
        }
    }

    /// Follows the agent's `/model` switch.
    pub fn set_model(&self, model: String) {
        if let Ok(mut llm) = self.llm.lock() {
            llm.set_model(model);
        }
    }

    fn asker(&self) -> Option<Arc<dyn McpAsker>> {
        self.asker.read().ok().and_then(|a| a.clone())
    }

    fn llm(&self) -> LlmClient {
        self.llm
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

fn error(code: i64, message: String) -> ErrorObject {
    ErrorObject {
        code,
        message,
        data: None,
    }
}

#[async_trait]
impl ClientHandler for McpHost {
    /// Everything is declared: without anybody to ask, the policy still answers (a refusal
    /// that says which flag would allow it is more use to the user than a missing tool).
    fn support(&self) -> HandlerSupport {
        HandlerSupport {
            sampling: self.policy.allow_sampling || self.policy.interactive,
            elicitation: true,
            elicitation_url: true,
        }
    }

    async fn create_message(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        let request =
            SamplingRequest::parse(server, &params).map_err(|m| error(INVALID_PARAMS, m))?;
        if !self.policy.allow_sampling {
            let Some(asker) = self.asker() else {
                return Err(error(
                    SAMPLING_REFUSED,
                    "sampling is not allowed in a non-interactive run: rerun with \
                     --allow-sampling (or set \"allowSampling\": true in settings)"
                        .into(),
                ));
            };
            if !asker.approve_sampling(&request).await {
                return Err(error(
                    SAMPLING_REFUSED,
                    "the user rejected the sampling request".into(),
                ));
            }
        }
        let llm = self.llm();
        let completion = llm
            .stream_chat_with(
                &request.chat_messages(),
                &[],
                request.max_tokens,
                &mut |_| {},
            )
            .await
            .map_err(|e| error(INTERNAL_ERROR, format!("the model request failed: {e}")))?;
        let stop_reason = match completion.finish_reason {
            FinishReason::Length => "maxTokens",
            _ => "endTurn",
        };
        Ok(json!({
            "role": "assistant",
            "content": {"type": "text", "text": completion.content},
            "model": llm.config().model,
            "stopReason": stop_reason,
        }))
    }

    async fn elicit(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        let asker = self.asker();
        if params["mode"].as_str() == Some("url") {
            let url = params["url"].as_str().unwrap_or_default();
            let message = params["message"].as_str().unwrap_or_default();
            let answer = match asker {
                Some(asker) if !url.is_empty() => asker.show_url(server, message, url).await,
                _ => ElicitAnswer::Decline,
            };
            return Ok(match answer {
                ElicitAnswer::Accept(_) => json!({"action": "accept"}),
                other => other.to_result(),
            });
        }
        let answer = match asker {
            Some(asker) => {
                let form = Form::parse(&params).map_err(|m| error(INVALID_PARAMS, m))?;
                asker.fill_form(server, &form).await
            }
            None => match self.policy.elicitation {
                ElicitationPolicy::AcceptDefaults => accept_defaults(&params),
                ElicitationPolicy::Decline => ElicitAnswer::Decline,
            },
        };
        Ok(answer.to_result())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn parses_a_sampling_request_into_chat_messages() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"},
                                                   {"type": "image", "mimeType": "image/png"}]}
            ],
            "systemPrompt": "be brief", "maxTokens": 100
        });
        let request = SamplingRequest::parse("srv", &params).unwrap();
        assert_eq!(request.max_tokens, Some(100));
        assert_eq!(
            request.chat_messages(),
            vec![
                Message::system("be brief"),
                Message::user("hi"),
                Message::Assistant {
                    content: Some("hello\n[image image/png omitted]".into()),
                    tool_calls: Vec::new()
                },
            ]
        );
        assert!(SamplingRequest::parse("srv", &json!({"messages": [{"role": "x"}]})).is_err());
    }

    fn host(policy: HostPolicy) -> Arc<McpHost> {
        let llm = LlmClient::new(crate::llm::LlmConfig::new("http://127.0.0.1:9", "m")).unwrap();
        McpHost::new(llm, policy)
    }

    #[tokio::test]
    async fn without_anybody_to_ask_sampling_is_refused_and_forms_follow_the_policy() {
        let strict = host(HostPolicy {
            allow_sampling: false,
            interactive: false,
            elicitation: ElicitationPolicy::Decline,
        });
        assert!(
            !strict.support().sampling,
            "sampling declared with nobody to serve it"
        );
        assert!(strict.support().elicitation);
        let refused = strict
            .create_message("s", json!({"messages": []}))
            .await
            .unwrap_err();
        assert_eq!(refused.code, SAMPLING_REFUSED);
        assert!(refused.message.contains("--allow-sampling"), "{refused:?}");
        let form = json!({"message": "m", "requestedSchema": {"type": "object",
            "properties": {"n": {"type": "string", "default": "x"}}}});
        assert_eq!(
            strict.elicit("s", form.clone()).await.unwrap(),
            json!({"action": "decline"})
        );
        let lenient = host(HostPolicy {
            allow_sampling: false,
            interactive: false,
            elicitation: ElicitationPolicy::AcceptDefaults,
        });
        for (allow_sampling, interactive) in [(true, false), (false, true)] {
            let served = host(HostPolicy {
                allow_sampling,
                interactive,
                elicitation: ElicitationPolicy::Decline,
            });
            assert!(served.support().sampling);
        }
        assert_eq!(
            lenient.elicit("s", form).await.unwrap(),
            json!({"action": "accept", "content": {"n": "x"}})
        );
        let url = json!({"mode": "url", "url": "https://example.com", "message": "m",
                         "elicitationId": "e"});
        assert_eq!(
            lenient.elicit("s", url).await.unwrap(),
            json!({"action": "decline"})
        );
    }
}
