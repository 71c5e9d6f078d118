//! Keys and typed commands: the composer (paste, new lines, send, interrupt,
//! quit), `/` commands and their popup, command files, the session picker
//! and the `y` that confirms an undo.

use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::{app, code, key, screen};
use crate::permission::Answer;
use crate::tui::app::{Request, UiEvent};

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
        vec![Request::Send("line one\nline two\n\nx".into())]
    );
    a.on_event(
        Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
        now,
    );
    assert_eq!(a.commands.last(), Some(&Request::Interrupt));
    let ctrl_c = Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    a.on_event(ctrl_c.clone(), now);
    assert!(!a.quit);
    a.on_event(ctrl_c, now);
    assert!(a.quit);
    let _ = Answer::AllowOnce;
}

#[test]
fn a_command_file_is_only_ever_a_prompt() {
    // A project's command file that reads like a `!` command of the
    // person's, or a `/` command, is sent as text: it runs nothing.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("evil.md"), "!touch pwned\n").unwrap();
    std::fs::write(dir.path().join("loop.md"), "/yolo\n").unwrap();
    let mut a = app();
    a.custom = crate::tui::custom::load(&[dir.path().to_path_buf()]);
    a.submit("/evil".into());
    assert_eq!(a.commands, vec![Request::Send("!touch pwned".into())]);
    a.commands.clear();
    a.apply(UiEvent::TurnDone(Ok(())));
    a.submit("/loop".into());
    assert_eq!(a.commands, vec![Request::Send("/yolo".into())]);
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
fn at_opens_a_fuzzy_file_picker_and_tab_inserts_the_path() {
    let mut a = app();
    let now = Instant::now();
    a.apply(UiEvent::Files(vec![
        "README.md".into(),
        "src/main.rs".into(),
        "src/tui/mod.rs".into(),
        "src/tui/app/keys.rs".into(),
    ]));
    for c in "look at @".chars() {
        a.on_event(key(c), now);
    }
    let all = screen(&mut a, 90, 20, now);
    assert!(all.contains("files (Tab inserts)"), "{all}");
    assert!(
        all.contains("README.md") && all.contains("src/main.rs"),
        "{all}"
    );
    for c in "tuimod".chars() {
        a.on_event(key(c), now);
    }
    let some = screen(&mut a, 90, 20, now);
    assert!(some.contains("src/tui/mod.rs"), "{some}");
    assert!(!some.contains("README.md"), "{some}");
    a.on_event(code(KeyCode::Tab), now);
    assert_eq!(a.composer.text, "look at @src/tui/mod.rs ");
    // Inside a word, the whole word is replaced, and the cursor moves past it.
    let mut b = app();
    b.apply(UiEvent::Files(vec!["src/tui/mod.rs".into()]));
    for c in "@tuimd please".chars() {
        b.on_event(key(c), now);
    }
    for _ in 0.." please".len() + 2 {
        b.on_event(code(KeyCode::Left), now);
    }
    b.on_event(code(KeyCode::Tab), now);
    assert_eq!(b.composer.text, "@src/tui/mod.rs please");
    b.on_event(key('!'), now);
    assert_eq!(b.composer.text, "@src/tui/mod.rs !please");
    assert!(
        !screen(&mut a, 90, 20, now).contains("files (Tab"),
        "the popup closes after the path"
    );
    for c in "and mail@x".chars() {
        a.on_event(key(c), now);
    }
    assert!(
        !screen(&mut a, 90, 20, now).contains("files (Tab"),
        "an @ inside a word is no mention"
    );
}

#[test]
fn model_takes_a_name_a_reasoning_effort_or_both() {
    let mut a = app();
    for (typed, expected) in [
        (
            "/model gpt-5",
            Some(Request::SetModel("gpt-5".into(), None)),
        ),
        (
            "/model gpt-5 high",
            Some(Request::SetModel("gpt-5".into(), Some("high".into()))),
        ),
        (
            "/model low",
            Some(Request::SetModel("claude-x".into(), Some("low".into()))),
        ),
        ("/model", Some(Request::ListModels)),
        ("/model gpt-5 fastest", None),
    ] {
        a.commands.clear();
        a.submit(typed.into());
        assert_eq!(a.commands.first(), expected.as_ref(), "{typed}");
    }
    let now = Instant::now();
    assert!(
        screen(&mut a, 100, 20, now).contains("Usage: /model [NAME] [minimal|low|medium|high]"),
        "{}",
        screen(&mut a, 100, 20, now)
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
    assert_eq!(a.commands, vec![Request::SetYolo(true)]);
    assert!(
        screen(&mut a, 100, 10, now).contains(" YOLO "),
        "the status line marks YOLO"
    );
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
    assert_eq!(a.commands, vec![Request::Resume("ccc3".into())]);
    assert!(!screen(&mut a, 80, 12, now).contains("resume a session"));
    // Esc closes it without a choice (and interrupts nothing).
    a.commands.clear();
    a.apply(UiEvent::Picker(vec![("x".into(), "x".into())]));
    a.on_event(code(KeyCode::Esc), now);
    assert!(a.commands.is_empty());
    assert!(!screen(&mut a, 80, 12, now).contains("resume a session"));
}

#[test]
fn an_undo_over_changed_files_waits_for_y() {
    let mut a = app();
    let now = Instant::now();
    let force = Request::Undo {
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
