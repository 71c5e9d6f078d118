//! `agent permissions check` and `agent permissions list`: the gate's
//! judgment of one call without running it, and the rules in effect.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::agent::NobodyToAsk;
use crate::config::Config;

/// `agent permissions check [--json] TOOL ARGS`: the gate's judgment of one
/// call, without running anything. Returns the text to print.
pub fn check(config: &Config, tool: &str, args: &str, json: bool) -> Result<String, String> {
    let surface = crate::wiring::surface(
        config,
        Arc::new(NobodyToAsk),
        &CancellationToken::new(),
        None,
        None,
    );
    let call = crate::tools::ToolCall {
        id: "check".into(),
        name: tool.to_string(),
        arguments: args.to_string(),
    };
    let (facts, j) = surface.judge(&call).map_err(|e| e.0)?;
    let scope = facts.scope.describe(&config.workspace);
    if json {
        let v = json!({
            "decision": j.decision,
            "risk": facts.risk.level,
            "reason": facts.risk.reason,
            "scope": scope,
            "rule": j.rule.as_ref().map(|r| &r.rule),
            "rule_list": j.rule.as_ref().map(|r| r.list),
            "rule_source": j.rule.as_ref().map(|r| &r.source),
            "why": j.why,
            "description": facts.description,
            "banned": facts.banned.as_ref().map(|b| &b.command),
        });
        return Ok(v.to_string());
    }
    let rule = match &j.rule {
        Some(r) => format!("{} ({} list in {})", r.rule, r.list, r.source),
        None => "none".into(),
    };
    Ok(format!(
        "decision: {}\nwhy:      {}\nrisk:     {} ({})\nscope:    {}\nrule:     {}\n",
        j.decision, j.why, facts.risk.level, facts.risk.reason, scope, rule
    ))
}

/// `agent permissions list`: the rules and bans in effect, with their sources.
pub fn list(config: &Config) -> String {
    let mut out = String::new();
    let rules = config.rule_set();
    if rules.rules().is_empty() {
        out.push_str("rules: none (add [permissions] allow / ask / deny to a config file)\n");
    } else {
        out.push_str("rules (deny > ask > allow):\n");
        for r in rules.rules() {
            out.push_str(&format!(
                "  {:<5}  {:<40}  {}\n",
                r.list.to_string(),
                r.text,
                r.source
            ));
        }
    }
    if !config.project_trusted {
        for rule in &config.project_wants.allow {
            out.push_str(&format!(
                "  {:<5}  {:<40}  {} (ignored until you trust this project: `agent trust`)\n",
                "allow",
                rule.escape_debug().to_string(),
                config.project_config().display()
            ));
        }
    }
    out.push_str(&format!(
        "yolo: {}\n",
        if config.yolo() { "on" } else { "off" }
    ));
    out.push_str(
        "banned commands (set [permissions] banned in ~/.config/agent/config.toml to change):\n",
    );
    for b in &config.banned {
        out.push_str(&format!("  {b}\n"));
    }
    out
}
