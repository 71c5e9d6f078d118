//! Reading what a hook printed on exit 0. Two forms are understood, so
//! scripts written for other agents work unchanged:
//!
//! - Claude Code's: `hookSpecificOutput.permissionDecision` (allow / deny /
//!   ask), `permissionDecisionReason`, `updatedInput`, `additionalContext`;
//!   the older top-level `decision` (approve / block) with `reason`;
//!   `continue: false` with `stopReason` (halt); `systemMessage` (shown).
//! - Crush's: `decision` (allow / deny / ask), `reason`, `halt`, `context`,
//!   `updated_input`.

use serde_json::{Map, Value};

use crate::permission::Decision;

#[derive(Debug, Default, PartialEq)]
pub(super) struct Parsed {
    pub decision: Option<Decision>,
    pub reason: Option<String>,
    /// Ends the turn, with this reason.
    pub halt: Option<String>,
    pub updated_input: Option<Map<String, Value>>,
    pub context: Option<String>,
    /// For the person, not the model.
    pub message: Option<String>,
}

/// `Err` says what is wrong, for a non-blocking error.
pub(super) fn parse(stdout: &str) -> Result<Parsed, String> {
    let value: Value = serde_json::from_str(stdout).map_err(|e| {
        format!(
            "its output is not JSON ({e}): {}",
            crate::text::cut_line(stdout, 200)
        )
    })?;
    let Value::Object(top) = value else {
        return Err(format!(
            "its output must be a JSON object, not {}",
            crate::text::cut_line(stdout, 200)
        ));
    };
    let specific = match top.get("hookSpecificOutput") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "`hookSpecificOutput` must be an object, not {other}"
            ));
        }
    };
    let text = |m: &Map<String, Value>, key: &str| -> Result<Option<String>, String> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("`{key}` must be a string, not {other}")),
        }
    };
    let mut out = Parsed::default();
    let decision = match text(&specific, "permissionDecision")? {
        Some(d) => Some(d),
        None => text(&top, "decision")?,
    };
    out.decision = match decision.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None => None,
        Some("allow" | "approve") => Some(Decision::Allow),
        Some("deny" | "block") => Some(Decision::Deny),
        Some("ask") => Some(Decision::Ask),
        Some(other) => {
            return Err(format!(
                "unknown decision `{other}`; use allow, deny or ask"
            ));
        }
    };
    out.reason = match text(&specific, "permissionDecisionReason")? {
        Some(r) => Some(r),
        None => text(&top, "reason")?,
    };
    let halted = top.get("halt") == Some(&Value::Bool(true))
        || top.get("continue") == Some(&Value::Bool(false));
    if halted {
        out.halt = Some(
            text(&top, "stopReason")?
                .or(out.reason.clone())
                .unwrap_or_else(|| "no reason given".into()),
        );
    }
    let updated = specific
        .get("updatedInput")
        .or_else(|| top.get("updated_input"));
    out.updated_input = match updated {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m.clone()),
        Some(other) => {
            return Err(format!(
                "the rewritten input must be a JSON object, not {other}"
            ));
        }
    };
    out.context = match text(&specific, "additionalContext")? {
        Some(c) => Some(c),
        None => text(&top, "context")?,
    };
    out.message = text(&top, "systemMessage")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_form() {
        let p = parse(
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "no rm", "updatedInput": {"command": "ls"},
                "additionalContext": "ctx"}, "systemMessage": "hi"}"#,
        )
        .unwrap();
        assert_eq!(p.decision, Some(Decision::Deny));
        assert_eq!(p.reason.as_deref(), Some("no rm"));
        assert_eq!(p.updated_input.unwrap()["command"], "ls");
        assert_eq!(p.context.as_deref(), Some("ctx"));
        assert_eq!(p.message.as_deref(), Some("hi"));
        assert_eq!(p.halt, None);
    }

    #[test]
    fn claude_code_legacy_and_continue() {
        let p =
            parse(r#"{"decision": "approve", "continue": false, "stopReason": "done"}"#).unwrap();
        assert_eq!(p.decision, Some(Decision::Allow));
        assert_eq!(p.halt.as_deref(), Some("done"));
        let p = parse(r#"{"decision": "block", "reason": "r"}"#).unwrap();
        assert_eq!(p.decision, Some(Decision::Deny));
        assert_eq!(p.reason.as_deref(), Some("r"));
    }

    #[test]
    fn crush_form() {
        let p = parse(
            r#"{"decision": "ask", "reason": "check", "halt": true, "context": "c", "updated_input": {"a": 1}}"#,
        )
        .unwrap();
        assert_eq!(p.decision, Some(Decision::Ask));
        assert_eq!(p.halt.as_deref(), Some("check"));
        assert_eq!(p.context.as_deref(), Some("c"));
        assert_eq!(p.updated_input.unwrap()["a"], 1);
    }

    #[test]
    fn bad_output_says_what_is_wrong() {
        assert!(parse("hello").unwrap_err().contains("not JSON"));
        assert!(parse("[1]").unwrap_err().contains("JSON object"));
        assert!(
            parse(r#"{"decision": "maybe"}"#)
                .unwrap_err()
                .contains("maybe")
        );
        assert!(
            parse(r#"{"updated_input": "ls"}"#)
                .unwrap_err()
                .contains("rewritten input")
        );
        assert_eq!(parse("{}").unwrap(), Parsed::default());
    }
}
