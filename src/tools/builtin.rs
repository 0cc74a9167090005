//! Registration of the builtin tools.
use super::ToolRegistry;
pub(super) fn register_all(_registry: &mut ToolRegistry) {}
