//! What one tool call came to, as the model and the user will see it: made by the dispatch
//! point, read by the checkpoints around a call and by its telemetry.

use crate::media::ImageRef;

/// The result of one call, as the model and the user will see it.
pub(super) struct CallResult {
    pub content: String,
    pub is_error: bool,
    pub display: Option<String>,
    pub total_lines: Option<usize>,
    /// The outcome in the user's words, when the model's text is not for them.
    pub told: Option<String>,
    /// Images for the model besides the text.
    pub images: Vec<ImageRef>,
    /// Who let it run or stopped it, for telemetry: `accept`, `reject_config`, `reject_hook`,
    /// `reject_user`.
    pub decision: &'static str,
}
