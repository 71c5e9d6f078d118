//! The TUI's state ([`App`]), what reaches it from the agent side
//! ([`UiEvent`]) and what it asks of it ([`Request`]): agent events become
//! cells, approvals become dialogs. Input is handled in `keys`, drawing in
//! `view`.

mod keys;
mod view;

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use super::cells::{
    AssistantCell, Cached, Cell, NoticeCell, Theme, ThinkingCell, ToolCell, ToolState, UserCell,
};
use super::composer::Composer;
use super::dialog::Dialog;
use crate::agent::AgentEvent;
use crate::llm::Usage;
use crate::permission::{ApprovalRequest, Responder};

/// What reaches the UI from the agent side.
pub enum UiEvent {
    Agent(AgentEvent),
    /// A message for the person that does not end a turn.
    Notice(String, bool),
    /// Language servers and their state ("running", "failed: why").
    Servers(Vec<(String, String)>),
    Approval(ApprovalRequest, Responder),
    TurnDone(Result<(), String>),
    /// A prompt of a resumed session, shown as sent.
    User(String),
    /// The transcript starts over (another session was resumed).
    Reset,
    /// Sessions of this project to pick one from: (id, label).
    Picker(Vec<(String, String)>),
    /// The session now shown.
    Session(String),
    /// The model was switched (and its prices, when known).
    Model(String, Option<crate::llm::Prices>),
    /// A question for the person: `y` sends the command, any other key
    /// drops it.
    Confirm(String, Request),
    /// The project's files, for the `@` picker.
    Files(Vec<String>),
}

/// The list `/resume` (or `agent --resume`) offers; typing filters it.
pub struct Picker {
    items: Vec<(String, String)>,
    filter: String,
    selected: usize,
}

impl Picker {
    fn shown(&self) -> Vec<&(String, String)> {
        let f = self.filter.to_lowercase();
        self.items
            .iter()
            .filter(|(id, label)| {
                f.is_empty() || label.to_lowercase().contains(&f) || id.starts_with(&f)
            })
            .collect()
    }
}

/// What the UI asks of the agent side.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Send(String),
    Interrupt,
    Clear,
    SetYolo(bool),
    /// Switch the model of the current provider, and its reasoning effort
    /// (`reasoning.effort` of the Responses API) when given.
    SetModel(String, Option<String>),
    /// `/model`: the models the provider offers.
    ListModels,
    /// Edit the draft in `$VISUAL`/`$EDITOR` (handled by the event loop).
    Editor,
    /// `/compact [focus]`.
    Compact(Option<String>),
    /// `/undo [force]`, `/redo [force]`.
    Undo {
        redo: bool,
        force: bool,
    },
    /// `/rewind [N] [code|chat|both]`: list turns, or go back to before N.
    Rewind(Option<(u32, String)>),
    /// The sessions of this project, for the picker.
    ListSessions,
    Resume(String),
    /// `/status`, `/cost`.
    Status,
    Cost,
    /// `!cmd`: the person runs a command; its output joins the next prompt.
    Shell(String),
    /// `/diff`: what this session changed, per file.
    Diff,
    /// `/permissions`: the rules in effect and this session's grants.
    Permissions,
    Quit,
}

pub struct Status {
    pub provider: String,
    pub model: String,
    /// USD per million tokens, when known.
    pub prices: Option<crate::llm::Prices>,
    /// Estimated tokens of the next request, and the model's window when
    /// known.
    pub context: Option<(u64, Option<u64>)>,
    pub session: String,
    /// Language servers and their state.
    pub servers: Vec<(String, String)>,
    pub yolo: bool,
    pub sandbox: String,
    pub cwd: String,
}

pub struct App {
    cells: Vec<Cached>,
    /// This session has a conversation (a prompt was sent or replayed).
    pub talked: bool,
    tools: HashMap<String, usize>,
    pub composer: Composer,
    dialog: Option<Dialog>,
    approvals: VecDeque<(ApprovalRequest, Responder)>,
    queued: VecDeque<String>,
    pub status: Status,
    usage: Usage,
    working: Option<Instant>,
    /// Lines scrolled up from the bottom; 0 follows new output.
    scroll: usize,
    /// Total transcript lines and width at the last draw, so new output
    /// below does not move the view of someone reading above.
    last_total: (u16, usize),
    ctrl_c: bool,
    last_key: Option<Instant>,
    pub theme: Theme,
    pub commands: Vec<Request>,
    pub quit: bool,
    picker: Option<Picker>,
    /// Sent on `y`: the answer to a [`UiEvent::Confirm`].
    confirm: Option<Request>,
    /// The person's own slash commands.
    pub custom: Vec<super::custom::Custom>,
    /// The project's files, matched against an `@word` being typed.
    mentions: super::mention::Mentions,
    /// The files the `@` popup shows now, best first.
    mention_matches: Vec<String>,
}

impl App {
    pub fn new(status: Status, theme: Theme) -> App {
        App {
            cells: Vec::new(),
            talked: false,
            tools: HashMap::new(),
            composer: Composer::default(),
            dialog: None,
            approvals: VecDeque::new(),
            queued: VecDeque::new(),
            status,
            usage: Usage::default(),
            working: None,
            scroll: 0,
            last_total: (0, 0),
            ctrl_c: false,
            last_key: None,
            theme,
            commands: Vec::new(),
            quit: false,
            picker: None,
            confirm: None,
            custom: Vec::new(),
            mentions: Default::default(),
            mention_matches: Vec::new(),
        }
    }

    pub fn working(&self) -> bool {
        self.working.is_some()
    }

    pub fn dialog_open(&self) -> bool {
        self.dialog.is_some()
    }

    /// The first screen's cell.
    pub fn welcome(&mut self, cell: super::cells::WelcomeCell) {
        self.push(cell);
    }

    fn push(&mut self, cell: impl Cell + 'static) {
        self.cells.push(Cached::new(Box::new(cell)));
    }

    pub fn notice(&mut self, text: &str, error: bool) {
        self.push(NoticeCell {
            text: text.to_string(),
            error,
        });
    }

    pub fn apply(&mut self, ev: UiEvent) {
        match ev {
            UiEvent::Agent(a) => self.agent_event(a),
            UiEvent::Notice(text, error) => self.notice(&text, error),
            UiEvent::Servers(list) => self.status.servers = list,
            UiEvent::Approval(req, responder) => {
                if let Some(&i) = self.tools.get(&req.call_id) {
                    self.set_tool_state(i, ToolState::WaitingApproval);
                }
                self.approvals.push_back((req, responder));
                self.next_dialog();
            }
            UiEvent::TurnDone(result) => {
                self.working = None;
                // Questions of a finished turn can no longer be answered.
                self.dialog = None;
                self.approvals.clear();
                let open: Vec<usize> = self.tools.values().copied().collect();
                for i in open {
                    if let Some(t) = self.tool_mut(i)
                        && matches!(t.state, ToolState::Running(_) | ToolState::WaitingApproval)
                    {
                        t.state = ToolState::Failed;
                    }
                }
                self.tools.clear();
                if let Err(e) = result {
                    self.notice(&e, true);
                }
                if let Some(next) = self.queued.pop_front() {
                    self.push(UserCell {
                        text: next.clone(),
                        queued: false,
                    });
                    self.working = Some(Instant::now());
                    self.commands.push(Request::Send(next));
                }
            }
            UiEvent::User(text) => {
                self.talked = true;
                self.push(UserCell {
                    text,
                    queued: false,
                })
            }
            UiEvent::Reset => {
                self.cells.clear();
                self.tools.clear();
                self.usage = Usage::default();
            }
            UiEvent::Picker(items) => {
                if items.is_empty() {
                    self.notice("No earlier sessions in this project.", false);
                } else {
                    self.picker = Some(Picker {
                        items,
                        filter: String::new(),
                        selected: 0,
                    });
                }
            }
            UiEvent::Session(id) => self.status.session = id,
            UiEvent::Files(files) => {
                self.mentions.set_files(files);
                self.refresh_mentions();
            }
            UiEvent::Model(name, prices) => {
                self.notice(&format!("Model: {name} (from the next message on)."), false);
                self.status.model = name;
                self.status.prices = prices;
            }
            UiEvent::Confirm(text, command) => {
                self.notice(
                    &format!("{text}\nPress y to overwrite them, any other key to keep them."),
                    true,
                );
                self.confirm = Some(command);
            }
        }
    }

    fn next_dialog(&mut self) {
        if self.dialog.is_none()
            && let Some((req, responder)) = self.approvals.pop_front()
        {
            self.dialog = Some(Dialog::new(req, responder, self.last_key));
        }
    }

    fn tool_mut(&mut self, i: usize) -> Option<&mut ToolCell> {
        let cell = self.cells.get_mut(i)?;
        cell.invalidate();
        // SAFETY-free downcast: tool cells are only created by `agent_event`,
        // which records their index; the index map is cleared with the cells.
        let any: &mut dyn Cell = cell.cell.as_mut();
        (any as &mut dyn std::any::Any).downcast_mut::<ToolCell>()
    }

    fn set_tool_state(&mut self, i: usize, state: ToolState) {
        if let Some(t) = self.tool_mut(i) {
            t.state = state;
        }
    }

    /// Streamed text continues the last cell when it is a `C`, else starts one.
    fn append_or_push<C: Cell + 'static>(
        &mut self,
        text: String,
        field: fn(&mut C) -> &mut String,
        new: fn(String) -> C,
    ) {
        if let Some(last) = self.cells.last_mut() {
            let cell: &mut dyn Cell = last.cell.as_mut();
            if let Some(c) = (cell as &mut dyn std::any::Any).downcast_mut::<C>() {
                field(c).push_str(&text);
                last.invalidate();
                return;
            }
        }
        self.push(new(text));
    }

    fn tool_by_id(&mut self, id: &str) -> Option<&mut ToolCell> {
        let i = *self.tools.get(id)?;
        self.tool_mut(i)
    }

    fn agent_event(&mut self, ev: AgentEvent) {
        match ev {
            AgentEvent::TextDelta { text } => self.append_or_push(
                text,
                |a: &mut AssistantCell| &mut a.text,
                |text| AssistantCell { text },
            ),
            AgentEvent::ThinkingDelta { text } => self.append_or_push(
                text,
                |t: &mut ThinkingCell| &mut t.text,
                |text| ThinkingCell { text },
            ),
            AgentEvent::Withdrawn { attempt, of } => {
                // The partial message is the text and thinking cells at the
                // end: tool cells of a response come only once it is whole.
                while self.cells.last().is_some_and(|c| {
                    let cell: &dyn Cell = c.cell.as_ref();
                    let any = cell as &dyn std::any::Any;
                    any.is::<AssistantCell>() || any.is::<ThinkingCell>()
                }) {
                    self.cells.pop();
                }
                self.notice(
                    &format!("connection lost, retrying ({attempt}/{of})"),
                    false,
                );
            }
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => self.notice(
                &format!(
                    "retrying (attempt {}) in {:.1}s: {reason}",
                    attempt + 1,
                    delay_ms as f64 / 1000.0
                ),
                false,
            ),
            AgentEvent::ToolCall {
                id,
                name,
                summary,
                preview,
                ..
            } => {
                self.push(ToolCell {
                    name,
                    summary,
                    preview,
                    state: ToolState::Running(Instant::now()),
                    output: String::new(),
                    diff: None,
                    expanded: false,
                });
                self.tools.insert(id, self.cells.len() - 1);
            }
            AgentEvent::ToolResult {
                id,
                content,
                is_error,
                diff,
                denied,
                notices,
                ..
            } => {
                for n in &notices {
                    self.notice(n, true);
                }
                if let Some(t) = self.tool_by_id(&id) {
                    t.state = if denied {
                        ToolState::Denied
                    } else if is_error {
                        ToolState::Failed
                    } else {
                        ToolState::Done
                    };
                    t.output = content;
                    t.diff = diff;
                }
            }
            AgentEvent::ToolProgress { id, text } => {
                if let Some(t) = self.tool_by_id(&id) {
                    if !t.output.is_empty() {
                        t.output.push('\n');
                    }
                    t.output.push_str(&text);
                }
            }
            AgentEvent::Usage { total, .. } => self.usage = total,
            AgentEvent::Context {
                tokens,
                window,
                known,
            } => self.status.context = Some((tokens, known.then_some(window))),
            AgentEvent::Compacted {
                before,
                after,
                truncated,
                reason,
            } => {
                if truncated {
                    self.notice(
                        &format!("Context full: the oldest turns were dropped (~{before} → ~{after} tokens); a summary could not be made: {reason}"),
                        true,
                    );
                } else {
                    self.notice(
                        &format!("Compacted the conversation (~{before} → ~{after} tokens): a summary replaces the older turns; the full history stays in the session log."),
                        false,
                    );
                }
            }
        }
    }
}
