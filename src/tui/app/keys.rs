//! Input: keys, pastes and the mouse wheel become edits, sends, scrolling,
//! answers and picks; what is typed is sent as a prompt, a `/` command or
//! a `!` command.

use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

use super::{App, Request};
use crate::tui::cells::{Cell, ToolCell, UserCell};
use crate::tui::dialog::Outcome;

/// Reasoning efforts `/model` takes (the Responses API's `reasoning.effort`).
const EFFORTS: [&str; 4] = ["minimal", "low", "medium", "high"];

/// The built-in commands, with what each does (the `/` popup).
const SLASH: &[(&str, &str)] = &[
    ("/help", "keys and commands"),
    ("/clear", "a new conversation"),
    ("/compact", "summarize to free context [focus]"),
    ("/cost", "tokens and cost by model"),
    ("/diff", "what this session changed"),
    ("/init", "write AGENTS.md for this project"),
    ("/model ", "switch the model: /model NAME [low|medium|high]"),
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
            self.commands.push(Request::Shell(cmd.trim().to_string()));
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
        self.commands.push(Request::Send(text));
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
                self.commands.push(Request::Clear);
                self.notice("New conversation.", false);
            }
            "yolo" => {
                self.status.yolo = !self.status.yolo;
                self.commands.push(Request::SetYolo(self.status.yolo));
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
                        .push(Request::Compact(focus.filter(|f| !f.is_empty())));
                }
            }
            w @ ("undo" | "redo") => {
                let force = cmd.split_whitespace().nth(1) == Some("force");
                self.commands.push(Request::Undo {
                    redo: w == "redo",
                    force,
                });
            }
            "rewind" => {
                let mut words = cmd.split_whitespace().skip(1);
                match words.next().map(str::parse::<u32>) {
                    None => self.commands.push(Request::Rewind(None)),
                    Some(Ok(n)) => {
                        let what = words.next().unwrap_or("both").to_string();
                        if matches!(what.as_str(), "code" | "chat" | "both") {
                            self.commands.push(Request::Rewind(Some((n, what))));
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
                Some(id) => self.commands.push(Request::Resume(id.to_string())),
                None => self.commands.push(Request::ListSessions),
            },
            "status" => self.commands.push(Request::Status),
            "diff" => self.commands.push(Request::Diff),
            "permissions" => self.commands.push(Request::Permissions),
            "cost" => self.commands.push(Request::Cost),
            "init" => self.send_prompt(
                include_str!("../../../templates/init.md")
                    .trim()
                    .to_string(),
            ),
            // Checked against the provider's list first; the status line
            // changes when the switch is made (`UiEvent::Model`).
            "model" => {
                let words: Vec<&str> = cmd.split_whitespace().skip(1).collect();
                let effort = |w: &str| EFFORTS.contains(&w).then(|| w.to_string());
                match words.as_slice() {
                    [] => self.commands.push(Request::ListModels),
                    // `/model high`: this model, another effort.
                    [one] if effort(one).is_some() => self
                        .commands
                        .push(Request::SetModel(self.status.model.clone(), effort(one))),
                    [name] => self
                        .commands
                        .push(Request::SetModel(name.to_string(), None)),
                    [name, level] if effort(level).is_some() => self
                        .commands
                        .push(Request::SetModel(name.to_string(), effort(level))),
                    _ => self.notice(
                        &format!("Usage: /model [NAME] [{}]", EFFORTS.join("|")),
                        true,
                    ),
                }
            }
            other => match self.custom.iter().find(|c| c.name == other).cloned() {
                Some(custom) => {
                    let args = cmd.split_once(char::is_whitespace).map_or("", |(_, a)| a);
                    self.send_prompt(custom.expand(args));
                }
                None => self.notice(&format!("unknown command /{other}; /help lists them"), true),
            },
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
                    self.commands.push(Request::Resume(id));
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
        self.refresh_mentions();
    }

    /// Matches the `@word` the cursor ends against the project's files.
    pub(super) fn refresh_mentions(&mut self) {
        self.mention_matches =
            match super::super::mention::query(&self.composer.text, self.composer.cursor) {
                Some((_, q)) if self.dialog.is_none() && self.picker.is_none() => {
                    self.mentions.matches(q)
                }
                _ => Vec::new(),
            };
    }

    /// The files the `@` popup shows, best first.
    pub(super) fn mention_matches(&self) -> &[String] {
        &self.mention_matches
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
                self.commands.push(Request::Interrupt);
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
            KeyCode::Char('g') if ctrl => self.commands.push(Request::Editor),
            // The first file the `@` popup shows replaces the `@word`.
            KeyCode::Tab if !self.mention_matches.is_empty() => {
                if let Some((at, _)) =
                    super::super::mention::query(&self.composer.text, self.composer.cursor)
                {
                    let path = format!("@{}", self.mention_matches[0]);
                    self.composer.replace_word(at, &path);
                }
            }
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

    /// The commands that start with what is typed (`/` and no space yet):
    /// built-in ones, then the person's own, with what each does.
    pub(super) fn slash_matches(&self) -> Vec<(String, String)> {
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
}
