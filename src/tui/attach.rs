//! What the person adds to a prompt besides its text: the output of a
//! command they ran with `!`, and the files they named with `@path`.

use std::time::Duration;

use crate::config::Config;

/// Longest a command the person runs with `!` may take.
const OWN_COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// Output of such a command kept for the conversation.
const OWN_COMMAND_OUTPUT: usize = 30_000;

/// Runs a command the person typed (`!cmd`) in the project, as their own
/// shell would (it is theirs, not the model's: no question, no sandbox).
/// Returns what to show and what the model is told with the next prompt.
pub(super) async fn run_own_command(workspace: &std::path::Path, cmd: &str) -> (String, String) {
    let ran = tokio::time::timeout(
        OWN_COMMAND_TIMEOUT,
        tokio::process::Command::new("bash")
            .arg("-c")
            .arg(cmd)
            .current_dir(workspace)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await;
    let (output, status) = match ran {
        Ok(Ok(o)) => {
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            (text, o.status.to_string())
        }
        Ok(Err(e)) => (format!("could not run it: {e}"), "not run".to_string()),
        Err(_) => (
            String::new(),
            format!("stopped after {} s", OWN_COMMAND_TIMEOUT.as_secs()),
        ),
    };
    let output = crate::text::cut_line(output.trim_end(), OWN_COMMAND_OUTPUT);
    let shown = if output.is_empty() {
        format!("({status})")
    } else {
        format!("{output}\n({status})")
    };
    let context =
        format!("The person ran this command themselves ({status}):\n$ {cmd}\n```\n{output}\n```");
    (shown, context)
}

/// `@path` in a prompt: the current content of that file of the project is
/// attached. Files outside the project (a command file's text could name
/// one; the model can still ask to `view` it, through the gate), files the
/// read rules deny, directories and files over 256 KiB are not; the
/// mention stays as it was typed.
pub(super) fn expand_mentions(prompt: &str, config: &Config) -> String {
    const MAX: u64 = 256 * 1024;
    let rules = config.rule_set();
    let mut attached = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(name) = word.strip_prefix('@') else {
            continue;
        };
        let name = name.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
        if name.is_empty() {
            continue;
        }
        let path = config.workspace.join(name);
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        let fits = std::fs::metadata(&real).is_ok_and(|m| m.is_file() && m.len() <= MAX);
        if !fits
            || !real.starts_with(&config.workspace)
            || rules.denies_read(&real)
            || attached.iter().any(|(n, _)| n == name)
        {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(&real) {
            attached.push((name.to_string(), text));
        }
    }
    if attached.is_empty() {
        return prompt.to_string();
    }
    let mut out = prompt.to_string();
    for (name, text) in attached {
        out.push_str(&format!(
            "\n\n<file path=\"{name}\">\n{}\n</file>",
            text.trim_end()
        ));
    }
    out
}
