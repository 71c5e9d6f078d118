//! Risk levels with a one-line reason, assessed per call.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Basically no side effect.
    Low,
    /// Changes state, with bounded consequences.
    Medium,
    /// May be irreversible. Never answered from a cache or rule.
    High,
}

impl std::fmt::Display for Risk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RiskAssessment {
    pub level: Risk,
    pub reason: String,
}

impl RiskAssessment {
    pub fn new(level: Risk, reason: impl Into<String>) -> RiskAssessment {
        RiskAssessment {
            level,
            reason: reason.into(),
        }
    }

    pub fn low(reason: impl Into<String>) -> RiskAssessment {
        Self::new(Risk::Low, reason)
    }

    pub fn medium(reason: impl Into<String>) -> RiskAssessment {
        Self::new(Risk::Medium, reason)
    }

    pub fn high(reason: impl Into<String>) -> RiskAssessment {
        Self::new(Risk::High, reason)
    }

    /// Keeps the higher of the two; on a tie, the first reason given
    /// (an empty reason counts as none).
    pub fn raise(&mut self, other: RiskAssessment) {
        if other.level > self.level || (other.level == self.level && self.reason.is_empty()) {
            *self = other;
        }
    }
}
