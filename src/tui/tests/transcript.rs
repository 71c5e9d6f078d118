//! What the transcript and the status line show: every cell type, narrow
//! widths, scrolling while reading above, streamed, withdrawn and resumed
//! answers, task lists, sub-agents' progress, highlighted files.

use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::{app, ev, screen};
use crate::agent::AgentEvent;
use crate::llm::Usage;
use crate::tools::Preview;
use crate::tui::app::{App, Request, UiEvent};
use crate::tui::cells::Theme;

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

    let cell = crate::tui::cells::ToolCell {
        name: "todos".into(),
        summary: String::new(),
        state: crate::tui::cells::ToolState::Done,
        preview: Preview::Checklist,
        output: list.into(),
        diff: None,
        expanded: false,
    };
    use crate::tui::cells::Cell;
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
            Request::Compact(Some("the parser".into())),
        ),
        (
            "/undo",
            Request::Undo {
                redo: false,
                force: false,
            },
        ),
        (
            "/redo force",
            Request::Undo {
                redo: true,
                force: true,
            },
        ),
        ("/rewind 2 code", Request::Rewind(Some((2, "code".into())))),
        ("/rewind", Request::Rewind(None)),
        ("/resume abc", Request::Resume("abc".into())),
        ("/resume", Request::ListSessions),
        ("/status", Request::Status),
        ("/cost", Request::Cost),
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
    assert_eq!(a.commands, vec![Request::Send("second".into())]);
    let s = screen(&mut a, 80, 14, now);
    assert!(s.contains("› second") && !s.contains("(queued"), "{s}");
}

#[test]
fn a_viewed_file_is_highlighted_by_its_language() {
    use crate::tui::cells::{Cell, ToolCell, ToolState};
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
