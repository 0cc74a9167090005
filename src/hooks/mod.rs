//! The hook engine of `docs/hooks.md`: Claude Code's hook contract (stdin JSON, exit codes, JSON
//! output), so that existing hook scripts work unchanged. The configuration is read by
//! `config::hooks`; here the matchers are compiled ([`matcher`]), handlers run as `sh -c`
//! commands (`command`) or HTTP POSTs (`http`), their output is read (`output`) and combined
//! into one [`HookOutcome`] per event (`outcome`) by the [`HookEngine`].

mod callback;
pub mod claude;
mod command;
mod engine;
mod http;
mod input;
pub mod matcher;
mod outcome;
mod output;
mod render;
pub mod transcript;

pub use crate::config::hooks::HookEventName;
pub use callback::program_groups;
pub use engine::{ConditionMatcher, HookEngine, HookListing};
pub use input::{HookContext, HookInput, SubagentInfo, made_up_input};
pub use outcome::{Decision, HookNotice, HookOutcome, NoticeKind};
pub use render::{render_listing, render_outcome};
