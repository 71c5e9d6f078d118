//! Claude Code's settings files, read as configuration of ours, so a
//! person's existing setup protects them from the first run: the user's
//! `~/.claude/settings.json`, and a project's `.claude/settings.json` and
//! `.claude/settings.local.json` (under the same trust rules as
//! `.agent/config.toml`: a project's allow rules and hooks count only
//! once the person trusts it). Read: `permissions` (`allow`, `ask`,
//! `deny`; Claude Code's rule syntax is ours, `//path` is absolute) and
//! `hooks` (`PreToolUse`, `PostToolUse`; each hook sees Claude Code's
//! names). Everything else in them is Claude Code's own business.

use std::path::Path;

use serde_json::Value;

use super::file::{ConfigFile, PermissionsFile};
use crate::hooks::{Format, HookSpec, HooksFile};
use crate::permission::{Rule, RuleList};

/// Settings files larger than this are not read.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// What one settings file gives: our config, the rules left out (with
/// why), and what a project's trust covers (for its fingerprint).
pub struct Settings {
    pub file: ConfigFile,
    pub skipped: Vec<String>,
    pub wants: Value,
}

/// Parses one settings file's text. Rules that are not ours to read are
/// skipped and listed; a file that is not JSON is an error.
pub fn parse(
    text: &str,
    path: &Path,
    workspace: &Path,
    home: Option<&Path>,
) -> Result<Settings, String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let mut skipped = Vec::new();
    let mut rules = |list: RuleList, key: &str| -> Vec<String> {
        v.pointer(&format!("/permissions/{key}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|r| r.replace("(//", "(/"))
            .filter(|r| match Rule::parse(r, list, "", workspace, home) {
                Ok(_) => true,
                Err(e) => {
                    skipped.push(e);
                    false
                }
            })
            .collect()
    };
    let permissions = PermissionsFile {
        allow: rules(RuleList::Allow, "allow"),
        ask: rules(RuleList::Ask, "ask"),
        deny: rules(RuleList::Deny, "deny"),
        banned: None,
    };
    let hooks = |event: &str| -> Vec<HookSpec> {
        v.pointer(&format!("/hooks/{event}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|group| {
                let matcher = group["matcher"].as_str().unwrap_or_default().to_string();
                group["hooks"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|h| h["type"] == "command")
                    .filter_map(move |h| {
                        Some(HookSpec {
                            matcher: matcher.clone(),
                            command: h["command"].as_str()?.to_string(),
                            timeout_secs: h["timeout"].as_u64(),
                            format: Format::Claude,
                        })
                    })
            })
            .collect()
    };
    let hooks = HooksFile {
        pre_tool_use: hooks("PreToolUse"),
        post_tool_use: hooks("PostToolUse"),
    };
    if let Err((key, e)) = hooks.validate() {
        return Err(format!("{}: {key}: {e}", path.display()));
    }
    let wants = serde_json::json!({"allow": permissions.allow, "hooks": v.get("hooks")});
    Ok(Settings {
        file: ConfigFile {
            permissions: Some(permissions),
            hooks: (!hooks.is_empty()).then_some(hooks),
            ..ConfigFile::default()
        },
        skipped,
        wants,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_and_hooks_are_read_and_foreign_rules_skipped() {
        let text = r#"{
            "permissions": {
                "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
                "deny": ["Read(./.env)", "Bash(curl:*)", "Read(//etc/shadow)", "mcp__github"],
                "defaultMode": "acceptEdits"
            },
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 30}]}],
                      "Stop": [{"hooks": [{"type": "command", "command": "x"}]}]},
            "model": "opus"
        }"#;
        let home = Path::new("/home/u");
        let s = parse(
            text,
            Path::new("/w/.claude/settings.json"),
            Path::new("/w"),
            Some(home),
        )
        .unwrap();
        let p = s.file.permissions.unwrap();
        assert_eq!(p.allow, ["Bash(npm run lint)", "Read(~/.zshrc)"]);
        assert_eq!(
            p.deny[..3],
            ["Read(./.env)", "Bash(curl:*)", "Read(/etc/shadow)"]
        );
        let hooks = s.file.hooks.unwrap();
        assert_eq!(hooks.pre_tool_use.len(), 1);
        assert_eq!(hooks.pre_tool_use[0].command, "guard.sh");
        assert_eq!(hooks.pre_tool_use[0].timeout_secs, Some(30));
        assert!(hooks.post_tool_use.is_empty());
        assert!(parse("{", Path::new("/w/x.json"), Path::new("/w"), None).is_err());
    }
}
