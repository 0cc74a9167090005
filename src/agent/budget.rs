//! The spend cap at the agent's request loop: before each model request the least it can cost
//! (the conversation so far at the cheapest input price) is weighed against what the session
//! has left, and after it its cost is counted ([`super::spend_cap`]).

use super::{Agent, RunEnd};
use crate::config::Price;
use crate::llm::Usage;

impl Agent {
    /// The price of this agent's model: settings `prices`, else Ling's table.
    fn price(&self) -> Option<Price> {
        crate::config::prices::price_of(&self.options.budget.prices, &self.llm.config().model)
    }

    /// Counts one response's cost against the session's budget (when the model has a price).
    pub(super) fn spend_on(&self, usage: Usage) {
        let cost = self.price().map(|price| usage.cost(price));
        if let Some(cost) = cost {
            self.spend.add(cost);
        }
        let tokens = [
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
        ];
        crate::telemetry::tokens_and_cost(&self.llm.config().model, tokens, cost);
    }

    /// Counts what the tools' own model requests used since the last step (`web_fetch`'s
    /// question over a long page, native web search) in the usage and against the budget.
    pub(super) fn take_side_usage(&mut self) {
        let used = std::mem::take(
            &mut *self
                .host
                .side_usage
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if used != Usage::default() {
            self.spend_on(used);
            self.conversation.usage += used;
        }
    }

    /// `Some` when the next request must not be made: it would pass the cap, or the cap cannot
    /// be kept because the model has no price.
    pub(super) fn over_budget(&self) -> Option<RunEnd> {
        let cap = self.spend.cap()?;
        let model = &self.llm.config().model;
        let Some(price) = self.price() else {
            return Some(RunEnd::MaxBudget(format!(
                "maxBudgetUsd is ${cap} but Ling knows no price for the model {model}, so it \
                 cannot keep to it; give one in settings `prices` (e.g. {{\"{model}\": \
                 {{\"inputPerMTok\": 2.5, \"outputPerMTok\": 10}}}}) or run without the cap"
            )));
        };
        let cheapest = price
            .cache_read_per_m_tok
            .unwrap_or(price.input_per_m_tok)
            .min(price.input_per_m_tok);
        let least = self.conversation.context_tokens as f64 * cheapest / 1e6;
        self.spend.would_pass(least).then(|| {
            RunEnd::MaxBudget(format!(
                "stopped before a model request that would pass the budget of ${cap:.2} (spent \
                 ${:.4} so far); raise it with --max-budget-usd N or settings `maxBudgetUsd`",
                self.spend.spent()
            ))
        })
    }

    /// What the session has spent so far, its sub-agents included (US dollars).
    pub fn spent_usd(&self) -> f64 {
        self.spend.spent()
    }

    /// The session's budget; `None`: no cap.
    pub fn budget_usd(&self) -> Option<f64> {
        self.spend.cap()
    }

    /// Raises (or sets, or with `None` lifts) the session's budget: the REPL's answer when it
    /// was reached.
    pub fn set_budget_usd(&mut self, cap: Option<f64>) {
        self.options.budget.cap = cap;
        self.spend.set_cap(cap);
    }
}
