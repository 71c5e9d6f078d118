//! User hooks: commands run before a tool call (`PreToolUse`) and after it
//! (`PostToolUse`), compatible with hook scripts written for Claude Code
//! (the event as JSON on stdin; a decision as JSON on stdout, or exit code 2
//! to block with stderr as the reason) and with Crush's output form.
//!
//! This module runs the commands and reads what they decided; the
//! [`Surface`](crate::tools::Surface) applies the verdict (a denial is the
//! tool result, an approval goes to the gate, a rewrite is validated and
//! judged again). A hook that fails, hangs or prints something unreadable
//! is a non-blocking error: logged, shown, and the call proceeds.

mod names;
mod output;
mod run;

pub use names::{Format, claude_name};

use std::path::PathBuf;
use std::time::Duration;

use futures_util::future::join_all;
use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::permission::Decision;
use run::Ran;

pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// Environment values longer than this are left out (a process cannot
/// start with a 128 KiB variable); the whole input is always on stdin.
const ENV_VALUE_CAP: usize = 32 * 1024;

/// One hook as configured: `[[hooks.PreToolUse]]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// Tool names: exact, `a|b`, or a regex (matched whole, ignoring
    /// case); empty or `*` for every tool.
    #[serde(default)]
    pub matcher: String,
    /// Run with `bash -c` in the project directory.
    pub command: String,
    pub timeout_secs: Option<u64>,
    /// The tool names the hook sees: Claude Code's (the default), or
    /// `agent` / `crush` for ours.
    #[serde(default)]
    pub format: Format,
}

/// The `[hooks]` table of a config file.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    #[serde(rename = "PreToolUse", default)]
    pub pre_tool_use: Vec<HookSpec>,
    #[serde(rename = "PostToolUse", default)]
    pub post_tool_use: Vec<HookSpec>,
}

impl HooksFile {
    pub fn is_empty(&self) -> bool {
        self.pre_tool_use.is_empty() && self.post_tool_use.is_empty()
    }

    pub fn extend(&mut self, other: HooksFile) {
        self.pre_tool_use.extend(other.pre_tool_use);
        self.post_tool_use.extend(other.post_tool_use);
    }

    /// Identifies exactly these hooks, for the trust record.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(&json!({
            "pre": self.pre_tool_use.iter().map(spec_json).collect::<Vec<_>>(),
            "post": self.post_tool_use.iter().map(spec_json).collect::<Vec<_>>(),
        }))
        .unwrap_or_default();
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
    }

    /// Checks every matcher, so a bad one is reported when the config loads.
    /// `Err` is (key, message).
    pub fn validate(&self) -> Result<(), (String, String)> {
        for (event, list) in [
            ("PreToolUse", &self.pre_tool_use),
            ("PostToolUse", &self.post_tool_use),
        ] {
            for (i, h) in list.iter().enumerate() {
                Matcher::parse(&h.matcher)
                    .map_err(|e| (format!("hooks.{event}[{i}].matcher"), e))?;
                if h.command.trim().is_empty() {
                    return Err((
                        format!("hooks.{event}[{i}].command"),
                        "the command is empty".into(),
                    ));
                }
                if let Some(t) = h.timeout_secs
                    && !(1..=3600).contains(&t)
                {
                    return Err((
                        format!("hooks.{event}[{i}].timeout_secs"),
                        format!("{t} is out of range; give 1 to 3600 seconds"),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn spec_json(h: &HookSpec) -> Value {
    // The default format leaves the fingerprint as it was before formats.
    if h.format == Format::default() {
        json!([h.matcher, h.command, h.timeout_secs])
    } else {
        json!([
            h.matcher,
            h.command,
            h.timeout_secs,
            format!("{:?}", h.format)
        ])
    }
}

#[derive(Debug, Clone)]
enum Matcher {
    All,
    Pattern(Regex),
}

impl Matcher {
    fn parse(text: &str) -> Result<Matcher, String> {
        let t = text.trim();
        if t.is_empty() || t == "*" {
            return Ok(Matcher::All);
        }
        Regex::new(&format!("(?i)^(?:{t})$"))
            .map(Matcher::Pattern)
            .map_err(|e| format!("`{t}` is not a tool name, `a|b` list or regex: {e}"))
    }

    /// Whether it names the tool, in our spelling or Claude Code's.
    fn matches(&self, tool: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Pattern(re) => names::spellings(tool).any(|t| re.is_match(t)),
        }
    }
}

#[derive(Debug, Clone)]
struct Hook {
    matcher: Matcher,
    command: String,
    timeout: Duration,
    format: Format,
}

impl Hook {
    fn compile(spec: &HookSpec) -> Option<Hook> {
        Some(Hook {
            // Validated when the config loaded.
            matcher: Matcher::parse(&spec.matcher).ok()?,
            command: spec.command.clone(),
            timeout: Duration::from_secs(spec.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS)),
            format: spec.format,
        })
    }
}

/// What a hook needs to know about the session.
#[derive(Debug, Clone)]
pub struct HookEnv {
    pub session_id: String,
    pub cwd: PathBuf,
    pub transcript_path: PathBuf,
    /// The sandbox hooks run in (it also withholds the provider keys).
    pub sandbox: crate::shell::Sandbox,
}

/// One call, as hooks see it.
pub struct HookCall<'a> {
    pub tool: &'a str,
    pub id: &'a str,
    /// The arguments, paths absolute.
    pub input: &'a Map<String, Value>,
    /// `default`, or `bypassPermissions` under --yolo (Claude Code's names).
    pub permission_mode: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    PreToolUse,
    PostToolUse,
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
        }
    }
}

/// What the hooks of one event decided together: deny over ask over
/// allow; any halt halts; the last rewrite wins; every context is kept.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    pub decision: Option<Decision>,
    /// Reasons given with the winning decision.
    pub reasons: Vec<String>,
    pub halt: Option<String>,
    pub updated_input: Option<Map<String, Value>>,
    /// The hook whose rewrite won also said allow.
    pub rewriter_allowed: bool,
    pub context: Vec<String>,
    /// For the person: non-blocking errors and hooks' messages.
    pub notices: Vec<String>,
}

impl Verdict {
    fn decide(&mut self, decision: Decision, reason: Option<String>) {
        let rank = |d: Decision| match d {
            Decision::Allow => 0,
            Decision::Ask => 1,
            Decision::Deny => 2,
        };
        match self.decision {
            Some(d) if rank(d) > rank(decision) => return,
            Some(d) if d == decision => {}
            _ => {
                self.decision = Some(decision);
                self.reasons.clear();
            }
        }
        self.reasons.extend(reason.filter(|r| !r.trim().is_empty()));
    }

    /// The reasons in one line, or `fallback`.
    pub fn reason(&self, fallback: &str) -> String {
        if self.reasons.is_empty() {
            fallback.to_string()
        } else {
            self.reasons.join("; ")
        }
    }
}

/// The hooks of one session (never of a sub-agent's).
pub struct Hooks {
    pre: Vec<Hook>,
    post: Vec<Hook>,
    env: HookEnv,
}

impl Hooks {
    pub fn new(file: &HooksFile, env: HookEnv) -> Hooks {
        Hooks {
            pre: file.pre_tool_use.iter().filter_map(Hook::compile).collect(),
            post: file
                .post_tool_use
                .iter()
                .filter_map(Hook::compile)
                .collect(),
            env,
        }
    }

    pub fn any(&self, event: Event, tool: &str) -> bool {
        self.list(event).iter().any(|h| h.matcher.matches(tool))
    }

    fn list(&self, event: Event) -> &[Hook] {
        match event {
            Event::PreToolUse => &self.pre,
            Event::PostToolUse => &self.post,
        }
    }

    /// Runs every hook of `event` matching the call, concurrently, and
    /// combines their answers in configuration order. `response` is the
    /// tool's result, for `PostToolUse`.
    pub async fn run(
        &self,
        event: Event,
        call: &HookCall<'_>,
        response: Option<&Value>,
        cancel: &CancellationToken,
    ) -> Verdict {
        let hooks: Vec<&Hook> = self
            .list(event)
            .iter()
            .filter(|h| h.matcher.matches(call.tool))
            .collect();
        let mut verdict = Verdict::default();
        if hooks.is_empty() {
            return verdict;
        }
        // Each format's view of the call (the tool's name differs).
        let stdin_for = |format: Format| {
            let mut input = json!({
                "session_id": self.env.session_id,
                "transcript_path": self.env.transcript_path,
                "cwd": self.env.cwd,
                "hook_event_name": event.name(),
                "tool_name": names::name_for(format, call.tool),
                "tool_input": call.input,
                "tool_use_id": call.id,
                "permission_mode": call.permission_mode,
            });
            if let Some(r) = response {
                input["tool_response"] = r.clone();
            }
            serde_json::to_vec(&input).unwrap_or_default()
        };
        let stdins: Vec<Vec<u8>> = hooks.iter().map(|h| stdin_for(h.format)).collect();
        let env = self.env_vars(event, call);
        let ran = join_all(hooks.iter().zip(&stdins).map(|(h, stdin)| {
            run::run(
                &h.command,
                &self.env.cwd,
                stdin,
                &env,
                &self.env.sandbox,
                h.timeout,
                cancel,
            )
        }))
        .await;
        for (hook, ran) in hooks.iter().zip(ran) {
            read_one(event, hook, ran, &mut verdict);
        }
        for n in &verdict.notices {
            crate::log::log(n);
        }
        verdict
    }

    fn env_vars<'a>(&self, event: Event, call: &HookCall<'_>) -> Vec<(&'a str, String)> {
        let field = |k: &str| {
            call.input
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let vars = vec![
            ("AGENT_HOOK_EVENT", event.name().to_string()),
            ("AGENT_TOOL_NAME", call.tool.to_string()),
            ("AGENT_TOOL_USE_ID", call.id.to_string()),
            (
                "AGENT_TOOL_INPUT",
                Value::Object(call.input.clone()).to_string(),
            ),
            ("AGENT_TOOL_INPUT_COMMAND", field("command")),
            ("AGENT_TOOL_INPUT_FILE_PATH", field("path")),
            ("AGENT_TOOL_INPUT_URL", field("url")),
            ("AGENT_SESSION_ID", self.env.session_id.clone()),
            ("AGENT_PROJECT_DIR", self.env.cwd.display().to_string()),
            // Scripts written for Claude Code find the project here.
            ("CLAUDE_PROJECT_DIR", self.env.cwd.display().to_string()),
        ];
        vars.into_iter()
            .filter(|(_, v)| v.len() <= ENV_VALUE_CAP)
            .collect()
    }
}

fn read_one(event: Event, hook: &Hook, ran: Ran, verdict: &mut Verdict) {
    let name = crate::text::cut_line(&hook.command, 60);
    let mut notice = |what: String| {
        verdict.notices.push(format!(
            "{} hook `{name}` {what}; the call went ahead as if it had not run",
            event.name()
        ));
    };
    match ran {
        Ran::Exited {
            code: Some(0),
            stdout,
            ..
        } => {
            let stdout = stdout.trim();
            if stdout.is_empty() {
                return;
            }
            match output::parse(stdout) {
                Ok(p) => {
                    if let Some(d) = p.decision {
                        verdict.decide(d, p.reason);
                    }
                    if p.halt.is_some() {
                        verdict.halt = p.halt;
                    }
                    if p.updated_input.is_some() {
                        verdict.updated_input = p.updated_input;
                        verdict.rewriter_allowed = p.decision == Some(Decision::Allow);
                    }
                    verdict
                        .context
                        .extend(p.context.filter(|c| !c.trim().is_empty()));
                    if let Some(m) = p.message {
                        verdict.notices.push(format!("hook `{name}`: {m}"));
                    }
                }
                Err(e) => notice(format!("failed: {e}")),
            }
        }
        Ran::Exited {
            code: Some(2),
            stderr,
            ..
        } => {
            let reason = stderr.trim();
            let reason = if reason.is_empty() {
                format!("hook `{name}` exited with 2 and gave no reason")
            } else {
                reason.to_string()
            };
            verdict.decide(Decision::Deny, Some(reason));
        }
        Ran::Exited { code, stderr, .. } => {
            let code = code.map_or("a signal".to_string(), |c| c.to_string());
            let err = stderr.trim();
            let tail = if err.is_empty() {
                String::new()
            } else {
                format!(": {}", crate::text::cut_line(err, 300))
            };
            notice(format!("failed (exit {code}){tail}"));
        }
        Ran::TimedOut => notice(format!(
            "did not finish within {} s and was stopped (raise its timeout_secs if it needs longer)",
            hook.timeout.as_secs()
        )),
        Ran::Cancelled => {}
        Ran::Failed(e) => notice(format!("could not run: {e}")),
    }
}

/// The call's arguments as hooks see them: `path` made absolute, and
/// mirrored as `file_path`, and Claude Code's other spellings added, for
/// scripts written for Claude Code.
pub fn hook_input(
    tool: &str,
    args: &Value,
    absolute: &dyn Fn(&str) -> PathBuf,
) -> Map<String, Value> {
    let mut input = args.as_object().cloned().unwrap_or_default();
    if let Some(Value::String(p)) = input.get("path") {
        let abs = absolute(p).display().to_string();
        input.insert("path".into(), Value::String(abs.clone()));
        input.insert("file_path".into(), Value::String(abs));
    }
    names::add_aliases(tool, &mut input);
    input
}

/// A hook's rewrite as arguments for the tool: `file_path` (Claude Code's
/// name) folded back into `path`, and its other spellings into ours.
pub fn rewritten_args(
    tool: &str,
    mut input: Map<String, Value>,
    before: &Map<String, Value>,
) -> Value {
    if let Some(fp) = input.remove("file_path")
        && (before.get("file_path") != Some(&fp) || !input.contains_key("path"))
    {
        input.insert("path".into(), fp);
    }
    names::fold_aliases(tool, &mut input, before);
    Value::Object(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn matchers() {
        let m = |t: &str, tool: &str| Matcher::parse(t).unwrap().matches(tool);
        assert!(m("", "bash") && m("*", "edit"));
        assert!(m("bash", "bash") && !m("bash", "bash2"));
        assert!(m("Bash", "bash"), "Claude Code's capitalised names match");
        assert!(m("edit|write", "write") && !m("edit|write", "view"));
        assert!(m("mcp_.*", "mcp_git_log"));
        assert!(Matcher::parse("(").is_err());
    }

    #[test]
    fn deny_over_ask_over_allow() {
        let mut v = Verdict::default();
        v.decide(Decision::Allow, Some("a".into()));
        v.decide(Decision::Ask, Some("b".into()));
        assert_eq!(v.decision, Some(Decision::Ask));
        v.decide(Decision::Allow, None);
        v.decide(Decision::Deny, Some("c".into()));
        v.decide(Decision::Deny, Some("d".into()));
        v.decide(Decision::Ask, Some("e".into()));
        assert_eq!(v.decision, Some(Decision::Deny));
        assert_eq!(v.reason(""), "c; d");
    }

    #[test]
    fn file_path_round_trip() {
        let args = json!({"path": "src/a.rs", "content": "x"});
        let input = hook_input("view", &args, &|p| Path::new("/w").join(p));
        assert_eq!(input["path"], "/w/src/a.rs");
        assert_eq!(input["file_path"], "/w/src/a.rs");
        // A Claude Code script changes file_path; it becomes path.
        let mut changed = input.clone();
        changed.insert("file_path".into(), json!("/w/b.rs"));
        assert_eq!(
            rewritten_args("view", changed, &input),
            json!({"path": "/w/b.rs", "content": "x"})
        );
        // Unchanged file_path is dropped; an edited path stays.
        let mut edited = input.clone();
        edited.insert("path".into(), json!("/w/c.rs"));
        assert_eq!(
            rewritten_args("view", edited, &input),
            json!({"path": "/w/c.rs", "content": "x"})
        );
    }
}
