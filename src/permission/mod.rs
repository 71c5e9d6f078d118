//! The permission gate and what it works with: risk levels, rules, scopes,
//! session grants and the `Approver` a front end implements.

mod risk;

pub use risk::{Risk, RiskAssessment};
