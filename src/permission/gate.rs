//! The gate: one per session, deciding allow / ask / deny for every tool
//! call in a fixed order (the order is the design), and asking the person
//! one question at a time.
//!
//! 1. a deny rule → deny (also under --yolo); rules match what the call
//!    reads, writes, reaches and runs, whatever the tool, and a program
//!    only known at run time meets every bash deny rule
//! 2. a banned command, or a program only known at run time while any ban
//!    exists → deny (also under --yolo)
//! 3. a change to agent's own settings or records → ask, even under
//!    --yolo, never from a rule or grant (nobody to ask means no); then
//!    --yolo → allow, except a file change where the OS sandbox lets no
//!    command write (→ deny, as it would be for a bash command)
//! 4. an ask rule, or a PreToolUse hook asking about this very call → ask, no cache
//! 5. a PreToolUse hook approved this very call → allow
//! 6. needs no approval (read-only inside the workspace) → allow
//! 7. HIGH risk → ask, never from any cache or rule
//! 8. an allow rule → allow
//! 9. a session grant covers the call's scope → allow
//! 10. otherwise → ask the Approver

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde::Serialize;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::facts::CallFacts;
use super::persist;
use super::rules::{Rule, RuleList, RuleSet};
use super::{Risk, RiskAssessment};

/// What PreToolUse hooks said about one call, as the gate weighs it
/// (steps 4 and 5). A hook's deny never reaches the gate: it is the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HookWord {
    /// No hook ran, or none decided.
    #[default]
    Silent,
    /// Ask the person about this call.
    Ask,
    /// This call is approved.
    Allow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        })
    }
}

/// The rule that decided, for messages and `agent permissions check`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleRef {
    pub rule: String,
    pub list: RuleList,
    pub source: String,
}

impl From<&Rule> for RuleRef {
    fn from(r: &Rule) -> RuleRef {
        RuleRef {
            rule: r.text.clone(),
            list: r.list,
            source: r.source.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgment {
    pub decision: Decision,
    /// Why, in a line.
    pub why: String,
    pub rule: Option<RuleRef>,
    /// Step 10 (not a rule or HIGH): a re-check after waiting may clear it.
    pub cacheable: bool,
}

/// What the person can answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    AllowOnce,
    AllowSession,
    /// Saves an allow rule to the project's `.agent/config.toml`.
    AllowAlways,
    Deny {
        reason: Option<String>,
    },
    /// The approver cannot ask anyone (headless); the text explains.
    Unavailable {
        explanation: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    Once,
    Session,
    Always,
    Deny,
}

/// One question to the person.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub id: u64,
    pub call_id: String,
    pub tool: String,
    pub description: String,
    pub risk: RiskAssessment,
    /// What "for this session" would cover.
    pub scope: String,
    /// Rules "always" would save.
    pub rules: Vec<String>,
    /// Answers offered: HIGH risk gets only once and deny.
    pub choices: Vec<Choice>,
    pub diff: Option<String>,
    /// Requests waiting behind this one when it was asked (live count:
    /// [`Gate::waiting`]).
    pub waiting: usize,
    /// It changes agent's own settings or records: --yolo would not
    /// allow it either.
    pub protected: bool,
}

/// The front end's side of a question: show it, answer through the
/// [`Responder`]. Dropping the responder unanswered denies.
pub trait Approver: Send + Sync {
    fn request(&self, request: ApprovalRequest, responder: Responder);
}

pub struct Responder {
    id: u64,
    shared: Weak<Shared>,
    answered: bool,
}

impl Responder {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Answers; `false` if the request was already answered or cancelled.
    pub fn answer(mut self, answer: Answer) -> bool {
        self.answered = true;
        self.shared
            .upgrade()
            .is_some_and(|s| s.resolve(self.id, answer))
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if !self.answered
            && let Some(s) = self.shared.upgrade()
        {
            s.resolve(
                self.id,
                Answer::Deny {
                    reason: Some("the approval prompt closed without an answer".into()),
                },
            );
        }
    }
}

#[derive(Default)]
struct State {
    grants: HashSet<String>,
    pending: HashMap<u64, oneshot::Sender<Answer>>,
    next_id: u64,
    waiting: usize,
    rules: RuleSet,
    decisions: Vec<DecisionRecord>,
}

/// A decision on one call, for the session log: what was decided, by whom
/// or what, and what it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRecord {
    pub call_id: String,
    pub tool: String,
    /// `allow` or `deny`.
    pub decision: String,
    /// `person (once)`, `rule ...`, `--yolo`, `hook`, `nobody to ask`...
    pub by: String,
    pub scope: String,
}

struct Shared {
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every critical section leaves the state consistent, so a poisoned
        // lock (a panic elsewhere) is still safe to use.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The first answer wins: it takes the pending entry; later ones find none.
    fn resolve(&self, id: u64, answer: Answer) -> bool {
        let tx = self.lock().pending.remove(&id);
        tx.is_some_and(|tx| tx.send(answer).is_ok())
    }
}

/// Settings of a gate.
pub struct GateConfig {
    pub rules: RuleSet,
    pub yolo: bool,
    pub workspace: PathBuf,
    /// Where "always" saves rules: the person's own config file, under
    /// `[projects."<workspace>"]`.
    pub always_file: PathBuf,
}

pub struct Gate {
    shared: Arc<Shared>,
    approver: Arc<dyn Approver>,
    /// One question at a time.
    turn: tokio::sync::Mutex<()>,
    /// Shared with [`Gate::child`]ren: `/yolo` reaches sub-agents too.
    yolo: Arc<std::sync::atomic::AtomicBool>,
    workspace: PathBuf,
    always_file: PathBuf,
}

/// Why a call may not run; the text is the tool result the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial(pub String);

impl Gate {
    pub fn new(config: GateConfig, approver: Arc<dyn Approver>) -> Gate {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                rules: config.rules,
                ..State::default()
            }),
        });
        Gate {
            shared,
            approver,
            turn: tokio::sync::Mutex::new(()),
            yolo: Arc::new(std::sync::atomic::AtomicBool::new(config.yolo)),
            workspace: config.workspace,
            always_file: config.always_file,
        }
    }

    /// A gate for a sub-agent: the same rules, session grants and yolo
    /// switch (live, not a copy), with its own approver.
    pub fn child(&self, approver: Arc<dyn Approver>) -> Gate {
        Gate {
            shared: Arc::clone(&self.shared),
            approver,
            turn: tokio::sync::Mutex::new(()),
            yolo: Arc::clone(&self.yolo),
            workspace: self.workspace.clone(),
            always_file: self.always_file.clone(),
        }
    }

    /// `/yolo` in the TUI: allow every call no deny rule or ban stops.
    pub fn set_yolo(&self, on: bool) {
        self.yolo.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn yolo(&self) -> bool {
        self.yolo.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What this session's "for this session" answers cover, sorted.
    pub fn session_grants(&self) -> Vec<String> {
        let mut grants: Vec<String> = self.shared.lock().grants.iter().cloned().collect();
        grants.sort();
        grants
    }

    /// Answers a pending request from any front end; the first answer wins.
    pub fn resolve(&self, id: u64, answer: Answer) -> bool {
        self.shared.resolve(id, answer)
    }

    /// Requests waiting behind the one being asked, right now.
    pub fn waiting(&self) -> usize {
        self.shared.lock().waiting
    }

    pub fn rules(&self) -> RuleSet {
        self.shared.lock().rules.clone()
    }

    /// Steps 1–10 without asking anyone; `hook` is what PreToolUse hooks
    /// said about this very call.
    pub fn judge(&self, facts: &CallFacts, hook: HookWord) -> Judgment {
        let state = self.shared.lock();
        let j = |decision, why: String, rule: Option<&Rule>, cacheable| Judgment {
            decision,
            why,
            rule: rule.map(RuleRef::from),
            cacheable,
        };
        if let Some(r) = state.rules.first_match(RuleList::Deny, facts) {
            return j(
                Decision::Deny,
                format!("denied by the rule `{}` in {}", r.text, r.source),
                Some(r),
                false,
            );
        }
        if let Some(b) = &facts.banned {
            let why = if b.unknown {
                format!(
                    "{}: a program only known at run time could be a banned one",
                    b.why
                )
            } else {
                format!("`{}` is banned ({})", b.command, b.why)
            };
            return j(Decision::Deny, why, None, false);
        }
        if let Some(why) = &facts.protected {
            return j(Decision::Ask, format!("high risk: {why}"), None, false);
        }
        if self.yolo.load(std::sync::atomic::Ordering::Relaxed) {
            if let Some(why) = &facts.outside_sandbox {
                return j(Decision::Deny, why.clone(), None, false);
            }
            return j(
                Decision::Allow,
                "--yolo allows every call that no deny rule or ban stops".into(),
                None,
                false,
            );
        }
        if let Some(r) = state.rules.first_match(RuleList::Ask, facts) {
            return j(
                Decision::Ask,
                format!("the rule `{}` in {} asks every time", r.text, r.source),
                Some(r),
                false,
            );
        }
        if hook == HookWord::Ask {
            return j(
                Decision::Ask,
                "a PreToolUse hook asks about this call".into(),
                None,
                false,
            );
        }
        if hook == HookWord::Allow {
            return j(
                Decision::Allow,
                "approved by a PreToolUse hook".into(),
                None,
                false,
            );
        }
        if !facts.needs_approval {
            return j(
                Decision::Allow,
                "read-only inside the project".into(),
                None,
                false,
            );
        }
        if facts.risk.level == Risk::High {
            return j(
                Decision::Ask,
                format!("high risk: {}", facts.risk.reason),
                None,
                false,
            );
        }
        if let Some(r) = state.rules.allows(facts) {
            return j(
                Decision::Allow,
                format!("allowed by the rule `{}` in {}", r.text, r.source),
                Some(r),
                false,
            );
        }
        if facts.scope.covered_by(&state.grants) {
            return j(
                Decision::Allow,
                "allowed for this session".into(),
                None,
                false,
            );
        }
        j(Decision::Ask, "needs approval".into(), None, true)
    }

    /// Decides a call, asking the person when needed; `hook` is what
    /// PreToolUse hooks said about this very call. `Err` is the tool result
    /// for a denied call.
    pub async fn check(
        &self,
        facts: &CallFacts,
        call_id: &str,
        hook: HookWord,
        cancel: &CancellationToken,
    ) -> Result<(), Denial> {
        let judgment = self.judge(facts, hook);
        let mut by = match &judgment.rule {
            Some(r) => format!("rule `{}` ({} list in {})", r.rule, r.list, r.source),
            None => judgment.why.clone(),
        };
        let outcome = match judgment.decision {
            Decision::Allow => Ok(()),
            Decision::Deny => Err(Denial(self.deny_message(facts, &judgment))),
            Decision::Ask => {
                let (outcome, who) = self.ask(facts, call_id, &judgment, cancel).await;
                by = who;
                outcome
            }
        };
        self.shared.lock().decisions.push(DecisionRecord {
            call_id: call_id.to_string(),
            tool: facts.tool.clone(),
            decision: if outcome.is_ok() { "allow" } else { "deny" }.into(),
            by,
            scope: facts.scope.describe(&self.workspace),
        });
        outcome
    }

    /// Decisions made since the last call, oldest first.
    pub fn take_decisions(&self) -> Vec<DecisionRecord> {
        std::mem::take(&mut self.shared.lock().decisions)
    }

    fn deny_message(&self, facts: &CallFacts, j: &Judgment) -> String {
        match (&j.rule, &facts.banned) {
            (Some(rule), _) if facts.subjects.commands.iter().any(|c| !c.known) => format!(
                "This `{}` call is denied by the rule `{}` (deny list in {}): it runs a program only known at run time, which could be what the rule denies. \
                 Write the program's name out (no variables, braces or generated code in the command name), or choose another way.",
                facts.tool, rule.rule, rule.source
            ),
            (Some(rule), _) => format!(
                "This `{}` call is denied by the rule `{}` (deny list in {}). Do not retry it; choose another way, or ask the person to change the rule.",
                facts.tool, rule.rule, rule.source
            ),
            (None, Some(b)) if b.unknown => format!(
                "This command is not run: {}, and a program only known at run time could be a banned one. agent runs no program whose name it cannot read from the command, even with --yolo. \
                 Write the program's name out (no variables, braces, `eval` or generated code in the command name), or choose another way.",
                b.why
            ),
            (None, Some(b)) => format!(
                "`{cmd}` is banned ({why}): agent never runs it, even with --yolo. Do not retry it; choose another way. \
                 If the person really wants it, they can remove \"{cmd}\" from [permissions] banned in ~/.config/agent/config.toml.",
                cmd = b.command,
                why = b.why
            ),
            (None, None) => format!("This `{}` call is denied: {}.", facts.tool, j.why),
        }
    }

    /// Asks the person; returns the outcome and who decided, in words.
    async fn ask(
        &self,
        facts: &CallFacts,
        call_id: &str,
        judgment: &Judgment,
        cancel: &CancellationToken,
    ) -> (Result<(), Denial>, String) {
        let mut who = String::from("cancelled before an answer");
        let outcome = self
            .ask_inner(facts, call_id, judgment, cancel, &mut who)
            .await;
        (outcome, who)
    }

    async fn ask_inner(
        &self,
        facts: &CallFacts,
        call_id: &str,
        judgment: &Judgment,
        cancel: &CancellationToken,
        who: &mut String,
    ) -> Result<(), Denial> {
        let cancelled = || Denial("The call was cancelled before the person answered.".into());
        self.shared.lock().waiting += 1;
        let turn = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            t = self.turn.lock() => Some(t),
        };
        self.shared.lock().waiting -= 1;
        let Some(_turn) = turn else {
            return Err(cancelled());
        };
        // A request that waited may be covered by what was granted meanwhile
        // (only a request no hook spoke about reaches step 10, `cacheable`).
        if judgment.cacheable {
            let again = self.judge(facts, HookWord::Silent);
            if again.decision == Decision::Allow {
                *who = format!("{} (granted while it waited)", again.why);
                return Ok(());
            }
        }
        let high = facts.risk.level == Risk::High;
        let (tx, rx) = oneshot::channel();
        let (id, waiting) = {
            let mut s = self.shared.lock();
            s.next_id += 1;
            let id = s.next_id;
            s.pending.insert(id, tx);
            (id, s.waiting)
        };
        let request = ApprovalRequest {
            id,
            call_id: call_id.to_string(),
            tool: facts.tool.clone(),
            description: facts.description.clone(),
            risk: facts.risk.clone(),
            scope: facts.scope.describe(&self.workspace),
            rules: facts.scope.rules(&self.workspace).unwrap_or_default(),
            choices: choices(facts, high || !judgment.cacheable, &self.workspace),
            diff: facts.diff.clone(),
            waiting,
            protected: facts.protected.is_some(),
        };
        self.approver.request(
            request,
            Responder {
                id,
                shared: Arc::downgrade(&self.shared),
                answered: false,
            },
        );
        let answer = tokio::select! {
            a = rx => a.unwrap_or(Answer::Deny { reason: Some("the approval prompt went away".into()) }),
            _ = cancel.cancelled() => {
                self.shared.lock().pending.remove(&id);
                return Err(cancelled());
            }
        };
        // Only the winning answer reaches this point, so only it records grants.
        let rememberable = !high && judgment.cacheable;
        *who = match &answer {
            Answer::AllowOnce => "person: once".into(),
            Answer::AllowSession => "person: for this session".into(),
            Answer::AllowAlways => "person: always".into(),
            Answer::Deny { reason: None } => "person: deny".into(),
            Answer::Deny { reason: Some(r) } => format!("person: deny ({r})"),
            Answer::Unavailable { .. } => "nobody to ask".into(),
        };
        match answer {
            Answer::AllowOnce => Ok(()),
            Answer::AllowSession => {
                if rememberable {
                    self.shared.lock().grants.extend(facts.scope.keys());
                }
                Ok(())
            }
            Answer::AllowAlways => {
                if rememberable {
                    self.remember_always(facts);
                }
                Ok(())
            }
            Answer::Deny { reason } => Err(Denial(denial_text(&facts.tool, reason.as_deref()))),
            Answer::Unavailable { explanation } => Err(Denial(explanation)),
        }
    }

    fn remember_always(&self, facts: &CallFacts) {
        let Some(texts) = facts.scope.rules(&self.workspace) else {
            // "Always" is offered only when a rule says exactly what the
            // grant does; a front end that sent it anyway gets the grant.
            self.shared.lock().grants.extend(facts.scope.keys());
            return;
        };
        let source = self.always_file.display().to_string();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let mut state = self.shared.lock();
        state.grants.extend(facts.scope.keys());
        for t in &texts {
            if let Ok(rule) = Rule::parse(
                t,
                RuleList::Allow,
                &source,
                &self.workspace,
                home.as_deref(),
            ) {
                state.rules.push(rule);
            }
        }
        drop(state);
        if let Err(e) = persist::add_allow_rules(&self.always_file, &self.workspace, &texts) {
            // The session grant above still holds; only the file failed.
            crate::log::log(&format!(
                "could not save the allow rule to {}: {e}",
                self.always_file.display()
            ));
        }
    }
}

/// The answers a question offers: "for this session" only when the scope
/// names something, "always" only when a rule can say exactly that.
fn choices(facts: &CallFacts, once_only: bool, workspace: &std::path::Path) -> Vec<Choice> {
    let mut c = vec![Choice::Once];
    if !once_only {
        if !facts.scope.keys().is_empty() {
            c.push(Choice::Session);
        }
        if facts.scope.rules(workspace).is_some() {
            c.push(Choice::Always);
        }
    }
    c.push(Choice::Deny);
    c
}

/// The tool result for a person's denial: quotes the reason and says what
/// to do instead of retrying.
pub fn denial_text(tool: &str, reason: Option<&str>) -> String {
    let said = match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => format!(" Their reason: \"{r}\"."),
        None => " They gave no reason.".to_string(),
    };
    format!(
        "The person denied this `{tool}` call.{said} Do not retry the same call unchanged: if it is really needed, explain why to the person; otherwise choose another way."
    )
}
