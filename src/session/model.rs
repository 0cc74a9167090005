//! Choosing the model: a name checked once, whoever asks (the REPL's `/model`, the Agent
//! SDK's `set_model`, an editor's model option, `mcp serve --agent`'s `model`).

use super::HostError;
use crate::llm::LlmConfig;

/// A model name, checked against the server's list when it has one (`config`: the session's
/// endpoint, with its current model).
pub(super) async fn validate(config: &LlmConfig, model: &str) -> Result<String, HostError> {
    let model = model.trim();
    if model.is_empty() {
        return Err(HostError::EmptyModel);
    }
    let known = crate::llm::list_models(config).await;
    if known.is_empty() || known.iter().any(|m| m == model) {
        return Ok(model.to_string());
    }
    let close: Vec<&str> = known
        .iter()
        .map(String::as_str)
        .filter(|m| m.contains(model) || model.contains(m))
        .take(5)
        .collect();
    let hint = if close.is_empty() {
        "Tab after /model lists them".to_string()
    } else {
        format!("did you mean {}?", close.join(", "))
    };
    Err(HostError::UnknownModel {
        model: model.to_string(),
        hint,
    })
}
