//! What Ling answers when an MCP server asks something of the client: `sampling/createMessage`
//! is answered with the agent's own model (no tools), and `elicitation/create` with the user's
//! answers. Both go through an [`McpAsker`] (the REPL user) when there is one; without one (`-p`)
//! sampling is refused unless `allowSampling`, and elicitation declined unless the
//! `accept-defaults` policy fills in the defaults. URL-mode elicitation only ever shows the URL.

use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;

use crate::config::ElicitationPolicy;
use crate::llm::{FinishReason, LlmClient, Message};
use crate::mcp::elicitation::{ElicitAnswer, ElicitRequest, Form};
use crate::mcp::jsonrpc::{ErrorObject, INTERNAL_ERROR, INVALID_PARAMS};
use crate::mcp::sampling::{Role, SAMPLING_REFUSED, SamplingRequest, SamplingResult, StopReason};
use crate::mcp::{ClientHandler, HandlerSupport};

/// The conversation of a sampling request, as sent to the model.
pub fn chat_messages(request: &SamplingRequest) -> Vec<Message> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system_prompt {
        messages.push(Message::system(system.clone()));
    }
    for message in &request.messages {
        messages.push(match message.role {
            Role::Assistant => Message::assistant(Some(message.text.clone()), Vec::new()),
            Role::User => Message::user(message.text.clone()),
        });
    }
    messages
}

/// Whoever can answer a server's questions: the REPL user.
#[async_trait]
pub trait McpAsker: Send + Sync {
    /// Shows the request of `server` (system prompt, messages); true lets it go to the model.
    async fn approve_sampling(&self, server: &str, request: &SamplingRequest) -> bool;
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
    /// Tells Notification hooks when a server's question waits for the user.
    notifier: RwLock<Option<crate::agent::Notifier>>,
}

impl McpHost {
    pub fn new(llm: LlmClient, policy: HostPolicy) -> Arc<Self> {
        Arc::new(Self {
            llm: Mutex::new(llm),
            policy,
            asker: RwLock::new(None),
            notifier: RwLock::new(None),
        })
    }

    /// Questions put to the user are announced to Notification hooks (`elicitation_dialog`).
    pub fn set_notifier(&self, notifier: crate::agent::Notifier) {
        if let Ok(mut slot) = self.notifier.write() {
            *slot = Some(notifier);
        }
    }

    fn notify(&self, message: String) {
        if let Some(notifier) = self.notifier.read().ok().and_then(|n| n.clone()) {
            notifier.notify("elicitation_dialog", message);
        }
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

    async fn create_message(
        &self,
        server: &str,
        request: &SamplingRequest,
    ) -> Result<SamplingResult, ErrorObject> {
        if !self.policy.allow_sampling {
            let Some(asker) = self.asker() else {
                return Err(error(
                    SAMPLING_REFUSED,
                    "sampling is not allowed in a non-interactive run: rerun with \
                     --allow-sampling (or set \"allowSampling\": true in settings)"
                        .into(),
                ));
            };
            self.notify(format!(
                "MCP server {server} asks to use the model (sampling)"
            ));
            if !asker.approve_sampling(server, request).await {
                return Err(error(
                    SAMPLING_REFUSED,
                    "the user rejected the sampling request".into(),
                ));
            }
        }
        let llm = self.llm();
        let completion = llm
            .stream_chat_with(
                &chat_messages(request),
                &[],
                request.max_tokens,
                &mut |_| {},
            )
            .await
            .map_err(|e| error(INTERNAL_ERROR, format!("the model request failed: {e}")))?;
        Ok(SamplingResult {
            text: completion.content,
            model: llm.config().model.clone(),
            stop_reason: match completion.finish_reason {
                FinishReason::Length => StopReason::MaxTokens,
                _ => StopReason::EndTurn,
            },
        })
    }

    async fn elicit(
        &self,
        server: &str,
        request: &ElicitRequest,
    ) -> Result<ElicitAnswer, ErrorObject> {
        let asker = self.asker();
        match (request, asker) {
            (ElicitRequest::Url { message, url }, Some(asker)) if !url.is_empty() => {
                self.notify(format!("MCP server {server} asks: {message}"));
                Ok(asker.show_url(server, message, url).await)
            }
            (ElicitRequest::Url { .. }, _) => Ok(ElicitAnswer::Decline),
            (ElicitRequest::Form(form), Some(asker)) => match form {
                Ok(form) => {
                    self.notify(format!("MCP server {server} asks: {}", form.message));
                    Ok(asker.fill_form(server, form).await)
                }
                Err(why) => Err(error(INVALID_PARAMS, why.to_string())),
            },
            (ElicitRequest::Form(_), None) => Ok(match self.policy.elicitation {
                ElicitationPolicy::AcceptDefaults => request.accept_defaults(),
                ElicitationPolicy::Decline => ElicitAnswer::Decline,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::sampling::SamplingMessage;
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    fn elicit(params: Value) -> ElicitRequest {
        ElicitRequest::parse(&params)
    }

    #[test]
    fn a_sampling_request_becomes_the_chat_messages_sent() {
        let message = |role, text: &str| SamplingMessage {
            role,
            text: text.into(),
        };
        let request = SamplingRequest {
            system_prompt: Some("be brief".into()),
            messages: vec![message(Role::User, "hi"), message(Role::Assistant, "hello")],
            max_tokens: None,
        };
        assert_eq!(
            chat_messages(&request),
            vec![
                Message::system("be brief"),
                Message::user("hi"),
                Message::assistant(Some("hello".into()), Vec::new()),
            ]
        );
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
        let empty = SamplingRequest::parse(&json!({"messages": []})).unwrap();
        let refused = strict.create_message("s", &empty).await.unwrap_err();
        assert_eq!(refused.code, SAMPLING_REFUSED);
        assert!(refused.message.contains("--allow-sampling"), "{refused:?}");
        let form = json!({"message": "m", "requestedSchema": {"type": "object",
            "properties": {"n": {"type": "string", "default": "x"}}}});
        assert_eq!(
            strict.elicit("s", &elicit(form.clone())).await.unwrap(),
            ElicitAnswer::Decline
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
            lenient
                .elicit("s", &elicit(form))
                .await
                .unwrap()
                .to_result(),
            json!({"action": "accept", "content": {"n": "x"}})
        );
        let url = json!({"mode": "url", "url": "https://example.com", "message": "m",
                         "elicitationId": "e"});
        assert_eq!(
            lenient.elicit("s", &elicit(url)).await.unwrap(),
            ElicitAnswer::Decline
        );
    }
}
