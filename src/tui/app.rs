//! The TUI's state and how it changes: agent events into cells, keys into
//! edits, sends, scrolling and answers; drawing only what is visible.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::cells::{
    AssistantCell, Cached, Cell, NoticeCell, Theme, ThinkingCell, ToolCell, ToolState, UserCell,
};
use super::composer::Composer;
use super::dialog::{Dialog, Outcome};
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
    Confirm(String, Command),
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
pub enum Command {
    Send(String),
    Interrupt,
    Clear,
    SetYolo(bool),
    /// Switch the model of the current provider.
    SetModel(String),
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
    pub commands: Vec<Command>,
    pub quit: bool,
    picker: Option<Picker>,
    /// Sent on `y`: the answer to a [`UiEvent::Confirm`].
    confirm: Option<Command>,
    /// The person's own slash commands.
    pub custom: Vec<super::custom::Custom>,
}

/// The built-in commands, with what each does (the `/` popup).
const SLASH: &[(&str, &str)] = &[
    ("/help", "keys and commands"),
    ("/clear", "a new conversation"),
    ("/compact", "summarize to free context [focus]"),
    ("/cost", "tokens and cost by model"),
    ("/diff", "what this session changed"),
    ("/init", "write AGENTS.md for this project"),
    ("/model ", "switch the model: /model NAME"),
    ("/permissions", "rules in effect and this session's grants"),
    ("/quit", "leave"),
    ("/redo", "undo the last undo"),
    ("/resume", "an earlier session"),
    ("/rewind", "back to before a turn [N] [code|chat|both]"),
    ("/status", "session, model, context, sandbox, servers"),
    ("/undo", "restore the files of the last turn"),
    ("/yolo", "toggle asking before side effects"),
];

const HELP: &str = "Keys: Enter sends · Shift+Enter, Alt+Enter or Ctrl+J: new line · Up/Down: earlier prompts · Esc: interrupt the turn · Ctrl+C: clear, twice: quit · PgUp/PgDn, Home/End, mouse wheel: scroll · Ctrl+O: expand tool output\n\
Approvals: y once · a for this session · p always (saved to .agent/config.toml) · n deny, then type a reason (Enter sends, Esc none)\n\
Ctrl+G: edit the draft in $VISUAL/$EDITOR\n\
Commands: /help · /clear (new conversation) · /resume [ID] (an earlier session) · /compact [focus] (summarize to free context) · /undo [force], /redo (the files of the last turn) · /rewind [N] [code|chat|both] · /status · /cost · /diff (what this session changed) · /permissions (rules in effect) · /init (write AGENTS.md) · /yolo (toggle asking) · /model NAME · /quit";

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

    /// Sends a prompt now, or queues it behind the running turn.
    pub fn submit(&mut self, text: String) {
        if let Some(cmd) = text.trim().strip_prefix('/') {
            self.slash(cmd.trim());
            return;
        }
        if let Some(cmd) = text.trim().strip_prefix('!')
            && !cmd.trim().is_empty()
        {
            self.notice(&format!("$ {}", cmd.trim()), false);
            self.commands.push(Command::Shell(cmd.trim().to_string()));
            return;
        }
        self.send_prompt(text);
    }

    /// Sends text as a prompt as it is: what a command file expands to is
    /// never taken for a `/` command or a `!` command of the person's (a
    /// project's command file must not run programs).
    fn send_prompt(&mut self, text: String) {
        if self.working.is_some() {
            // Drawn below the transcript until it is sent, so the answer
            // streaming meanwhile is not split around it.
            self.queued.push_back(text);
            return;
        }
        self.push(UserCell {
            text: text.clone(),
            queued: false,
        });
        self.talked = true;
        self.working = Some(Instant::now());
        self.scroll = 0;
        self.commands.push(Command::Send(text));
    }

    fn slash(&mut self, cmd: &str) {
        match cmd.split_whitespace().next().unwrap_or_default() {
            "help" => {
                let mut help = HELP.to_string();
                if !self.custom.is_empty() {
                    help.push_str("\nYours: ");
                    let list: Vec<String> = self
                        .custom
                        .iter()
                        .map(|c| format!("/{} ({})", c.name, c.description))
                        .collect();
                    help.push_str(&list.join(" · "));
                }
                self.notice(&help, false)
            }
            "clear" => {
                self.cells.clear();
                self.tools.clear();
                self.commands.push(Command::Clear);
                self.notice("New conversation.", false);
            }
            "yolo" => {
                self.status.yolo = !self.status.yolo;
                self.commands.push(Command::SetYolo(self.status.yolo));
                if self.status.yolo {
                    self.notice("YOLO on: tool calls run without asking (deny rules and banned commands still apply; the sandbox stays on).", true);
                } else {
                    self.notice("YOLO off: side effects ask again.", false);
                }
            }
            "quit" | "exit" => self.quit = true,
            "compact" => {
                let focus = cmd.split_once(' ').map(|(_, f)| f.trim().to_string());
                if self.working.is_some() {
                    self.notice(
                        "/compact waits for the running turn; try again when it ends.",
                        true,
                    );
                } else {
                    self.working = Some(Instant::now());
                    self.commands
                        .push(Command::Compact(focus.filter(|f| !f.is_empty())));
                }
            }
            w @ ("undo" | "redo") => {
                let force = cmd.split_whitespace().nth(1) == Some("force");
                self.commands.push(Command::Undo {
                    redo: w == "redo",
                    force,
                });
            }
            "rewind" => {
                let mut words = cmd.split_whitespace().skip(1);
                match words.next().map(str::parse::<u32>) {
                    None => self.commands.push(Command::Rewind(None)),
                    Some(Ok(n)) => {
                        let what = words.next().unwrap_or("both").to_string();
                        if matches!(what.as_str(), "code" | "chat" | "both") {
                            self.commands.push(Command::Rewind(Some((n, what))));
                        } else {
                            self.notice("/rewind N code|chat|both", true);
                        }
                    }
                    Some(Err(_)) => self.notice(
                        "/rewind takes a turn number; /rewind alone lists them",
                        true,
                    ),
                }
            }
            "resume" => match cmd.split_whitespace().nth(1) {
                Some(id) => self.commands.push(Command::Resume(id.to_string())),
                None => self.commands.push(Command::ListSessions),
            },
            "status" => self.commands.push(Command::Status),
            "diff" => self.commands.push(Command::Diff),
            "permissions" => self.commands.push(Command::Permissions),
            "cost" => self.commands.push(Command::Cost),
            "init" => self.send_prompt(include_str!("../../templates/init.md").trim().to_string()),
            "model" => match cmd.split_whitespace().nth(1) {
                // Checked against the provider's list first; the status
                // line changes when the switch is made (`UiEvent::Model`).
                Some(name) => self.commands.push(Command::SetModel(name.to_string())),
                None => self.commands.push(Command::ListModels),
            },
            other => match self.custom.iter().find(|c| c.name == other).cloned() {
                Some(custom) => {
                    let args = cmd.split_once(char::is_whitespace).map_or("", |(_, a)| a);
                    self.send_prompt(custom.expand(args));
                }
                None => self.notice(&format!("unknown command /{other}; /help lists them"), true),
            },
        }
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
                    self.commands.push(Command::Send(next));
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

    /// Keys while the session list is open: typing filters, arrows move,
    /// Enter resumes, Esc closes.
    fn picker_key(&mut self, key: KeyEvent) {
        let Some(p) = &mut self.picker else { return };
        let count = p.shown().len();
        match key.code {
            KeyCode::Esc => self.picker = None,
            KeyCode::Up => p.selected = p.selected.saturating_sub(1),
            KeyCode::Down => p.selected = (p.selected + 1).min(count.saturating_sub(1)),
            KeyCode::Enter => {
                if let Some((id, _)) = p.shown().get(p.selected) {
                    let id = id.clone();
                    self.picker = None;
                    self.commands.push(Command::Resume(id));
                }
            }
            KeyCode::Backspace => {
                p.filter.pop();
                p.selected = 0;
            }
            KeyCode::Char(c) => {
                p.filter.push(c);
                p.selected = 0;
            }
            _ => {}
        }
    }

    fn draw_picker(&self, f: &mut Frame<'_>, area: Rect) {
        let Some(p) = &self.picker else { return };
        let shown = p.shown();
        let height = (shown.len() as u16 + 3).min(area.height);
        let rect = Rect {
            x: area.x,
            y: area.y + area.height - height,
            width: area.width,
            height,
        };
        let rows = height.saturating_sub(3) as usize;
        let first = p.selected.saturating_sub(rows.saturating_sub(1));
        let mut lines = vec![Line::from(format!("filter: {}", p.filter))];
        for (i, (_, label)) in shown.iter().enumerate().skip(first).take(rows) {
            let style = if i == p.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            lines.push(Line::from(Span::styled(label.clone(), style)));
        }
        f.render_widget(ratatui::widgets::Clear, rect);
        f.render_widget(
            Paragraph::new(lines).block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" resume a session — type to filter, Enter resumes, Esc closes "),
            ),
            rect,
        );
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

    pub fn on_event(&mut self, ev: Event, now: Instant) {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => self.on_key(k, now),
            Event::Paste(text) => {
                // One edit, never a send, whatever it contains.
                if let Some(d) = &mut self.dialog
                    && let Some(reason) = &mut d.reason
                {
                    reason.push_str(&text.replace('\n', " "));
                } else {
                    self.composer
                        .insert(&text.replace("\r\n", "\n").replace('\r', "\n"));
                }
                self.last_key = Some(now);
            }
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => self.scroll += 3,
                MouseEventKind::ScrollDown => self.scroll = self.scroll.saturating_sub(3),
                _ => {}
            },
            _ => {}
        }
    }

    fn on_key(&mut self, key: KeyEvent, now: Instant) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.code != KeyCode::Char('c') || !ctrl {
            self.ctrl_c = false;
        }
        if self.picker.is_some() && self.dialog.is_none() {
            self.picker_key(key);
            self.last_key = Some(now);
            return;
        }
        if self.dialog.is_none()
            && let Some(command) = self.confirm.take()
        {
            if key.code == KeyCode::Char('y') && key.modifiers.is_empty() {
                self.commands.push(command);
            } else {
                self.notice("Kept them; nothing was changed.", false);
            }
            self.last_key = Some(now);
            return;
        }
        if key.code == KeyCode::Esc && self.dialog.as_ref().is_none_or(|d| d.reason.is_none()) {
            if self.working.is_some() {
                self.commands.push(Command::Interrupt);
                self.notice("Interrupted.", false);
            }
            self.last_key = Some(now);
            return;
        }
        if let Some(d) = &mut self.dialog {
            if let Outcome::Closed = d.on_key(key, now) {
                self.dialog = None;
                self.next_dialog();
            }
            self.last_key = Some(now);
            return;
        }
        self.last_key = Some(now);
        match key.code {
            KeyCode::Char('c') if ctrl => {
                if self.ctrl_c {
                    self.quit = true;
                } else if self.composer.text.is_empty() {
                    self.ctrl_c = true;
                    self.notice("Press Ctrl+C again to quit.", false);
                } else {
                    self.composer.clear();
                    self.ctrl_c = true;
                }
            }
            KeyCode::Char('o') if ctrl => {
                let expand = !self.cells.iter().any(|c| {
                    let cell: &dyn Cell = c.cell.as_ref();
                    (cell as &dyn std::any::Any)
                        .downcast_ref::<ToolCell>()
                        .is_some_and(|t| t.expanded)
                });
                for i in 0..self.cells.len() {
                    if let Some(t) = self.tool_mut(i) {
                        t.expanded = expand;
                    }
                }
            }
            KeyCode::Char('j') if ctrl => self.composer.insert("\n"),
            KeyCode::Char('g') if ctrl => self.commands.push(Command::Editor),
            // The first command the `/` popup shows.
            KeyCode::Tab if self.composer.text.starts_with('/') => {
                if let Some((name, _)) = self.slash_matches().into_iter().next() {
                    self.composer.clear();
                    self.composer.insert(&name);
                }
            }
            KeyCode::Enter
                if key
                    .modifiers
                    .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT) =>
            {
                self.composer.insert("\n")
            }
            KeyCode::Enter => {
                let text = self.composer.take();
                if !text.trim().is_empty() {
                    self.submit(text);
                }
            }
            KeyCode::Char(c) => {
                let mut buf = [0u8; 4];
                self.composer.insert(c.encode_utf8(&mut buf));
            }
            KeyCode::Backspace => self.composer.backspace(),
            KeyCode::Delete => self.composer.delete(),
            KeyCode::Left => self.composer.left(),
            KeyCode::Right => self.composer.right(),
            KeyCode::Up if !self.composer.recall_older() => self.scroll += 1,
            KeyCode::Down if !self.composer.recall_newer() => {
                self.scroll = self.scroll.saturating_sub(1)
            }
            KeyCode::PageUp => self.scroll += 10,
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Home if self.composer.text.is_empty() => self.scroll = usize::MAX / 2,
            KeyCode::End if self.composer.text.is_empty() => self.scroll = 0,
            KeyCode::Home => self.composer.home(),
            KeyCode::End => self.composer.end(),
            _ => {}
        }
    }

    pub fn draw(&mut self, f: &mut Frame<'_>, now: Instant) {
        let area = f.area();
        let composer_height = (self.composer.lines().len() as u16).clamp(1, 8) + 2;
        let [transcript, input, status] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(composer_height),
            Constraint::Length(1),
        ])
        .areas(area);
        self.draw_transcript(f, transcript);
        let title = if self.working.is_some() {
            " working — Esc interrupts; messages you send now are queued "
        } else {
            " message — Enter sends, /help "
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(self.theme.fg(Color::DarkGray))
            .title(Span::styled(title, self.theme.fg(Color::DarkGray)));
        let (row, col) = self.composer.cursor_position();
        let visible_rows = composer_height.saturating_sub(2) as usize;
        let top = row.saturating_sub(visible_rows.saturating_sub(1));
        f.render_widget(
            Paragraph::new(self.composer.lines())
                .block(block)
                .scroll((top as u16, 0)),
            input,
        );
        if self.dialog.is_none() {
            f.set_cursor_position((input.x + 1 + col as u16, input.y + 1 + (row - top) as u16));
        }
        f.render_widget(Paragraph::new(self.status_line(now)), status);
        self.draw_picker(f, transcript);
        if self.dialog.is_none() && self.picker.is_none() {
            self.draw_slash_popup(f, transcript);
        }
        if let Some(d) = &self.dialog {
            d.draw(f, transcript, &self.theme, self.approvals.len(), now);
        }
    }

    /// The commands that start with what is typed (`/` and no space yet):
    /// built-in ones, then the person's own, with what each does.
    fn slash_matches(&self) -> Vec<(String, String)> {
        let typed = self.composer.text.as_str();
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Vec::new();
        }
        SLASH
            .iter()
            .map(|(n, d)| (n.to_string(), d.to_string()))
            .chain(
                self.custom
                    .iter()
                    .map(|c| (format!("/{} ", c.name), c.description.clone())),
            )
            .filter(|(n, _)| n.starts_with(typed))
            .collect()
    }

    /// The `/` popup above the composer: matching commands, filtered as
    /// one types; Tab takes the first.
    fn draw_slash_popup(&self, f: &mut Frame<'_>, area: Rect) {
        let matches = self.slash_matches();
        if matches.is_empty() || area.height < 4 {
            return;
        }
        let shown = matches.len().min(8).min(area.height as usize - 2);
        let width = area.width.min(72);
        let rect = Rect {
            x: area.x,
            y: area.y + area.height - (shown as u16 + 2),
            width,
            height: shown as u16 + 2,
        };
        let lines: Vec<Line<'static>> = matches
            .iter()
            .take(shown)
            .map(|(n, d)| {
                Line::from(vec![
                    Span::styled(
                        format!("{:<16}", n.trim_end()),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(d.clone(), self.theme.fg(Color::DarkGray)),
                ])
            })
            .collect();
        let more = matches.len() - shown;
        let title = if more > 0 {
            format!(" commands (Tab completes) · {more} more ")
        } else {
            " commands (Tab completes) ".to_string()
        };
        f.render_widget(ratatui::widgets::Clear, rect);
        f.render_widget(
            Paragraph::new(lines).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(self.theme.fg(Color::DarkGray))
                    .title(title),
            ),
            rect,
        );
    }

    /// The transcript as plain text at `width`, its last `max` lines: what
    /// is printed into the terminal's scrollback on exit.
    pub fn transcript_text(&self, width: u16, max: usize) -> Vec<String> {
        let plain = Theme { colors: false };
        let mut out: Vec<String> = Vec::new();
        for cell in &self.cells {
            for line in cell.cell.lines(width, &plain) {
                let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                out.push(text.trim_end().to_string());
            }
        }
        if out.len() > max {
            let cut = out.len() - max;
            out.drain(..cut);
            out.insert(0, format!("… {cut} earlier lines"));
        }
        out
    }

    /// Renders only the cells that are visible, from the bottom up.
    fn draw_transcript(&mut self, f: &mut Frame<'_>, area: Rect) {
        let width = area.width;
        let height = area.height as usize;
        if self.scroll > 0 {
            // Cached per cell, so this is a sum of lengths after the first time.
            let total: usize = self
                .cells
                .iter()
                .map(|c| c.lines(width, &self.theme).len())
                .sum();
            if self.last_total.0 == width && total > self.last_total.1 {
                self.scroll += total - self.last_total.1;
            }
            self.last_total = (width, total);
        } else {
            self.last_total = (0, 0);
        }
        let needed = height + self.scroll;
        let mut chunks: Vec<Vec<Line<'static>>> = Vec::new();
        let mut count = 0;
        // Messages waiting for the turn to end, below everything else.
        for text in self.queued.iter().rev() {
            let cell = UserCell {
                text: text.clone(),
                queued: true,
            };
            let lines = Cached::new(Box::new(cell))
                .lines(width, &self.theme)
                .clone();
            count += lines.len();
            chunks.push(lines);
        }
        for cell in self.cells.iter().rev() {
            let cl = cell.lines(width, &self.theme);
            count += cl.len();
            chunks.push(cl.clone());
            if count >= needed {
                break;
            }
        }
        let lines: Vec<Line<'static>> = chunks.into_iter().rev().flatten().collect();
        let max_scroll = lines.len().saturating_sub(height);
        self.scroll = self.scroll.min(max_scroll);
        let end = lines.len() - self.scroll;
        let start = end.saturating_sub(height);
        let visible: Vec<Line<'static>> = lines[start..end].to_vec();
        f.render_widget(Paragraph::new(visible), area);
    }

    fn status_line(&self, now: Instant) -> Line<'static> {
        let t = &self.theme;
        let k = |n: u64| {
            if n >= 10_000 {
                format!("{:.1}k", n as f64 / 1000.0)
            } else {
                n.to_string()
            }
        };
        // Most important first: a narrow terminal cuts the end.
        let mut spans = vec![Span::styled(
            format!(" {} · {} ", self.status.provider, self.status.model),
            Style::default().add_modifier(Modifier::BOLD),
        )];
        match self.working {
            Some(since) => spans.push(Span::styled(
                format!("working {}s ", now.duration_since(since).as_secs()),
                t.fg(Color::Blue),
            )),
            None => spans.push(Span::styled("ready ", t.fg(Color::Green))),
        }
        if !self.queued.is_empty() {
            spans.push(Span::raw(format!("({} queued) ", self.queued.len())));
        }
        if self.status.yolo {
            spans.push(Span::styled(
                " YOLO ",
                t.fg(Color::Red)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED),
            ));
            spans.push(Span::raw(" "));
        }
        let u = &self.usage;
        spans.push(Span::raw(format!(
            "↑{} ↓{} ",
            k(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens),
            k(u.output_tokens)
        )));
        if let Some(prices) = self.status.prices {
            spans.push(Span::raw(format!("${:.4} ", prices.cost(u))));
        }
        match self.status.context {
            Some((tokens, Some(window))) => {
                let pct = (tokens * 100 / window.max(1)).min(999);
                let color = if pct >= 80 {
                    Color::Yellow
                } else {
                    Color::DarkGray
                };
                spans.push(Span::styled(format!("context {pct}% "), t.fg(color)));
            }
            Some((tokens, None)) => spans.push(Span::styled(
                format!("context ~{} ", k(tokens)),
                t.fg(Color::DarkGray),
            )),
            None => {}
        }
        for (name, state) in &self.status.servers {
            let (mark, color) = if state == "running" {
                ("✓", Color::Green)
            } else if state.starts_with("failed") {
                ("✗", Color::Red)
            } else {
                ("…", Color::Yellow)
            };
            spans.push(Span::styled(format!("{name} {mark} "), t.fg(color)));
        }
        spans.push(Span::styled(
            format!("· sandbox: {} · {}", self.status.sandbox, self.status.cwd),
            t.fg(Color::DarkGray),
        ));
        if !self.status.session.is_empty() {
            let short: String = self.status.session.chars().take(8).collect();
            spans.push(Span::styled(
                format!(" · session {short}"),
                t.fg(Color::DarkGray),
            ));
        }
        Line::from(spans)
    }
}
