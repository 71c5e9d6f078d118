//! A session: the conversation with one model, and the turn loop that streams
//! an answer, hands each tool call to the [`Surface`], appends the results and
//! asks again until the model answers without tool calls. Front ends (headless,
//! the TUI, tests) watch through [`AgentEvent`]s; this module never depends on
//! them, and it never looks at a tool's name.

mod calls;
mod compact;
mod compaction;
mod events;
mod prompt;
mod subagent;
mod turn;

use std::sync::Arc;

use serde::Serialize;

pub use compact::Budget;
pub use events::{AgentEvent, EventSink, TurnError};
pub use prompt::{instructions_files, system_prompt};
pub use subagent::{NobodyToAsk, SubAgents};

use crate::llm::{Content, Conversation, Message, Prices, Provider, Role, ToolSpec, Usage};
use crate::tools::Surface;
use crate::transcript::{Entry, Replay, SessionLog};

pub struct Session {
    pub id: String,
    provider: Arc<dyn Provider>,
    surface: Arc<Surface>,
    tools: Vec<ToolSpec>,
    /// The Surface's generation `tools` and `system` were built at.
    tools_generation: u64,
    /// The system prompt as given; `system` adds the Surface's notes.
    base_system: String,
    system: String,
    messages: Vec<Message>,
    /// Encoded size of each message, for the context estimate.
    sizes: Vec<u64>,
    /// Encoded size of the system prompt and tools.
    fixed_bytes: u64,
    /// The server counted more tokens than estimated: this many per
    /// thousand estimated (≥ 1000).
    calibration: u64,
    budget: Budget,
    conversation: Conversation,
    usage: Usage,
    /// Usage and prices per (provider, model), sub-agents included.
    by_model: Vec<ModelUsage>,
    prices: Option<Prices>,
    tool_calls: u64,
    max_steps: u32,
    log: Option<Arc<SessionLog>>,
    turn: u32,
    /// Where each turn since the last compaction started in `messages`.
    /// (message, content block) where each turn's prompt begins.
    turn_starts: Vec<(u32, (usize, usize))>,
    /// The read tracker's version last written to the log.
    reads_logged: u64,
    /// The estimate right after the last compaction: one that could not
    /// bring the conversation under the limit is not repeated every step.
    compacted_to: Option<u64>,
    /// Why the model's last response ended (`end_turn`, `max_tokens`...).
    stop: Option<String>,
    /// Its turns are the file history's checkpoints (a sub-agent's are
    /// not: it shares its parent's history).
    checkpoints: bool,
    /// Model round trips of the last turn, and time spent waiting for the
    /// model in it.
    steps: u32,
    api_time: std::time::Duration,
}

/// What one model cost in this session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelUsage {
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    /// USD, when the model's prices are known.
    pub cost: Option<f64>,
    /// The prices it was used at.
    #[serde(skip)]
    prices: Option<Prices>,
}

impl Session {
    pub fn new(
        id: String,
        provider: Arc<dyn Provider>,
        surface: Arc<Surface>,
        system: String,
        max_steps: u32,
    ) -> Session {
        let mut session = Session {
            id,
            tools: Vec::new(),
            // Never a real generation: the first refresh builds both.
            tools_generation: u64::MAX,
            provider,
            surface,
            base_system: system.clone(),
            system,
            messages: Vec::new(),
            sizes: Vec::new(),
            fixed_bytes: 0,
            calibration: 1000,
            budget: Budget::of(None),
            conversation: Conversation {
                id: Conversation::new_id(),
                epoch: 0,
            },
            usage: Usage::default(),
            by_model: Vec::new(),
            prices: None,
            tool_calls: 0,
            max_steps: max_steps.max(1),
            log: None,
            turn: 0,
            turn_starts: Vec::new(),
            reads_logged: 0,
            compacted_to: None,
            stop: None,
            checkpoints: true,
            steps: 0,
            api_time: std::time::Duration::ZERO,
        };
        session.refresh_tools();
        session
    }

    /// A sub-agent's session: its turns do not move the file history's
    /// checkpoint, which belongs to the parent's turn.
    pub fn within_parent_turn(mut self) -> Session {
        self.checkpoints = false;
        self
    }

    /// Writes everything that happens to `log`.
    pub fn with_log(mut self, log: Arc<SessionLog>) -> Session {
        self.log = Some(log);
        self
    }

    /// The model's context window (tokens) and prices.
    pub fn with_model_facts(mut self, window: Option<u64>, prices: Option<Prices>) -> Session {
        self.budget = Budget::of(window);
        self.prices = prices;
        self
    }

    pub fn log(&self) -> Option<&Arc<SessionLog>> {
        self.log.as_ref()
    }

    fn record(&self, entry: &Entry) {
        if let Some(log) = &self.log {
            log.append(entry);
        }
    }

    /// Continues a session read back from its log: its conversation, turn
    /// count and usage. Files the model had read count as read only where
    /// their content is still what it saw.
    pub fn resume(&mut self, replay: &Replay) {
        self.messages = replay.messages.clone();
        self.sizes = self.messages.iter().map(compact::message_bytes).collect();
        self.conversation.epoch += 1;
        self.turn = replay.turns;
        self.turn_starts.clear();
        self.usage = replay.total_usage();
        self.by_model = replay
            .usage
            .iter()
            .map(|((provider, model), usage)| ModelUsage {
                provider: provider.clone(),
                model: model.clone(),
                usage: *usage,
                cost: None,
                prices: None,
            })
            .collect();
        let tracker = &self.surface.context().tracker;
        for (path, hash) in &replay.reads {
            if let Ok(bytes) = std::fs::read(path)
                && crate::tools::history::hash(&bytes) == *hash
                && let Ok(meta) = std::fs::metadata(path)
            {
                tracker.record(path, crate::tools::FileStamp::of(&meta, &bytes));
            }
        }
        self.reads_logged = tracker.since(u64::MAX).1;
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Usage and cost per model, sub-agents included.
    pub fn usage_by_model(&self) -> Vec<ModelUsage> {
        let mut list = self.by_model.clone();
        let (provider, model) = self.provider.describe();
        for m in &mut list {
            // A model of a resumed session's earlier turns is priced like
            // the current one when it is the current one.
            if m.prices.is_none() && m.provider == provider && m.model == model {
                m.prices = self.prices;
            }
            m.cost = m.prices.map(|p| p.cost(&m.usage));
        }
        list
    }

    /// USD so far: the sum over the models whose prices are known (`None`
    /// when none is).
    pub fn cost(&self) -> Option<f64> {
        let list = self.usage_by_model();
        if list.is_empty() {
            return self.prices.map(|_| 0.0);
        }
        let known: Vec<f64> = list.iter().filter_map(|m| m.cost).collect();
        (!known.is_empty()).then(|| known.iter().sum())
    }

    pub fn tool_calls(&self) -> u64 {
        self.tool_calls
    }

    pub fn turns(&self) -> u32 {
        self.turn
    }

    /// Model round trips of the last turn (compaction summaries included).
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Time the last turn spent waiting for the model.
    pub fn api_time(&self) -> std::time::Duration {
        self.api_time
    }

    /// Why the model's last response ended, as the session log says it.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop.as_deref()
    }

    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// Talks to another model from the next request on.
    pub fn set_provider(
        &mut self,
        provider: Arc<dyn Provider>,
        window: Option<u64>,
        prices: Option<Prices>,
    ) {
        if let Some(d) = &self.surface.context().delegate {
            d.set_provider(Arc::clone(&provider));
        }
        let (p, m) = provider.describe();
        self.record(&Entry::Model {
            provider: p.to_string(),
            model: m.to_string(),
        });
        self.provider = provider;
        self.budget = Budget::of(window);
        self.prices = prices;
        self.calibration = 1000;
    }

    pub fn surface(&self) -> &Arc<Surface> {
        &self.surface
    }

    pub fn provider(&self) -> &dyn Provider {
        self.provider.as_ref()
    }

    /// The estimated size of the next request, in tokens, the window, and
    /// whether the window is known (not assumed).
    pub fn context(&self) -> (u64, u64, bool) {
        (self.estimate(), self.budget.window, self.budget.known)
    }

    fn estimate(&self) -> u64 {
        let bytes = self.fixed_bytes + self.sizes.iter().sum::<u64>();
        bytes / compact::BYTES_PER_TOKEN * self.calibration / 1000
    }

    fn add_usage(&mut self, step: Usage) {
        self.usage += step;
        let (provider, model) = self.provider.describe();
        match self
            .by_model
            .iter_mut()
            .find(|m| m.provider == provider && m.model == model)
        {
            Some(m) => {
                m.usage += step;
                m.prices = m.prices.or(self.prices);
            }
            None => self.by_model.push(ModelUsage {
                provider: provider.to_string(),
                model: model.to_string(),
                usage: step,
                cost: None,
                prices: self.prices,
            }),
        }
        self.record(&Entry::Usage {
            provider: provider.to_string(),
            model: model.to_string(),
            usage: step,
        });
    }

    /// `/rewind`: the conversation as it was before turn `turn` (a turn
    /// since the last compaction); returns that turn's prompt.
    pub fn rewind(&mut self, turn: u32) -> Option<String> {
        let i = self.turn_starts.iter().position(|(t, _)| *t == turn)?;
        let (_, (at, block)) = self.turn_starts[i];
        let prompt = self.prompt_at(at, block);
        self.turn_starts.truncate(i);
        self.messages.truncate(at + 1);
        if let Some(m) = self.messages.get_mut(at) {
            m.content.truncate(block);
            if m.content.is_empty() {
                self.messages.truncate(at);
            }
        }
        self.sizes = self.messages.iter().map(compact::message_bytes).collect();
        self.conversation.epoch += 1;
        self.record(&Entry::Rewind {
            keep: at,
            keep_blocks: Some(block),
        });
        if let Some(log) = &self.log {
            log.flush();
        }
        prompt
    }

    /// The prompt that begins at block `block` of message `at`.
    fn prompt_at(&self, at: usize, block: usize) -> Option<String> {
        self.messages.get(at)?.content[block..]
            .iter()
            .find_map(|c| match c {
                Content::Text { text } => Some(text.clone()),
                _ => None,
            })
    }

    /// Turns the conversation can be rewound to, with their prompts.
    pub fn rewind_points(&self) -> Vec<(u32, String)> {
        self.turn_starts
            .iter()
            .filter_map(|(t, (at, block))| Some((*t, self.prompt_at(*at, *block)?)))
            .collect()
    }

    /// Records an undo (or redo) of `checkpoint` that restored `files`;
    /// the model must read them again before changing them.
    pub fn note_undo(&self, checkpoint: &str, redo: bool, files: &[std::path::PathBuf]) {
        let tracker = &self.surface.context().tracker;
        for f in files {
            tracker.forget(f);
        }
        self.record(&Entry::Undo {
            checkpoint: checkpoint
                .rsplit('-')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            redo,
            files: files.to_vec(),
        });
        if let Some(log) = &self.log {
            log.flush();
        }
    }

    /// Tools that joined or left the Surface since the last request (an MCP
    /// server became ready) reach the model, with their sources' notes in
    /// the system prompt. Costs one atomic load when nothing changed.
    fn refresh_tools(&mut self) {
        let generation = self.surface.generation();
        if generation == self.tools_generation {
            return;
        }
        self.tools_generation = generation;
        self.tools = self.surface.specs();
        self.system = self.base_system.clone();
        for note in self.surface.notes() {
            self.system.push_str("\n\n");
            self.system.push_str(&note);
        }
        self.fixed_bytes = self.system.len() as u64
            + self
                .tools
                .iter()
                .map(|t| {
                    (t.name.len() + t.description.len() + t.parameters.to_string().len()) as u64
                })
                .sum::<u64>();
    }

    /// Appends to the last user message when there is one (tool results and
    /// a following prompt belong to one user turn), else starts one.
    fn push_user(&mut self, content: Content) {
        let added = compact::message_bytes(&Message {
            role: Role::User,
            content: vec![content.clone()],
        });
        let joins = self.messages.last().is_some_and(|m| m.role == Role::User);
        crate::transcript::store::push_user(&mut self.messages, content);
        match (joins, self.sizes.last_mut()) {
            (true, Some(last)) => *last += added,
            _ => self.sizes.push(added),
        }
    }
}
