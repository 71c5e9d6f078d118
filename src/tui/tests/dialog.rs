//! The approval dialog: drawn at each risk level and in small terminals,
//! and its key rules (the grace period, typing bursts, HIGH risk, reasons).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use tokio_util::sync::CancellationToken;

use super::{app, key, screen};
use crate::permission::{
    ApprovalRequest, Approver, CallFacts, Gate, GateConfig, Responder, Risk, RiskAssessment,
    RuleSet, Scope, Subjects,
};
use crate::tui::app::UiEvent;
use crate::tui::dialog::GRACE;

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
