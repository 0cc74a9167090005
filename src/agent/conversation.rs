//! An agent's conversation: what was said (the history, recorded to the session's transcript as
//! it grows), the system prompt it is sent with (the instruction files, and the context
//! SessionStart hooks gave), how full the context window is, and what the requests cost.

use std::sync::Mutex;

use super::context::ContextState;
use super::options::AgentOptions;
use super::prompt::build_system_prompt;
use super::session::Session;
use crate::llm::{Message, Usage};
use crate::media::ImageRef;

pub(super) struct Conversation {
    pub system_prompt: String,
    pub history: Vec<Message>,
    /// Where the history is recorded (its id and transcript).
    pub session: Session,
    /// Context SessionStart hooks gave for the model; part of the system prompt.
    pub session_context: Vec<String>,
    /// How full the context is, and the window.
    pub context: ContextState,
    pub usage: Usage,
    /// Tokens of the conversation as of the last response (its prompt and its answer).
    pub context_tokens: u64,
    /// Model requests of the session.
    pub total_turns: u32,
    /// Setup warnings not yet shown (see [`super::Agent::take_warnings`]).
    pub warnings: Vec<String>,
    /// The state a custom command's turn began in, looked at before its shell lines ran.
    pub turn_checkpoint: Option<u32>,
    /// The transcript offset of this turn's user message while its checkpoint waits for its
    /// first call that writes.
    pub unrecorded_turn: Mutex<Option<u64>>,
    /// Images attached for the next prompt ([`super::Agent::attach_image`]).
    pub pending_images: Vec<ImageRef>,
}

impl Conversation {
    /// A conversation with nothing said yet, recorded to `session`, for `model`.
    pub fn new(session: Session, options: &AgentOptions, model: &str) -> Self {
        let (system_prompt, warnings) = build_system_prompt(&options.root, model, &options.prompt);
        Self {
            system_prompt,
            history: Vec::new(),
            session,
            session_context: Vec::new(),
            context: ContextState::new(options.context),
            usage: Usage::default(),
            context_tokens: 0,
            total_turns: 0,
            warnings,
            turn_checkpoint: None,
            unrecorded_turn: Mutex::default(),
            pending_images: Vec::new(),
        }
    }

    /// Adds a message to the history and the transcript.
    pub fn push(&mut self, message: Message) {
        self.session.record(&message);
        self.history.push(message);
    }

    /// The system prompt made again (for another model, or SessionStart's new context).
    pub fn rebuild_system_prompt(&mut self, options: &AgentOptions, model: &str) {
        // Warnings were given when the agent was made; a rebuild reads the same files.
        let (mut prompt, _) = build_system_prompt(&options.root, model, &options.prompt);
        if !self.session_context.is_empty() {
            prompt.push_str("\n# Session context (from SessionStart hooks)\n\n");
            prompt.push_str(&self.session_context.join("\n\n"));
            prompt.push('\n');
        }
        self.system_prompt = prompt;
        self.context.forget_count();
    }

    /// Continues with `history` (a recorded conversation, without its system prompt).
    pub fn resume(&mut self, history: Vec<Message>) {
        self.history = history;
        self.context.elided.clear();
        self.context.forget_count();
    }

    /// Forgets everything said; what follows goes to `session`.
    pub fn clear(&mut self, session: Session, options: &AgentOptions, model: &str) {
        self.history.clear();
        self.session = session;
        self.session_context.clear();
        self.context.elided.clear();
        self.context.forget_count();
        self.rebuild_system_prompt(options, model);
    }
}
