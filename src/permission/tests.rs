//! The gate's order (one test per step), serialized questions, first answer
//! wins, re-checks of queued requests, fail-safe denial, HIGH never cached.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::*;

type Asked = Arc<Mutex<Vec<(ApprovalRequest, Option<Responder>)>>>;

/// Keeps every request and its responder for the test to answer.
#[derive(Default, Clone)]
struct Scripted {
    asked: Asked,
}

impl Approver for Scripted {
    fn request(&self, request: ApprovalRequest, responder: Responder) {
        self.asked.lock().unwrap().push((request, Some(responder)));
    }
}

impl Scripted {
    fn count(&self) -> usize {
        self.asked.lock().unwrap().len()
    }

    fn take(&self, i: usize) -> Responder {
        self.asked.lock().unwrap()[i].1.take().unwrap()
    }

    fn request(&self, i: usize) -> ApprovalRequest {
        self.asked.lock().unwrap()[i].0.clone()
    }

    async fn wait_for(&self, n: usize) {
        for _ in 0..500 {
            if self.count() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        panic!("expected {n} requests, got {}", self.count());
    }
}

/// Answers every request at once with a fixed answer.
struct Always(Answer);

impl Approver for Always {
    fn request(&self, _r: ApprovalRequest, responder: Responder) {
        responder.answer(self.0.clone());
    }
}

/// Drops every responder unanswered, like a front end that went away.
struct Vanishing;

impl Approver for Vanishing {
    fn request(&self, _r: ApprovalRequest, _responder: Responder) {}
}

const WS: &str = "/w";

/// A gate whose "always" answers go nowhere a test leaves behind: tests
/// that answer "always" use [`gate_saving_to`].
fn gate_with(rules: &[(&str, RuleList)], yolo: bool, approver: Arc<dyn Approver>) -> Gate {
    gate_saving_to(
        rules,
        yolo,
        approver,
        PathBuf::from("/nonexistent/agent-gate-test.toml"),
    )
}

fn gate_saving_to(
    rules: &[(&str, RuleList)],
    yolo: bool,
    approver: Arc<dyn Approver>,
    always_file: PathBuf,
) -> Gate {
    let mut set = RuleSet::default();
    for (text, list) in rules {
        set.push(Rule::parse(text, *list, "test.toml", Path::new(WS), None).unwrap());
    }
    Gate::new(
        GateConfig {
            rules: set,
            yolo,
            workspace: PathBuf::from(WS),
            always_file,
        },
        approver,
    )
}

fn bash(cmd: &str, risk: Risk) -> CallFacts {
    CallFacts {
        tool: "bash".into(),
        description: format!("run `{cmd}`"),
        risk: RiskAssessment::new(risk, "test"),
        scope: Scope::Commands {
            prefixes: vec![cmd.split_whitespace().take(2).collect::<Vec<_>>().join(" ")],
            files: Vec::new(),
            exact: true,
        },
        needs_approval: true,
        subjects: Subjects {
            commands: vec![CommandSubject {
                text: cmd.into(),
                canonical: cmd.into(),
                known: true,
                needs_approval: true,
                ..CommandSubject::default()
            }],
            ..Subjects::default()
        },
        banned: None,
        protected: None,
        outside_sandbox: None,
        diff: None,
    }
}

fn decision(g: &Gate, f: &CallFacts) -> Decision {
    g.judge(f, HookWord::Silent).decision
}

#[test]
fn step1_deny_rule_wins_even_under_yolo() {
    let g = gate_with(
        &[
            ("bash(git push:*)", RuleList::Deny),
            ("bash(git push:*)", RuleList::Allow),
        ],
        true,
        Arc::new(Vanishing),
    );
    let j = g.judge(&bash("git push origin", Risk::Medium), HookWord::Silent);
    assert_eq!(j.decision, Decision::Deny);
    assert_eq!(j.rule.unwrap().rule, "bash(git push:*)");
}

#[test]
fn step2_banned_denied_even_under_yolo() {
    let g = gate_with(&[("bash", RuleList::Allow)], true, Arc::new(Vanishing));
    let mut f = bash("sudo ls", Risk::High);
    f.banned = Some(Banned {
        command: "sudo".into(),
        why: "privilege escalation".into(),
        unknown: false,
    });
    assert_eq!(decision(&g, &f), Decision::Deny);
}

#[test]
fn step3_yolo_allows_high_risk() {
    let g = gate_with(&[], true, Arc::new(Vanishing));
    assert_eq!(decision(&g, &bash("rm -rf /", Risk::High)), Decision::Allow);
}

#[test]
fn step4_ask_rule_beats_allow_rule_and_read_only() {
    let g = gate_with(
        &[
            ("bash(git:*)", RuleList::Allow),
            ("bash(git status)", RuleList::Ask),
        ],
        false,
        Arc::new(Vanishing),
    );
    let mut f = bash("git status", Risk::Low);
    f.needs_approval = false;
    let j = g.judge(&f, HookWord::Silent);
    assert_eq!((j.decision, j.cacheable), (Decision::Ask, false));
}

#[test]
fn step5_hook_approval_is_per_call() {
    let g = gate_with(&[], false, Arc::new(Vanishing));
    let f = bash("cargo build", Risk::Low);
    assert_eq!(g.judge(&f, HookWord::Allow).decision, Decision::Allow);
    assert_eq!(g.judge(&f, HookWord::Silent).decision, Decision::Ask);
}

#[test]
fn step6_read_only_needs_no_approval() {
    let g = gate_with(&[], false, Arc::new(Vanishing));
    let mut f = bash("ls", Risk::Low);
    f.needs_approval = false;
    assert_eq!(decision(&g, &f), Decision::Allow);
}

#[test]
fn step7_high_risk_asks_despite_allow_rule() {
    let g = gate_with(
        &[("bash(git push:*)", RuleList::Allow)],
        false,
        Arc::new(Vanishing),
    );
    let j = g.judge(&bash("git push --force", Risk::High), HookWord::Silent);
    assert_eq!((j.decision, j.cacheable), (Decision::Ask, false));
}

#[test]
fn step8_allow_rule() {
    let g = gate_with(
        &[("bash(cargo test:*)", RuleList::Allow)],
        false,
        Arc::new(Vanishing),
    );
    assert_eq!(
        decision(&g, &bash("cargo test --all", Risk::Low)),
        Decision::Allow
    );
    assert_eq!(decision(&g, &bash("cargo build", Risk::Low)), Decision::Ask);
}

#[tokio::test]
async fn step9_session_grant_covers_its_scope_only() {
    let g = gate_with(&[], false, Arc::new(Always(Answer::AllowSession)));
    let cancel = CancellationToken::new();
    g.check(
        &bash("git commit -m x", Risk::Medium),
        "c1",
        HookWord::Silent,
        &cancel,
    )
    .await
    .unwrap();
    assert_eq!(
        decision(&g, &bash("git commit -m y", Risk::Medium)),
        Decision::Allow
    );
    assert_eq!(decision(&g, &bash("git push", Risk::Medium)), Decision::Ask);
}

#[tokio::test]
async fn step10_asks_and_denial_quotes_the_reason() {
    let g = gate_with(
        &[],
        false,
        Arc::new(Always(Answer::Deny {
            reason: Some("not on main".into()),
        })),
    );
    let err = g
        .check(
            &bash("git push", Risk::Medium),
            "c",
            HookWord::Silent,
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        "The person denied this `bash` call. Their reason: \"not on main\". Do not retry the same call unchanged: if it is really needed, explain why to the person; otherwise choose another way."
    );
}

#[tokio::test]
async fn high_risk_is_never_cached() {
    let g = gate_with(&[], false, Arc::new(Always(Answer::AllowSession)));
    let f = bash("git push --force", Risk::High);
    g.check(&f, "c1", HookWord::Silent, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        decision(&g, &f),
        Decision::Ask,
        "a session answer to HIGH must not be remembered"
    );
}

#[tokio::test]
async fn high_risk_offers_only_once_and_deny() {
    let s = Scripted::default();
    let g = Arc::new(gate_with(&[], false, Arc::new(s.clone())));
    let g2 = Arc::clone(&g);
    let t = tokio::spawn(async move {
        g2.check(
            &bash("rm -rf /", Risk::High),
            "c",
            HookWord::Silent,
            &CancellationToken::new(),
        )
        .await
    });
    s.wait_for(1).await;
    assert_eq!(s.request(0).choices, vec![Choice::Once, Choice::Deny]);
    s.take(0).answer(Answer::AllowOnce);
    t.await.unwrap().unwrap();
}

#[tokio::test]
async fn requests_are_serialized_and_queued_ones_recheck_grants() {
    let s = Scripted::default();
    let g = Arc::new(gate_with(&[], false, Arc::new(s.clone())));
    let cancel = CancellationToken::new();
    let mut tasks = Vec::new();
    for i in 0..3 {
        let (g, c) = (Arc::clone(&g), cancel.clone());
        tasks.push(tokio::spawn(async move {
            g.check(
                &bash("cargo test", Risk::Low),
                &format!("c{i}"),
                HookWord::Silent,
                &c,
            )
            .await
        }));
    }
    s.wait_for(1).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(s.count(), 1, "one question at a time");
    assert_eq!(g.waiting(), 2);
    assert!(s.take(0).answer(Answer::AllowSession));
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(
        s.count(),
        1,
        "the queued requests were cleared by the session grant"
    );
}

#[tokio::test]
async fn first_answer_wins_and_a_losing_grant_leaves_nothing() {
    let s = Scripted::default();
    let g = Arc::new(gate_with(&[], false, Arc::new(s.clone())));
    let g2 = Arc::clone(&g);
    let t = tokio::spawn(async move {
        g2.check(
            &bash("git push", Risk::Medium),
            "c",
            HookWord::Silent,
            &CancellationToken::new(),
        )
        .await
    });
    s.wait_for(1).await;
    let id = s.request(0).id;
    assert!(g.resolve(id, Answer::Deny { reason: None }));
    assert!(
        !s.take(0).answer(Answer::AllowSession),
        "the late answer loses"
    );
    assert!(t.await.unwrap().is_err());
    assert_eq!(
        decision(&g, &bash("git push", Risk::Medium)),
        Decision::Ask,
        "no grant from the losing answer"
    );
}

#[tokio::test]
async fn an_approver_that_goes_away_means_deny() {
    let g = gate_with(&[], false, Arc::new(Vanishing));
    let err = g
        .check(
            &bash("cargo build", Risk::Low),
            "c",
            HookWord::Silent,
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(err.0.contains("closed without an answer"), "{}", err.0);
}

#[tokio::test]
async fn cancelling_unblocks_a_waiting_request_as_denied() {
    let s = Scripted::default();
    let g = Arc::new(gate_with(&[], false, Arc::new(s.clone())));
    let cancel = CancellationToken::new();
    let (g2, c2) = (Arc::clone(&g), cancel.clone());
    let t = tokio::spawn(async move {
        g2.check(&bash("cargo build", Risk::Low), "c", HookWord::Silent, &c2)
            .await
    });
    s.wait_for(1).await;
    cancel.cancel();
    let err = t.await.unwrap().unwrap_err();
    assert!(err.0.contains("cancelled"), "{}", err.0);
    assert!(
        !s.take(0).answer(Answer::AllowOnce),
        "the cancelled request is gone"
    );
}

#[tokio::test]
async fn always_saves_a_rule_and_allows_later_calls() {
    let dir = tempfile::tempdir().unwrap();
    let g = gate_saving_to(
        &[],
        false,
        Arc::new(Always(Answer::AllowAlways)),
        dir.path().join("config.toml"),
    );
    g.check(
        &bash("cargo test", Risk::Low),
        "c",
        HookWord::Silent,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        g.judge(&bash("cargo test --release", Risk::Low), HookWord::Silent)
            .rule
            .unwrap()
            .rule,
        "bash(cargo test:*)"
    );
    let saved = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    assert!(saved.contains("bash(cargo test:*)"), "{saved}");
}

#[test]
fn step4_hook_ask_is_per_call_and_yields_to_yolo() {
    let g = gate_with(
        &[("bash(cargo build:*)", RuleList::Allow)],
        false,
        Arc::new(Vanishing),
    );
    let f = bash("cargo build", Risk::Low);
    assert_eq!(
        g.judge(&f, HookWord::Ask).decision,
        Decision::Ask,
        "the hook's ask beats the allow rule"
    );
    assert_eq!(g.judge(&f, HookWord::Silent).decision, Decision::Allow);
    g.set_yolo(true);
    assert_eq!(
        g.judge(&f, HookWord::Ask).decision,
        Decision::Allow,
        "--yolo never asks"
    );
}

#[tokio::test]
async fn a_child_gate_shares_rules_grants_and_the_yolo_switch() {
    let parent = gate_with(&[], false, Arc::new(Always(Answer::AllowSession)));
    let child = parent.child(Arc::new(Always(Answer::Unavailable {
        explanation: "nobody".into(),
    })));
    let f = bash("cargo build", Risk::Medium);
    let cancel = CancellationToken::new();
    assert_eq!(
        child.check(&f, "k1", HookWord::Silent, &cancel).await,
        Err(Denial("nobody".into())),
        "the child's own approver answers"
    );
    parent
        .check(&f, "p1", HookWord::Silent, &cancel)
        .await
        .unwrap();
    assert_eq!(
        child.judge(&f, HookWord::Silent).decision,
        Decision::Allow,
        "the session grant is shared"
    );
    let g = bash("git push", Risk::Medium);
    assert_eq!(child.judge(&g, HookWord::Silent).decision, Decision::Ask);
    parent.set_yolo(true);
    assert_eq!(
        child.judge(&g, HookWord::Silent).decision,
        Decision::Allow,
        "/yolo reaches the child"
    );
    parent.set_yolo(false);
    assert_eq!(
        child.judge(&g, HookWord::Silent).decision,
        Decision::Ask,
        "and so does turning it off"
    );
}

#[test]
fn a_sub_agents_gate_obeys_the_same_deny_rules() {
    let g = gate_with(
        &[("Read(/w/secret/**)", RuleList::Deny)],
        true,
        Arc::new(Vanishing),
    );
    let child = g.child(Arc::new(Vanishing));
    let view = CallFacts {
        tool: "view".into(),
        description: "view secret/a".into(),
        risk: RiskAssessment::low("reads inside the project"),
        scope: Scope::Reads {
            paths: vec!["/w/secret/a".into()],
        },
        needs_approval: false,
        subjects: Subjects {
            reads: vec!["/w/secret/a".into()],
            ..Subjects::default()
        },
        banned: None,
        protected: None,
        outside_sandbox: None,
        diff: None,
    };
    assert_eq!(decision(&child, &view), Decision::Deny);
    assert_eq!(decision(&g, &view), Decision::Deny);
}
