//! Subcommands that run without a model: `agent sessions`,
//! `agent undo` / `agent redo` (sessions on disk, here), `agent mcp list`
//! and `agent permissions check|list`.

pub mod mcp;
pub mod permissions;

use std::path::Path;

use crate::config::Config;
use crate::tools::history::{FileHistory, Plan, UndoError};
use crate::transcript::{Entry, list, store};

/// `agent sessions [--all] [--json]`.
pub fn sessions(config: &Config, all: bool, json: bool) -> String {
    let root = store::project_root(&config.workspace);
    let list = list::list(&config.paths.data_dir, (!all).then_some(root.as_path()));
    if json {
        return format!(
            "{}\n",
            serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
        );
    }
    if list.is_empty() {
        return if all {
            "No sessions yet; `agent` starts one.\n".into()
        } else {
            format!(
                "No sessions in {} yet (`agent sessions --all` lists every project's).\n",
                root.display()
            )
        };
    }
    let mut out = String::new();
    for s in &list {
        let when = time::OffsetDateTime::from_unix_timestamp(s.updated)
            .map(|t| {
                format!(
                    "{:04}-{:02}-{:02} {:02}:{:02}",
                    t.year(),
                    t.month() as u8,
                    t.day(),
                    t.hour(),
                    t.minute()
                )
            })
            .unwrap_or_default();
        let turns = format!("{} turn{}", s.turns, if s.turns == 1 { "" } else { "s" });
        out.push_str(&format!("{}  {when}  {turns:>9}  {}", s.id, s.title));
        if all {
            out.push_str(&format!("  ({})", s.cwd.display()));
        }
        out.push('\n');
    }
    out.push_str("Continue one with `agent --resume ID` (a unique start of the id is enough), the newest with `agent -c`.\n");
    out
}

/// `agent undo` / `agent redo`: the text to print and the exit code.
pub fn undo(
    config: &Config,
    session: Option<&str>,
    turns: u32,
    redo: bool,
    dry_run: bool,
    force: bool,
) -> (String, u8) {
    let data = &config.paths.data_dir;
    let found = match session {
        Some(id) => list::find(data, id),
        None => list::latest(data, &store::project_root(&config.workspace)),
    };
    let summary = match found {
        Ok(s) => s,
        Err(e) => return (format!("agent: {e}\n"), 1),
    };
    let history = FileHistory::new(Some(data.join("history").join(&summary.id)));
    let what = if redo { "redo" } else { "undo" };
    let plan = match history.plan(turns, redo) {
        Ok(Some(p)) => p,
        Ok(None) => {
            return (
                format!(
                    "Nothing to {what} in session {}: {}.\n",
                    summary.id,
                    if redo {
                        "no undo stands to be undone"
                    } else {
                        "the agent changed no files in it that are not undone already"
                    }
                ),
                0,
            );
        }
        Err(e) => return (format!("agent: cannot read the file history: {e}\n"), 1),
    };
    let mut out = describe(&plan, &summary.cwd);
    let conflicts = plan.conflicts().count();
    if dry_run {
        out.push_str(&format!(
            "(dry run: nothing was changed; `agent {what}` does it)\n"
        ));
        return (out, 0);
    }
    if conflicts > 0 && !force {
        out.push_str(&format!(
            "agent: nothing was changed: {conflicts} file{} changed since the agent's change (diffs above). \
             `agent {what} --force` overwrites {}.\n",
            if conflicts == 1 { " was" } else { "s were" },
            if conflicts == 1 { "it" } else { "them" }
        ));
        return (out, 1);
    }
    match history.apply(&plan, &config.workspace, force) {
        Ok(files) => {
            let log = crate::transcript::SessionLog::reopen(summary.path.clone());
            log.append(&Entry::Undo {
                checkpoint: plan
                    .targets
                    .first()
                    .and_then(|t| t.rsplit('-').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0),
                redo,
                files: files.clone(),
            });
            log.flush();
            out.push_str(&format!(
                "{} {} file{}. `agent {}` reverses it.\n",
                if redo { "Redid" } else { "Undid" },
                files.len(),
                if files.len() == 1 { "" } else { "s" },
                if redo { "undo" } else { "redo" }
            ));
            (out, 0)
        }
        Err(UndoError::Conflicts(paths)) => {
            out.push_str(&format!(
                "agent: nothing was changed: changed since the plan was made: {}\n",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            (out, 1)
        }
        Err(e) => (format!("{out}agent: {e}\n"), 1),
    }
}

/// One line per file, and the diff of each conflict.
pub fn describe(plan: &Plan, cwd: &Path) -> String {
    let mut out = format!(
        "{} {}:\n",
        if plan.redo { "Redo of" } else { "Undo of" },
        plan.targets.join(", ")
    );
    for f in &plan.files {
        let shown = f.path.strip_prefix(cwd).unwrap_or(&f.path).display();
        match &f.conflict {
            None => out.push_str(&format!("  {:<8} {shown}\n", f.action())),
            Some(diff) => {
                out.push_str(&format!(
                    "  {:<8} {shown}  (changed since the agent's change)\n",
                    f.action()
                ));
                for line in diff.lines() {
                    out.push_str(&format!("      {line}\n"));
                }
            }
        }
    }
    if plan.files.is_empty() {
        out.push_str("  (every file already holds that content)\n");
    }
    out
}
