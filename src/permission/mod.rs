//! The permission gate and what it works with: risk levels, the facts a
//! tool declares about a call, rules, scopes and session grants, and the
//! `Approver` a front end implements. Tools never call this; the Surface does.

mod facts;
mod gate;
mod persist;
mod risk;
mod rules;

pub use facts::{Banned, CallFacts, CommandSubject, Scope, Subjects};
pub use gate::{
    Answer, ApprovalRequest, Approver, Choice, Decision, DecisionRecord, Denial, Gate, GateConfig,
    HookWord, Judgment, Responder, RuleRef, denial_text,
};
pub use risk::{Risk, RiskAssessment};
pub use rules::{Rule, RuleList, RuleSet, TOOL_NAMES, normalize_host};

#[cfg(test)]
mod tests;
