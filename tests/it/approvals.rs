//! The real Surface with a scripted approver: what the person is asked
//! (description, diff, risk, choices), what "allow for this session"
//! remembers, and what a denial tells the model. Real files in a temp dir.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use agent::permission::{
    Answer, ApprovalRequest, Approver, Choice, Gate, GateConfig, Responder, Risk, RuleSet,
};
use agent::tools::{Surface, ToolCall, ToolContext, ToolResult, Workspace};
use serde_json::json;

/// Answers from a queue (deny when it runs dry) and keeps every request.
#[derive(Default)]
struct Scripted {
    answers: Mutex<VecDeque<Answer>>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl Approver for Scripted {
    fn request(&self, request: ApprovalRequest, responder: Responder) {
        self.asked.lock().unwrap().push(request);
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Answer::Deny { reason: None });
        responder.answer(answer);
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    surface: Surface,
    approver: Arc<Scripted>,
}

impl Fixture {
    fn new(answers: Vec<Answer>) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let approver = Arc::new(Scripted {
            answers: Mutex::new(answers.into()),
            asked: Mutex::default(),
        });
        let gate = Gate::new(
            GateConfig {
                rules: RuleSet::default(),
                yolo: false,
                workspace: root.clone(),
                // The person's config (here inside the temp dir for cleanup).
                always_file: root.join("user-home/config.toml"),
            },
            approver.clone(),
        );
        let ctx = ToolContext::new(Workspace::new(root.clone()), Vec::new(), Default::default());
        Fixture {
            _dir: dir,
            surface: Surface::new(ctx, Arc::new(gate)),
            root,
            approver,
        }
    }

    fn file(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn call(&self, name: &str, args: serde_json::Value) -> ToolResult {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let call = ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string(),
        };
        rt.block_on(self.surface.call(&call, &Default::default()))
    }

    fn asked(&self) -> Vec<ApprovalRequest> {
        self.approver.asked.lock().unwrap().clone()
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
}

#[test]
fn edit_approval_shows_diff_and_a_session_grant_covers_that_file_only() {
    let f = Fixture::new(vec![Answer::AllowSession, Answer::AllowOnce]);
    f.file("a.txt", "old\n");
    f.file("b.txt", "old\n");
    assert!(
        !f.call("view", json!({"path": "a.txt"})).is_error,
        "view needs no approval"
    );
    assert!(!f.call("view", json!({"path": "b.txt"})).is_error);
    assert!(f.asked().is_empty());

    let r = f.call(
        "edit",
        json!({"path": "a.txt", "old_string": "old", "new_string": "new"}),
    );
    assert_eq!(
        r.content,
        "Edited `a.txt`: replaced 1 occurrence (+1 −1 lines)."
    );
    let q = &f.asked()[0];
    assert_eq!(q.tool, "edit");
    assert_eq!(
        q.description,
        "edit a.txt: replaced 1 occurrence (+1 −1 lines)"
    );
    assert_eq!(q.risk.level, Risk::Medium);
    assert_eq!(q.scope, "changes to a.txt in this session");
    assert_eq!(
        q.choices,
        vec![Choice::Once, Choice::Session, Choice::Always, Choice::Deny]
    );
    assert_eq!(
        q.diff.as_deref(),
        Some("--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-old\n+new\n")
    );

    // Same file again: covered by the session grant, no question.
    f.call(
        "edit",
        json!({"path": "a.txt", "old_string": "new", "new_string": "newer"}),
    );
    assert_eq!(f.asked().len(), 1);
    assert_eq!(f.read("a.txt"), "newer\n");
    // Another file: asked again.
    f.call(
        "edit",
        json!({"path": "b.txt", "old_string": "old", "new_string": "new"}),
    );
    assert_eq!(f.asked().len(), 2);
}

#[test]
fn denial_with_reason_reaches_the_model_and_nothing_is_written() {
    let f = Fixture::new(vec![Answer::Deny {
        reason: Some("wrong file".into()),
    }]);
    let r = f.call(
        "write",
        json!({"path": "notes.txt", "content": "hello from the agent\n"}),
    );
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "The person denied this `write` call. Their reason: \"wrong file\". Do not retry the same call unchanged: if it is really needed, explain why to the person; otherwise choose another way."
    );
    assert!(!f.root.join("notes.txt").exists());
    let q = &f.asked()[0];
    assert_eq!(q.description, "create notes.txt (21 bytes, 1 line)");
    assert_eq!(q.risk.level, Risk::Low);
}

#[test]
fn overwrite_description_says_what_is_lost() {
    let f = Fixture::new(vec![Answer::AllowOnce]);
    f.file("main.rs", &"x".repeat(1200));
    f.call("view", json!({"path": "main.rs"}));
    let r = f.call(
        "write",
        json!({"path": "main.rs", "content": "y".repeat(3400)}),
    );
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        f.asked()[0].description,
        "overwrite main.rs: 1,200 bytes → 3,400 bytes, original content lost"
    );
    assert_eq!(f.asked()[0].risk.level, Risk::Medium);
}

#[test]
fn bash_session_grant_is_per_command_prefix_and_high_is_asked_every_time() {
    let f = Fixture::new(vec![
        Answer::AllowSession,
        Answer::AllowSession,
        Answer::AllowOnce,
        Answer::Deny { reason: None },
        Answer::AllowSession,
        Answer::Deny { reason: None },
    ]);
    let r = f.call(
        "bash",
        json!({"command": "git init -q && git commit --allow-empty -qm a"}),
    );
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        f.asked()[0].scope,
        "`git init` and `git commit` commands in this session"
    );
    f.call("bash", json!({"command": "git commit --allow-empty -qm b"}));
    assert_eq!(f.asked().len(), 1, "covered by the grant");
    // A compound call is covered only if every part is.
    f.call(
        "bash",
        json!({"command": "git commit --allow-empty -qm c && touch t"}),
    );
    assert_eq!(f.asked().len(), 2);
    assert_eq!(
        f.asked()[1].scope,
        "`git commit` and `touch` commands in this session"
    );
    // HIGH: only once/deny offered, and a session answer is not remembered.
    f.call("bash", json!({"command": "git reset --hard"}));
    assert_eq!(f.asked()[2].choices, vec![Choice::Once, Choice::Deny]);
    f.call("bash", json!({"command": "git reset --hard"}));
    assert_eq!(f.asked().len(), 4, "HIGH asked again");
    // A path outside the workspace is not covered by a grant for the same program.
    f.call("bash", json!({"command": "touch inside.txt"}));
    let before = f.asked().len();
    f.call(
        "bash",
        json!({"command": "touch /tmp/agent-approvals-outside.txt"}),
    );
    assert_eq!(
        f.asked().len(),
        before + 1,
        "outside path needs its own approval"
    );
    let _ = std::fs::remove_file("/tmp/agent-approvals-outside.txt");
}

#[test]
fn read_only_bash_and_reads_inside_run_without_questions() {
    let f = Fixture::new(vec![]);
    f.file("src/a.rs", "fn a() {}\n");
    for (name, args) in [
        ("bash", json!({"command": "ls src && cat src/a.rs | wc -l"})),
        ("grep", json!({"pattern": "fn"})),
        ("glob", json!({"pattern": "*.rs"})),
        ("ls", json!({})),
    ] {
        let r = f.call(name, args.clone());
        assert!(!r.is_error, "{name} {args}: {}", r.content);
    }
    assert!(f.asked().is_empty());
    let r = f.call("view", json!({"path": "/etc/hostname"}));
    assert!(
        r.is_error,
        "outside the workspace is asked (and denied here)"
    );
    assert_eq!(f.asked()[0].risk.level, Risk::Medium);
}

#[test]
fn scopes_name_what_they_cover_and_always_saves_exactly_that() {
    let f = Fixture::new(vec![
        Answer::AllowSession,
        Answer::AllowOnce,
        Answer::AllowOnce,
        Answer::AllowAlways,
    ]);
    // A redirection is remembered as the prefix writing that file.
    f.call("bash", json!({"command": "echo one >> log.txt"}));
    let q = &f.asked()[0];
    assert_eq!(q.scope, "`echo` commands writing log.txt in this session");
    assert_eq!(q.rules, ["bash(echo:*)", "edit(./log.txt)"]);
    f.call("bash", json!({"command": "echo two >> log.txt"}));
    assert_eq!(f.asked().len(), 1, "the second append is covered");
    assert_eq!(f.read("log.txt"), "one\ntwo\n");
    f.call("bash", json!({"command": "echo three >> other.txt"}));
    assert_eq!(f.asked().len(), 2, "another file is asked about");
    // A program only known at run time: nothing to remember, nothing to save.
    f.call("bash", json!({"command": "c=true; $c"}));
    let q = &f.asked()[2];
    assert_eq!(q.scope, "nothing that can be remembered");
    assert_eq!(q.choices, vec![Choice::Once, Choice::Deny]);
    assert!(q.rules.is_empty());
    // An assignment that changes the program is part of the scope, and
    // "always" saves the rule that says so.
    f.call("bash", json!({"command": "PATH=./bin:$PATH true"}));
    let q = &f.asked()[3];
    assert_eq!(q.scope, "`PATH=./bin:$PATH true` commands in this session");
    // Saved in the person's own config under this project, never in the
    // project's `.agent/config.toml` (which a clone would share or forge).
    let saved = f.read("user-home/config.toml");
    assert!(
        saved.contains(&format!("[projects.\"{}\"]", f.root.display())),
        "{saved}"
    );
    assert!(saved.contains("bash(PATH=./bin:$PATH true:*)"), "{saved}");
    assert!(!f.root.join(".agent/config.toml").exists());
    f.call("bash", json!({"command": "true"}));
    f.call("bash", json!({"command": "PATH=./bin:$PATH true"}));
    assert_eq!(
        f.asked().len(),
        4,
        "the saved rule covers the same call again"
    );
}
