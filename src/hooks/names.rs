//! How a hook sees a call, by its `format`: Claude Code's tool names and
//! input fields (the default: most hook scripts are written for it), or
//! agent's own names (`format = "agent"`, also `"crush"`, whose tools are
//! named like ours). Input fields are a union either way: a path is there
//! as `path` and as `file_path`, and Claude Code's other spellings are
//! added (`timeout` in milliseconds, `glob`, `-i`); a rewrite in either
//! spelling comes back as ours.

use serde::Deserialize;
use serde_json::{Map, Value};

/// Which tool names a hook sees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Claude Code's: `Bash`, `Read`, `Edit`...
    #[default]
    Claude,
    /// agent's own: `bash`, `view`, `edit`...
    Agent,
    /// Crush's, which are agent's.
    Crush,
}

/// agent's tool name → Claude Code's.
const CLAUDE: &[(&str, &str)] = &[
    ("bash", "Bash"),
    ("view", "Read"),
    ("edit", "Edit"),
    ("multiedit", "MultiEdit"),
    ("write", "Write"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("ls", "LS"),
    ("fetch", "WebFetch"),
    ("agent", "Task"),
    ("todos", "TodoWrite"),
];

/// Claude Code's name for one of our tools, if it has one.
pub fn claude_name(tool: &str) -> Option<&'static str> {
    CLAUDE
        .iter()
        .find(|(ours, _)| *ours == tool)
        .map(|(_, cc)| *cc)
}

/// The name a hook of `format` sees.
pub fn name_for(format: Format, tool: &str) -> &str {
    match format {
        Format::Claude => claude_name(tool).unwrap_or(tool),
        Format::Agent | Format::Crush => tool,
    }
}

/// The names a matcher is tried against: ours and Claude Code's.
pub fn spellings(tool: &str) -> impl Iterator<Item = &str> {
    std::iter::once(tool).chain(claude_name(tool))
}

/// Claude Code's spellings of fields, added next to ours.
pub fn add_aliases(tool: &str, input: &mut Map<String, Value>) {
    let mut alias = |ours: &str, theirs: &str, convert: &dyn Fn(&Value) -> Option<Value>| {
        if let Some(v) = input.get(ours).and_then(convert)
            && !input.contains_key(theirs)
        {
            input.insert(theirs.to_string(), v);
        }
    };
    match tool {
        "bash" => alias("timeout_secs", "timeout", &|v| {
            v.as_u64().map(|s| Value::from(s.saturating_mul(1000)))
        }),
        "grep" => {
            alias("include", "glob", &|v| Some(v.clone()));
            alias("ignore_case", "-i", &|v| Some(v.clone()));
        }
        "todos" => alias("items", "todos", &|v| Some(v.clone())),
        _ => {}
    }
}

/// A hook's rewrite with Claude Code's spellings folded back into ours
/// (where the hook changed them; an untouched alias is dropped).
pub fn fold_aliases(tool: &str, input: &mut Map<String, Value>, before: &Map<String, Value>) {
    let mut fold = |theirs: &str, ours: &str, convert: &dyn Fn(&Value) -> Option<Value>| {
        if let Some(v) = input.remove(theirs)
            && (before.get(theirs) != Some(&v) || !input.contains_key(ours))
            && let Some(v) = convert(&v)
        {
            input.insert(ours.to_string(), v);
        }
    };
    match tool {
        "bash" => fold("timeout", "timeout_secs", &|v| {
            v.as_u64().map(|ms| Value::from(ms.div_ceil(1000)))
        }),
        "grep" => {
            fold("glob", "include", &|v| Some(v.clone()));
            fold("-i", "ignore_case", &|v| Some(v.clone()));
        }
        "todos" => fold("todos", "items", &|v| Some(v.clone())),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_spellings_go_out_and_come_back() {
        let mut input = json!({"command": "ls", "timeout_secs": 5})
            .as_object()
            .cloned()
            .unwrap();
        add_aliases("bash", &mut input);
        assert_eq!(input["timeout"], 5000);
        let before = input.clone();
        // Untouched: the alias goes, ours stays.
        let mut same = before.clone();
        fold_aliases("bash", &mut same, &before);
        assert_eq!(
            Value::Object(same),
            json!({"command": "ls", "timeout_secs": 5})
        );
        // Changed by the hook: it wins, in our unit.
        let mut changed = before.clone();
        changed.insert("timeout".into(), json!(90_500));
        fold_aliases("bash", &mut changed, &before);
        assert_eq!(changed["timeout_secs"], 91);
        assert_eq!(name_for(Format::Claude, "view"), "Read");
        assert_eq!(name_for(Format::Agent, "view"), "view");
        assert_eq!(name_for(Format::Claude, "diagnostics"), "diagnostics");
        assert_eq!(spellings("view").collect::<Vec<_>>(), ["view", "Read"]);
    }
}
