//! Snapshots of what the TUI draws (ratatui's TestBackend + insta): every
//! cell type, the approval dialog at each risk level, the status line, and
//! narrow widths. Plus the dialog's key rules.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio_util::sync::CancellationToken;

use super::app::{App, Command, Status, UiEvent};
use super::cells::Theme;
use super::dialog::GRACE;
use crate::agent::AgentEvent;
use crate::llm::Usage;
use crate::permission::{
    Answer, ApprovalRequest, Approver, CallFacts, Gate, GateConfig, Responder, Risk,
    RiskAssessment, RuleSet, Scope, Subjects,
};
use crate::tools::Preview;

fn app() -> App {
    App::new(
        Status {
            provider: "anthropic".into(),
            model: "claude-x".into(),
            prices: Some(crate::llm::Prices {
                input: 3.0,
                output: 15.0,
                cache_read: 0.3,
                cache_write: 3.75,
            }),
            context: None,
            session: String::new(),
            servers: Vec::new(),
            yolo: false,
            sandbox: "workspace-write".into(),
            cwd: "~/proj".into(),
        },
        Theme { colors: false },
    )
}

fn screen(app: &mut App, width: u16, height: u16, now: Instant) -> String {
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    t.draw(|f| app.draw(f, now)).unwrap();
    t.backend().to_string()
}

fn ev(app: &mut App, e: AgentEvent) {
    app.apply(UiEvent::Agent(e));
}

fn conversation() -> App {
    let mut a = app();
    a.submit("Fix the greeting and run the tests".into());
    a.commands.clear();
    ev(
        &mut a,
        AgentEvent::ThinkingDelta {
            text: "The greeting is in src/main.rs.".into(),
        },
    );
    ev(&mut a, AgentEvent::TextDelta { text: "I'll fix **the greeting** in `src/main.rs`:\n\n- edit the string\n- run the tests\n\n```rust\nfn main() {}\n```".into() });
    ev(
        &mut a,
        AgentEvent::ToolCall {
            id: "1".into(),
            name: "edit".into(),
            arguments: String::new(),
            summary: "src/main.rs".into(),
            preview: Preview::Head,
        },
    );
    ev(&mut a, AgentEvent::ToolResult {
        id: "1".into(),
        name: "edit".into(),
        content: "Edited `src/main.rs`".into(),
        is_error: false,
        diff: Some("--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    println!(\"helo\");\n+    println!(\"hello\");\n }\n".into()),
        denied: false,
        notices: Vec::new(),
    });
    ev(
        &mut a,
        AgentEvent::ToolCall {
            id: "2".into(),
            name: "bash".into(),
            arguments: String::new(),
            summary: "cargo test".into(),
            preview: Preview::Tail,
        },
    );
    ev(
        &mut a,
        AgentEvent::ToolResult {
            id: "2".into(),
            name: "bash".into(),
            content: (1..=8)
                .map(|i| format!("test t{i} ... ok\n"))
                .collect::<String>()
                + "[exit code 0]",
            is_error: false,
            diff: None,
            denied: false,
            notices: Vec::new(),
        },
    );
    ev(
        &mut a,
        AgentEvent::ToolCall {
            id: "3".into(),
            name: "bash".into(),
            arguments: String::new(),
            summary: "git push --force".into(),
            preview: Preview::Tail,
        },
    );
    ev(
        &mut a,
        AgentEvent::ToolResult {
            id: "3".into(),
            name: "bash".into(),
            content: "The person denied this `bash` call.".into(),
            is_error: true,
            diff: None,
            denied: true,
            notices: Vec::new(),
        },
    );
    ev(
        &mut a,
        AgentEvent::ToolCall {
            id: "4".into(),
            name: "view".into(),
            arguments: String::new(),
            summary: "missing.rs".into(),
            preview: Preview::Head,
        },
    );
    ev(
        &mut a,
        AgentEvent::ToolResult {
            id: "4".into(),
            name: "view".into(),
            content: "file not found: `missing.rs`".into(),
            is_error: true,
            diff: None,
            denied: false,
            notices: Vec::new(),
        },
    );
    ev(
        &mut a,
        AgentEvent::Usage {
            step: Usage::default(),
            total: Usage {
                input_tokens: 12_345,
                output_tokens: 678,
                ..Usage::default()
            },
        },
    );
    a.apply(UiEvent::TurnDone(Err("authentication failed (HTTP 401) at anthropic: check that ANTHROPIC_API_KEY holds a valid API key".into())));
    a
}

#[test]
fn transcript_of_every_cell_type() {
    let mut a = conversation();
    insta::assert_snapshot!("transcript_80", screen(&mut a, 80, 44, Instant::now()));
}

#[test]
fn transcript_at_40_columns() {
    let mut a = conversation();
    insta::assert_snapshot!("transcript_40", screen(&mut a, 40, 40, Instant::now()));
}

#[test]
fn status_line_with_yolo_and_queue() {
    let mut a = app();
    a.status.yolo = true;
    a.apply(UiEvent::Servers(vec![
        ("pyright".into(), "running".into()),
        ("fake".into(), "failed: it exited 3 times".into()),
    ]));
    a.submit("first".into());
    a.submit("second, while working".into());
    let s = screen(&mut a, 100, 8, Instant::now());
    insta::assert_snapshot!("status_yolo", s);
}

#[derive(Default, Clone)]
struct Capture(Arc<Mutex<Vec<(ApprovalRequest, Responder)>>>);

impl Approver for Capture {
    fn request(&self, r: ApprovalRequest, resp: Responder) {
        self.0.lock().unwrap().push((r, resp));
    }
}

/// A real request from a real gate, for the dialog.
async fn request(
    risk: Risk,
    diff: Option<&str>,
) -> (
    ApprovalRequest,
    Responder,
    tokio::task::JoinHandle<Result<(), crate::permission::Denial>>,
) {
    let cap = Capture::default();
    let gate = Arc::new(Gate::new(
        GateConfig {
            rules: RuleSet::default(),
            yolo: false,
            workspace: "/w".into(),
            always_file: "/w/.agent/config.toml".into(),
        },
        Arc::new(cap.clone()),
    ));
    let (tool, description, scope) = match diff {
        Some(_) => (
            "edit",
            "edit src/main.rs: replaced 1 occurrence (+1 −1 lines)".to_string(),
            Scope::Files {
                paths: vec!["/w/src/main.rs".into()],
            },
        ),
        None => (
            "bash",
            "run `git commit -m wip`".to_string(),
            Scope::Commands {
                prefixes: vec!["git commit".into()],
                files: Vec::new(),
                exact: true,
            },
        ),
    };
    let facts = CallFacts {
        tool: tool.into(),
        description,
        risk: RiskAssessment::new(
            risk,
            match risk {
                Risk::Low => "runs `git commit`, which is not known to only read",
                Risk::Medium => "changes an existing file",
                Risk::High => "force-push: rewrites remote history",
            },
        ),
        scope,
        needs_approval: true,
        subjects: Subjects::default(),
        banned: None,
        protected: None,
        outside_sandbox: None,
        diff: diff.map(str::to_string),
    };
    let g = Arc::clone(&gate);
    let task = tokio::spawn(async move {
        g.check(
            &facts,
            "c1",
            crate::permission::HookWord::Silent,
            &CancellationToken::new(),
        )
        .await
    });
    for _ in 0..200 {
        if let Some((r, resp)) = cap.0.lock().unwrap().pop() {
            return (r, resp, task);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("no request");
}

const DIFF: &str = "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    println!(\"helo\");\n+    println!(\"hello\");\n }\n";

#[tokio::test]
async fn dialog_at_each_risk_level() {
    for (risk, diff, name) in [
        (Risk::Low, None, "dialog_low"),
        (Risk::Medium, Some(DIFF), "dialog_medium"),
        (Risk::High, None, "dialog_high"),
    ] {
        let (r, resp, _task) = request(risk, diff).await;
        let mut a = app();
        a.apply(UiEvent::Approval(r, resp));
        let armed = Instant::now() + GRACE * 2;
        insta::assert_snapshot!(name, screen(&mut a, 90, 24, armed));
    }
}

#[tokio::test]
async fn a_small_terminal_never_hides_the_dialogs_keys() {
    let long_diff: String = std::iter::once("@@ -1,30 +1,30 @@\n".to_string())
        .chain((0..30).map(|i| format!("+line {i}\n")))
        .collect();
    for (w, h) in [(60, 20), (40, 20), (40, 12)] {
        let (r, resp, _task) = request(Risk::Medium, Some(&long_diff)).await;
        let mut a = app();
        a.apply(UiEvent::Approval(r, resp));
        let armed = Instant::now() + GRACE * 2;
        let shown = screen(&mut a, w, h, armed);
        let flat = shown.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("[y] allow once"), "{w}x{h}:\n{shown}");
        assert!(flat.contains("[n] deny"), "{w}x{h}:\n{shown}");
        assert!(shown.contains("Allow edit?"), "{w}x{h}:\n{shown}");
        assert!(flat.contains("edit src/main.rs"), "{w}x{h}:\n{shown}");
        if h >= 20 {
            assert!(
                flat.contains("more lines"),
                "{w}x{h}: the cut is not said:\n{shown}"
            );
        }
    }
}

fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

#[tokio::test]
async fn keys_in_the_grace_period_or_a_typing_burst_approve_nothing() {
    let (r, resp, task) = request(Risk::Low, None).await;
    let mut a = app();
    let start = Instant::now();
    a.apply(UiEvent::Approval(r, resp));
    // Typed at the moment the dialog opened: ignored.
    a.on_event(key('y'), start);
    // A burst that keeps going past the grace period: still ignored.
    let mut t = start;
    for _ in 0..10 {
        t += Duration::from_millis(100);
        a.on_event(key('y'), t);
    }
    assert!(a.dialog_open(), "a burst approved something");
    assert!(!task.is_finished());
    // A deliberate key after a pause answers.
    a.on_event(key('y'), t + Duration::from_millis(400));
    assert!(!a.dialog_open());
    assert_eq!(task.await.unwrap(), Ok(()));
}

#[tokio::test]
async fn high_risk_offers_no_session_answer_and_n_takes_a_reason() {
    let (r, resp, task) = request(Risk::High, None).await;
    let mut a = app();
    let t = Instant::now() + GRACE * 2;
    a.apply(UiEvent::Approval(r, resp));
    a.on_event(key('a'), t);
    assert!(a.dialog_open(), "`a` is not offered for HIGH");
    let t = t + Duration::from_millis(500);
    a.on_event(key('n'), t);
    for c in "not today".chars() {
        a.on_event(key(c), t);
    }
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        t,
    );
    let denial = task.await.unwrap().unwrap_err();
    assert!(
        denial.0.contains("Their reason: \"not today\""),
        "{}",
        denial.0
    );
}

#[test]
fn composer_keys_paste_queue_and_quit() {
    let mut a = app();
    let now = Instant::now();
    a.on_event(Event::Paste("line one\nline two\n".into()), now);
    assert_eq!(
        a.composer.text, "line one\nline two\n",
        "a paste is one edit and never sends"
    );
    assert!(a.commands.is_empty());
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT)),
        now,
    );
    a.on_event(key('x'), now);
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        now,
    );
    assert_eq!(
        a.commands,
        vec![Command::Send("line one\nline two\n\nx".into())]
    );
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
        now,
    );
    assert_eq!(a.commands.last(), Some(&Command::Interrupt));
    let ctrl_c = Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    a.on_event(ctrl_c.clone(), now);
    assert!(!a.quit);
    a.on_event(ctrl_c, now);
    assert!(a.quit);
    let _ = Answer::AllowOnce;
}

#[test]
fn reading_above_is_not_yanked_down_by_new_output() {
    let mut a = app();
    for i in 0..60 {
        a.notice(&format!("line {i}"), false);
    }
    let now = Instant::now();
    screen(&mut a, 60, 20, now);
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE)),
        now,
    );
    let before = screen(&mut a, 60, 20, now);
    for i in 60..70 {
        a.notice(&format!("line {i}"), false);
    }
    let after = screen(&mut a, 60, 20, now);
    assert_eq!(before, after, "the view moved while scrolled up");
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE)),
        now,
    );
    assert!(
        screen(&mut a, 60, 20, now).contains("line 69"),
        "End follows the bottom again"
    );
}

#[test]
fn reading_above_holds_still_while_an_answer_streams() {
    let mut a = app();
    for i in 0..60 {
        a.notice(&format!("line {i}"), false);
    }
    a.submit("explain".into());
    ev(
        &mut a,
        AgentEvent::TextDelta {
            text: "first words".into(),
        },
    );
    let now = Instant::now();
    screen(&mut a, 60, 20, now);
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE)),
        now,
    );
    let before = screen(&mut a, 60, 20, now);
    for i in 0..40 {
        ev(
            &mut a,
            AgentEvent::TextDelta {
                text: format!(" more {i}\n\nnext paragraph {i}"),
            },
        );
        let during = screen(&mut a, 60, 20, now);
        // Only the working line at the bottom may change.
        let top = |s: &str| s.lines().take(14).collect::<Vec<_>>().join("\n");
        assert_eq!(top(&before), top(&during), "the view moved at delta {i}");
    }
}

#[test]
fn a_command_file_is_only_ever_a_prompt() {
    // A project's command file that reads like a `!` command of the
    // person's, or a `/` command, is sent as text: it runs nothing.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("evil.md"), "!touch pwned\n").unwrap();
    std::fs::write(dir.path().join("loop.md"), "/yolo\n").unwrap();
    let mut a = app();
    a.custom = super::custom::load(&[dir.path().to_path_buf()]);
    a.submit("/evil".into());
    assert_eq!(a.commands, vec![Command::Send("!touch pwned".into())]);
    a.commands.clear();
    a.apply(UiEvent::TurnDone(Ok(())));
    a.submit("/loop".into());
    assert_eq!(a.commands, vec![Command::Send("/yolo".into())]);
}

#[test]
fn the_slash_popup_lists_commands_as_one_types() {
    let mut a = app();
    let now = Instant::now();
    a.on_event(key('/'), now);
    let all = screen(&mut a, 90, 20, now);
    assert!(all.contains("commands (Tab completes)"), "{all}");
    assert!(
        all.contains("/clear") && all.contains("a new conversation"),
        "{all}"
    );
    a.on_event(key('r'), now);
    a.on_event(key('e'), now);
    let some = screen(&mut a, 90, 20, now);
    for c in ["/redo", "/resume", "/rewind"] {
        assert!(some.contains(c), "{c} missing:\n{some}");
    }
    assert!(!some.contains("/clear"), "{some}");
    a.on_event(key('w'), now);
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)),
        now,
    );
    assert_eq!(a.composer.text, "/rewind");
    a.on_event(key(' '), now);
    assert!(
        !screen(&mut a, 90, 20, now).contains("commands (Tab"),
        "the popup stays after a space"
    );
}

#[test]
fn slash_commands_complete_with_tab() {
    let mut a = app();
    let now = Instant::now();
    for c in "/yo".chars() {
        a.on_event(key(c), now);
    }
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)),
        now,
    );
    assert_eq!(a.composer.text, "/yolo");
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        now,
    );
    assert_eq!(a.commands, vec![Command::SetYolo(true)]);
    assert!(
        screen(&mut a, 100, 10, now).contains(" YOLO "),
        "the status line marks YOLO"
    );
}

#[test]
fn a_task_list_is_shown_whole() {
    let mut a = app();
    ev(
        &mut a,
        AgentEvent::ToolCall {
            id: "t".into(),
            name: "todos".into(),
            arguments: String::new(),
            summary: String::new(),
            preview: Preview::Checklist,
        },
    );
    let list = "Tasks (2 of 7 done):\n  [x] one\n  [x] two\n  [>] three\n  [ ] four\n  [ ] five\n  [ ] six\n  [ ] seven";
    ev(
        &mut a,
        AgentEvent::ToolResult {
            id: "t".into(),
            name: "todos".into(),
            content: list.into(),
            is_error: false,
            diff: None,
            denied: false,
            notices: Vec::new(),
        },
    );
    let s = screen(&mut a, 60, 20, Instant::now());
    for line in list.lines() {
        assert!(s.contains(line), "missing {line:?} in\n{s}");
    }
    assert!(!s.contains("more lines"), "{s}");

    let cell = super::cells::ToolCell {
        name: "todos".into(),
        summary: String::new(),
        state: super::cells::ToolState::Done,
        preview: Preview::Checklist,
        output: list.into(),
        diff: None,
        expanded: false,
    };
    use super::cells::Cell;
    use ratatui::style::Modifier;
    let lines = cell.lines(60, &Theme { colors: true });
    let style_of = |text: &str| {
        let line = lines
            .iter()
            .find(|l| l.to_string().contains(text))
            .unwrap_or_else(|| panic!("no line with {text:?}"));
        line.spans.last().unwrap().style
    };
    assert!(
        style_of("[x] one")
            .add_modifier
            .contains(Modifier::CROSSED_OUT)
    );
    assert!(style_of("[>] three").add_modifier.contains(Modifier::BOLD));
    assert!(
        !style_of("[ ] four")
            .add_modifier
            .contains(Modifier::CROSSED_OUT)
    );
}

#[test]
fn sub_agent_progress_shows_its_latest_steps_then_the_report() {
    let mut a = app();
    ev(
        &mut a,
        AgentEvent::ToolCall {
            id: "s".into(),
            name: "agent".into(),
            arguments: "{}".into(),
            summary: "find the loader".into(),
            preview: Preview::Head,
        },
    );
    for i in 1..=7 {
        ev(
            &mut a,
            AgentEvent::ToolProgress {
                id: "s".into(),
                text: format!("grep step{i}"),
            },
        );
    }
    let s = screen(&mut a, 60, 20, Instant::now());
    assert!(s.contains("agent find the loader  (running"), "{s}");
    for i in 3..=7 {
        assert!(
            s.contains(&format!("grep step{i}")),
            "missing step {i} in\n{s}"
        );
    }
    let shown = |step: &str| {
        s.lines()
            .any(|l| l.trim_end_matches('"').trim_end().ends_with(step))
    };
    assert!(!shown("grep step1") && !shown("grep step2"), "{s}");
    assert!(shown("grep step3"), "{s}");
    ev(
        &mut a,
        AgentEvent::ToolResult {
            id: "s".into(),
            name: "agent".into(),
            content: "The loader is src/config.rs:1.".into(),
            is_error: false,
            diff: None,
            denied: false,
            notices: Vec::new(),
        },
    );
    let s = screen(&mut a, 60, 20, Instant::now());
    assert!(s.contains("The loader is src/config.rs:1."), "{s}");
    assert!(
        !s.contains("grep step"),
        "progress replaced by the report:\n{s}"
    );
}

fn code(c: KeyCode) -> Event {
    Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

#[test]
fn the_session_picker_filters_as_you_type_and_resumes_the_choice() {
    let mut a = app();
    let now = Instant::now();
    a.apply(UiEvent::Picker(vec![
        (
            "aaa1".into(),
            "11-30 09:00    2 turns  fix the build  aaa1".into(),
        ),
        (
            "bbb2".into(),
            "11-29 18:00    5 turns  write the parser  bbb2".into(),
        ),
        (
            "ccc3".into(),
            "11-28 10:00    1 turns  parser tests  ccc3".into(),
        ),
    ]));
    let shown = screen(&mut a, 80, 12, now);
    assert!(shown.contains("resume a session"), "{shown}");
    assert!(shown.contains("fix the build") && shown.contains("parser tests"));
    for c in "parser".chars() {
        a.on_event(key(c), now);
    }
    let shown = screen(&mut a, 80, 12, now);
    assert!(!shown.contains("fix the build"), "filtered out: {shown}");
    assert!(shown.contains("write the parser") && shown.contains("parser tests"));
    assert_eq!(a.composer.text, "", "typing goes to the filter");
    a.on_event(code(KeyCode::Down), now);
    a.on_event(code(KeyCode::Enter), now);
    assert_eq!(a.commands, vec![Command::Resume("ccc3".into())]);
    assert!(!screen(&mut a, 80, 12, now).contains("resume a session"));
    // Esc closes it without a choice (and interrupts nothing).
    a.commands.clear();
    a.apply(UiEvent::Picker(vec![("x".into(), "x".into())]));
    a.on_event(code(KeyCode::Esc), now);
    assert!(a.commands.is_empty());
    assert!(!screen(&mut a, 80, 12, now).contains("resume a session"));
}

#[test]
fn a_resumed_transcript_is_drawn_as_cells_and_slash_commands_reach_the_agent() {
    let mut a = app();
    let now = Instant::now();
    a.apply(UiEvent::User("earlier prompt".into()));
    ev(
        &mut a,
        AgentEvent::ToolCall {
            id: "1".into(),
            name: "edit".into(),
            arguments: String::new(),
            summary: "src/lib.rs".into(),
            preview: Preview::Head,
        },
    );
    ev(
        &mut a,
        AgentEvent::ToolResult {
            id: "1".into(),
            name: "edit".into(),
            content: "Edited `src/lib.rs`".into(),
            is_error: false,
            diff: Some("--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-old\n+new\n".into()),
            denied: false,
            notices: Vec::new(),
        },
    );
    ev(
        &mut a,
        AgentEvent::TextDelta {
            text: "earlier answer".into(),
        },
    );
    ev(
        &mut a,
        AgentEvent::Compacted {
            before: 90000,
            after: 12000,
            truncated: false,
            reason: String::new(),
        },
    );
    ev(
        &mut a,
        AgentEvent::Context {
            tokens: 12000,
            window: 16000,
            known: true,
        },
    );
    let shown = screen(&mut a, 100, 20, now);
    for s in [
        "earlier prompt",
        "src/lib.rs",
        "+new",
        "earlier answer",
        "Compacted the conversation",
        "context 75%",
    ] {
        assert!(shown.contains(s), "{s} missing:\n{shown}");
    }
    assert!(a.commands.is_empty(), "a replayed prompt is not sent again");
    for (typed, expected) in [
        (
            "/compact the parser",
            Command::Compact(Some("the parser".into())),
        ),
        (
            "/undo",
            Command::Undo {
                redo: false,
                force: false,
            },
        ),
        (
            "/redo force",
            Command::Undo {
                redo: true,
                force: true,
            },
        ),
        ("/rewind 2 code", Command::Rewind(Some((2, "code".into())))),
        ("/rewind", Command::Rewind(None)),
        ("/resume abc", Command::Resume("abc".into())),
        ("/resume", Command::ListSessions),
        ("/status", Command::Status),
        ("/cost", Command::Cost),
    ] {
        a.commands.clear();
        a.apply(UiEvent::TurnDone(Ok(())));
        a.submit(typed.into());
        assert_eq!(a.commands, vec![expected], "{typed}");
    }
}

#[test]
fn a_withdrawn_partial_answer_is_replaced_by_the_retry() {
    let mut a = app();
    a.submit("hi".into());
    ev(
        &mut a,
        AgentEvent::ThinkingDelta {
            text: "plan".into(),
        },
    );
    ev(
        &mut a,
        AgentEvent::TextDelta {
            text: "half an ans".into(),
        },
    );
    ev(&mut a, AgentEvent::Withdrawn { attempt: 2, of: 5 });
    ev(
        &mut a,
        AgentEvent::TextDelta {
            text: "the whole answer".into(),
        },
    );
    let s = screen(&mut a, 60, 20, Instant::now());
    assert!(s.contains("connection lost, retrying (2/5)"), "{s}");
    assert!(s.contains("the whole answer"), "{s}");
    assert!(!s.contains("half an ans") && !s.contains("plan"), "{s}");
    assert!(s.contains("hi"), "the prompt stays:\n{s}");
}

#[test]
fn an_undo_over_changed_files_waits_for_y() {
    let mut a = app();
    let now = Instant::now();
    let force = Command::Undo {
        redo: false,
        force: true,
    };
    a.apply(UiEvent::Confirm(
        "Nothing was changed: 1 file(s) changed since".into(),
        force.clone(),
    ));
    assert!(screen(&mut a, 100, 12, now).contains("Press y to overwrite them"));
    a.on_event(key('n'), now);
    assert!(a.commands.is_empty(), "any other key keeps the files");
    assert_eq!(a.composer.text, "", "the key answered, it was not typed");
    a.apply(UiEvent::Confirm("again".into(), force.clone()));
    a.on_event(key('y'), now);
    assert_eq!(a.commands, vec![force]);
    a.apply(UiEvent::Session("3f2a1b2c-9999".into()));
    assert!(screen(&mut a, 160, 12, now).contains("session 3f2a1b2c"));
}

#[test]
fn tabs_are_drawn_as_spaces_to_the_next_stop() {
    let mut a = app();
    ev(
        &mut a,
        AgentEvent::ToolCall {
            id: "v".into(),
            name: "view".into(),
            arguments: String::new(),
            summary: "a.py".into(),
            preview: Preview::Head,
        },
    );
    ev(
        &mut a,
        AgentEvent::ToolResult {
            id: "v".into(),
            name: "view".into(),
            content: "     1\tdef add(a, b):\n     2\t\treturn a\tb\n".into(),
            is_error: false,
            diff: None,
            denied: false,
            notices: Vec::new(),
        },
    );
    let s = screen(&mut a, 80, 12, Instant::now());
    assert!(s.contains("1  def add(a, b):"), "{s}");
    assert!(s.contains("2      return a    b"), "{s}");
}

#[test]
fn a_message_queued_during_an_answer_waits_below_it_and_loses_its_label_when_sent() {
    let mut a = app();
    let now = Instant::now();
    a.submit("first".into());
    ev(
        &mut a,
        AgentEvent::TextDelta {
            text: "The answer begins".into(),
        },
    );
    a.submit("second".into());
    ev(
        &mut a,
        AgentEvent::TextDelta {
            text: " and ends here.".into(),
        },
    );
    let s = screen(&mut a, 80, 14, now);
    assert!(
        s.contains("The answer begins and ends here."),
        "one answer:\n{s}"
    );
    let answer = s.find("ends here").unwrap();
    let queued = s.find("› second").unwrap();
    assert!(queued > answer, "the queued message waits below:\n{s}");
    assert!(s.contains("(queued: sent when the current turn ends)"));
    a.commands.clear();
    a.apply(UiEvent::TurnDone(Ok(())));
    assert_eq!(a.commands, vec![Command::Send("second".into())]);
    let s = screen(&mut a, 80, 14, now);
    assert!(s.contains("› second") && !s.contains("(queued"), "{s}");
}

#[test]
fn a_viewed_file_is_highlighted_by_its_language() {
    use super::cells::{Cell, ToolCell, ToolState};
    let cell = ToolCell {
        name: "view".into(),
        summary: "src/main.rs".into(),
        preview: Preview::Numbered,
        state: ToolState::Done,
        output: "     1\tfn main() {\n     2\t    let s = \"hi\";\n     3\t}\n".into(),
        diff: None,
        expanded: true,
    };
    let lines = cell.lines(80, &Theme { colors: true });
    let span = |text: &str| {
        lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .find(|s| s.content.contains(text))
            .map(|s| s.style.fg)
            .unwrap_or_else(|| panic!("`{text}` not drawn: {lines:?}"))
    };
    assert_eq!(span("fn"), Some(ratatui::style::Color::Blue));
    assert_eq!(span("hi"), Some(ratatui::style::Color::Green));
    let text: String = lines[2].spans.iter().map(|s| s.content.as_ref()).collect();
    assert!(
        text.contains("2") && text.contains("let s = \"hi\";"),
        "{text}"
    );
    // Without colours, or a language nobody knows, it is plain.
    let plain = cell.lines(80, &Theme { colors: false });
    assert!(plain.iter().all(|l| {
        l.spans
            .iter()
            .all(|s| s.style.fg != Some(ratatui::style::Color::Blue))
    }));
}
