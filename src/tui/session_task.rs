//! The task that owns the session: it runs one turn at a time as the UI
//! asks, handles the other [`Request`]s (clear, resume, compact, undo,
//! rewind, status, cost, models, diff, permissions, `!` commands) and
//! answers with [`UiEvent`]s.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::attach::{expand_mentions, run_own_command};
use super::replay::show_resumed;
use super::{Request, Start, TuiApprover, UiEvent};
use crate::agent::{Session, TurnError};
use crate::config::Config;
use crate::llm::Provider;
use crate::wiring::{Live, ModelFacts};

/// Owns the session: runs one turn at a time as the UI asks. Returns the
/// session's id when it has something saved.
pub(super) async fn agent_task(
    config: Config,
    provider: Arc<dyn Provider>,
    facts: ModelFacts,
    start: Start,
    ui: mpsc::UnboundedSender<UiEvent>,
    mut commands: mpsc::UnboundedReceiver<Request>,
) -> Option<String> {
    let root_cancel = CancellationToken::new();
    let approver = Arc::new(TuiApprover { tx: ui.clone() });
    let mut facts = facts;
    let mut provider = provider;
    // The reasoning effort `/model` chose; it stays across switches.
    let mut effort_now: Option<String> = None;
    let new_session = |provider: Arc<dyn Provider>,
                       facts: ModelFacts,
                       resume: Option<&crate::transcript::Loaded>| {
        crate::wiring::session(
            &config,
            provider,
            facts,
            approver.clone(),
            &root_cancel,
            resume,
        )
    };
    let mut live = new_session(provider.clone(), facts, start.resume.as_ref());
    let _ = ui.send(UiEvent::Session(live.session.id.clone()));
    if let Some(loaded) = &start.resume {
        show_resumed(&ui, &live.session, loaded);
    }
    if start.pick {
        let _ = ui.send(UiEvent::Picker(session_items(&config)));
    }
    let mut watching = watch(&live, &ui, &config.workspace);
    // Commands that arrived during a turn and wait for its end.
    let mut deferred: std::collections::VecDeque<Request> = std::collections::VecDeque::new();
    // Context the person gave for the next prompt (`!cmd` output).
    let mut pending: Vec<String> = Vec::new();
    loop {
        let cmd = match deferred.pop_front() {
            Some(c) => c,
            None => match commands.recv().await {
                Some(c) => c,
                None => break,
            },
        };
        match cmd {
            Request::Send(prompt) => {
                // What the person ran (`!cmd`) and the files they named
                // (`@path`) go with the prompt.
                let mut prompt = expand_mentions(&prompt, &config);
                if !pending.is_empty() {
                    prompt = format!("{}\n\n{prompt}", std::mem::take(&mut pending).join("\n\n"));
                }
                let turn = CancellationToken::new();
                let tx = ui.clone();
                let on_event = move |ev| {
                    let _ = tx.send(UiEvent::Agent(ev));
                };
                let surface = Arc::clone(live.session.surface());
                let result = {
                    let run = live.session.run_turn(&prompt, &on_event, &turn);
                    tokio::pin!(run);
                    // Interrupts arrive while the turn runs.
                    loop {
                        tokio::select! {
                            r = &mut run => break r,
                            c = commands.recv() => match c {
                                Some(Request::Interrupt) => turn.cancel(),
                                Some(Request::SetYolo(on)) => surface.gate().set_yolo(on),
                                Some(Request::Quit) | None => turn.cancel(),
                                Some(other) => deferred.push_back(other),
                            },
                        }
                    }
                };
                let _ = ui.send(UiEvent::Servers(live.server_status().await));
                let done = match result {
                    Ok(_) | Err(TurnError::Cancelled) => Ok(()),
                    Err(e) => Err(e.to_string()),
                };
                let _ = ui.send(UiEvent::TurnDone(done));
            }
            Request::Clear => {
                // The old session's MCP servers stop with it.
                watching.cancel();
                live = new_session(provider.clone(), facts, None);
                let _ = ui.send(UiEvent::Session(live.session.id.clone()));
                watching = watch(&live, &ui, &config.workspace);
            }
            Request::Resume(id) => {
                let found = crate::transcript::list::find(&config.paths.data_dir, &id)
                    .map_err(|e| e.to_string())
                    .and_then(|s| {
                        crate::transcript::store::load(&s.path).map_err(|e| e.to_string())
                    });
                match found {
                    Ok(loaded) => {
                        watching.cancel();
                        live = new_session(provider.clone(), facts, Some(&loaded));
                        let _ = ui.send(UiEvent::Reset);
                        let _ = ui.send(UiEvent::Session(live.session.id.clone()));
                        show_resumed(&ui, &live.session, &loaded);
                        watching = watch(&live, &ui, &config.workspace);
                    }
                    Err(e) => {
                        let _ = ui.send(UiEvent::Notice(format!("cannot resume: {e}"), true));
                    }
                }
            }
            Request::ListSessions => {
                let _ = ui.send(UiEvent::Picker(session_items(&config)));
            }
            Request::Compact(focus) => {
                let tx = ui.clone();
                let on_event = move |ev| {
                    let _ = tx.send(UiEvent::Agent(ev));
                };
                let turn = CancellationToken::new();
                let r = live
                    .session
                    .compact_now(focus.as_deref(), &on_event, &turn)
                    .await
                    .map_err(|e| e.to_string());
                let (tokens, window, known) = live.session.context();
                let _ = ui.send(UiEvent::Agent(crate::agent::AgentEvent::Context {
                    tokens,
                    window,
                    known,
                }));
                let _ = ui.send(UiEvent::TurnDone(r));
            }
            Request::Undo { redo, force } => {
                let (text, error) = undo(&config, &live.session, None, redo, force);
                // Files changed since: the person decides, with `y`.
                let _ = ui.send(if error && text.contains(CONFLICT) {
                    UiEvent::Confirm(text, Request::Undo { redo, force: true })
                } else {
                    UiEvent::Notice(text, error)
                });
            }
            Request::Rewind(None) => {
                let points = live.session.rewind_points();
                let text = if points.is_empty() {
                    "No turn to rewind to (turns before a compaction or a resume cannot be rewound).".to_string()
                } else {
                    let mut t =
                        String::from("Rewind with /rewind N [code|chat|both] (default both):\n");
                    for (n, prompt) in points {
                        t.push_str(&format!(
                            "  {n}  {}\n",
                            crate::transcript::list::title(&prompt)
                        ));
                    }
                    t
                };
                let _ = ui.send(UiEvent::Notice(text, false));
            }
            Request::Rewind(Some((n, what))) => {
                let mut notes = Vec::new();
                let mut failed = false;
                if what != "chat" {
                    let (text, err) = undo(&config, &live.session, Some(n), false, false);
                    failed = err;
                    notes.push(text);
                }
                if what != "code" && !failed {
                    match live.session.rewind(n) {
                        Some(prompt) => {
                            notes.push(format!("The conversation is back to before turn {n}; its prompt was:\n{prompt}"));
                        }
                        None => notes.push(format!(
                            "Turn {n} cannot be rewound to (/rewind lists the turns that can)."
                        )),
                    }
                }
                let _ = ui.send(UiEvent::Notice(notes.join("\n"), failed));
            }
            Request::Status => {
                let (p, m) = live.session.provider().describe();
                let (tokens, window, known) = live.session.context();
                let rules = config.rule_set();
                let files = crate::agent::instructions_files(
                    &config.workspace,
                    Some(&crate::wiring::global_instructions(&config)),
                    &|p| rules.denies_read(p),
                );
                let mut t = format!(
                    "session {}\nlog {}\nmodel {p} · {m}\ncontext ~{tokens} tokens{}\nturns {}, tool calls {}\ninstructions: {}",
                    live.session.id,
                    crate::transcript::log_path(&config.paths.data_dir, &live.session.id).display(),
                    if known {
                        format!(" of {window} ({}%)", tokens * 100 / window.max(1))
                    } else {
                        " (the model's window is not known: set `context_window` in [providers.<id>] to compact before it is full)".to_string()
                    },
                    live.session.turns(),
                    live.session.tool_calls(),
                    if files.is_empty() {
                        "none".to_string()
                    } else {
                        files
                            .iter()
                            .map(|(p, _)| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                );
                if let Some(e) = live.transcript_problem() {
                    t.push_str(&format!("\n{e}"));
                }
                let _ = ui.send(UiEvent::Notice(t, false));
            }
            Request::Cost => {
                let mut t = String::from("Cost of this session (sub-agents included):\n");
                for m in live.session.usage_by_model() {
                    let u = m.usage;
                    t.push_str(&format!(
                        "  {} · {}: {} in, {} out, {} cache read, {} cache write: {}\n",
                        m.provider,
                        m.model,
                        u.input_tokens,
                        u.output_tokens,
                        u.cache_read_tokens,
                        u.cache_write_tokens,
                        m.cost.map(|c| format!("${c:.4}")).unwrap_or_else(|| {
                            "price unknown (set input_price/output_price in [providers.<id>])"
                                .into()
                        })
                    ));
                }
                if let Some(c) = live.session.cost() {
                    t.push_str(&format!("  total: ${c:.4}"));
                }
                let _ = ui.send(UiEvent::Notice(t, false));
            }
            Request::SetYolo(on) => live.session.surface().gate().set_yolo(on),
            Request::ListModels => {
                let (_, now) = live.session.provider().describe();
                let now = now.to_string();
                let text = match live.session.provider().models().await {
                    Ok(list) if !list.is_empty() => format!(
                        "The model is {now}. {} offers: {}. Switch with /model NAME.",
                        live.session.provider().describe().0,
                        list.join(", ")
                    ),
                    Ok(_) | Err(_) => format!("The model is {now}; switch with /model NAME."),
                };
                let _ = ui.send(UiEvent::Notice(text, false));
            }
            Request::SetModel(model, effort) => {
                // A name the provider's list does not have is refused, with
                // the names nearest to it; no list, no check.
                let current = live.session.provider().describe().1 == model;
                if !current
                    && let Ok(list) = live.session.provider().models().await
                    && !list.is_empty()
                    && !list.contains(&model)
                {
                    let mut near: Vec<(f64, &String)> = list
                        .iter()
                        .map(|m| (strsim::jaro_winkler(m, &model), m))
                        .collect();
                    near.sort_by(|a, b| b.0.total_cmp(&a.0));
                    let near: Vec<&str> = near.iter().take(3).map(|(_, m)| m.as_str()).collect();
                    let _ = ui.send(UiEvent::Notice(
                        format!(
                            "{} has no model `{model}`; the nearest are: {}. /model lists them all.",
                            live.session.provider().describe().0,
                            near.join(", ")
                        ),
                        true,
                    ));
                    continue;
                }
                let mut overrides = crate::config::Overrides {
                    model: Some(model.clone()),
                    ..Default::default()
                };
                overrides.provider = Some(live.session.provider().describe().0.to_string());
                let switched = config
                    .with_overrides(overrides)
                    .resolve_provider(&|n| std::env::var(n).ok())
                    .map_err(|e| e.to_string())
                    .and_then(|mut p| {
                        if let Some(e) = effort.as_ref().or(effort_now.as_ref()) {
                            p.reasoning_effort = Some(e.clone());
                        }
                        crate::llm::connect(&p, &config.llm)
                            .map(|c| (c, p))
                            .map_err(|e| e.to_string())
                    });
                match switched {
                    Ok((c, p)) => {
                        let f = ModelFacts::of(&p);
                        // `/clear` and `/resume` go on with this model.
                        facts = f;
                        provider = Arc::clone(&c);
                        if effort.is_some() {
                            effort_now.clone_from(&effort);
                        }
                        live.session.set_provider(c, f.window, f.prices);
                        let _ = ui.send(UiEvent::Model(model, f.prices));
                        if let Some(e) = &effort {
                            let note = if p.kind == crate::llm::ProviderKind::OpenaiResponses {
                                format!("Reasoning effort: {e}.")
                            } else {
                                format!(
                                    "Reasoning effort {e} is sent only over the Responses API (kind = \"openai-responses\"); {} does not take it.",
                                    p.id
                                )
                            };
                            let _ = ui.send(UiEvent::Notice(note, false));
                        }
                    }
                    Err(e) => {
                        let _ = ui.send(UiEvent::Notice(
                            format!("cannot switch to model {model}: {e}"),
                            true,
                        ));
                    }
                }
            }
            Request::Diff => {
                let history = &live.session.surface().context().history;
                let text = match history.plan_since(1) {
                    Ok(Some(plan)) if !plan.files.is_empty() => plan
                        .files
                        .iter()
                        .map(|f| {
                            let shown = f
                                .path
                                .strip_prefix(&config.workspace)
                                .unwrap_or(&f.path)
                                .display()
                                .to_string();
                            f.net_diff(&shown)
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                    Ok(_) => "This session has changed no file (that undo could restore).".into(),
                    Err(e) => format!("cannot read the file history: {e}"),
                };
                let _ = ui.send(UiEvent::Notice(text, false));
            }
            Request::Permissions => {
                let _ = ui.send(UiEvent::Notice(
                    permissions_text(&config, &live.session),
                    false,
                ));
            }
            Request::Shell(cmd) => {
                let (shown, context) = run_own_command(&config.workspace, &cmd).await;
                let _ = ui.send(UiEvent::Notice(shown, false));
                pending.push(context);
            }
            Request::Interrupt | Request::Editor => {}
            Request::Quit => break,
        }
    }
    watching.cancel();
    live.shutdown().await;
    root_cancel.cancel();
    (!live.session.messages().is_empty()).then(|| live.session.id.clone())
}

/// `/permissions`: the rules in effect, where each came from, and what
/// this session's answers allowed.
fn permissions_text(config: &Config, session: &Session) -> String {
    let mut out = String::from("Rules in effect (deny wins over ask over allow):\n");
    if config.rules.is_empty() {
        out.push_str("  none: every side effect is asked about\n");
    }
    for crate::config::RuleEntry { list, text, source } in &config.rules {
        out.push_str(&format!("  {list:<5} {text}   ({})\n", source.display()));
    }
    let grants = session.surface().gate().session_grants();
    if grants.is_empty() {
        out.push_str("This session's grants: none.");
    } else {
        out.push_str("This session's grants (from `a` answers; they end with the session):\n");
        for g in grants {
            out.push_str(&format!("  {g}\n"));
        }
    }
    if config.yolo() {
        out.push_str("\n--yolo: calls no rule denies or asks about run without a question.");
    }
    out.trim_end().to_string()
}

/// Keeps the status line current while MCP servers start, fail or exit in
/// the background, and says which files changed outside the agent; cancel
/// the token when the session goes.
fn watch(
    live: &Live,
    ui: &mpsc::UnboundedSender<UiEvent>,
    root: &std::path::Path,
) -> CancellationToken {
    let stop = CancellationToken::new();
    if let Some(lsp) = &live.session.surface().context().lsp {
        let mut changes = lsp.external_changes.subscribe();
        let (tx, stop, root) = (ui.clone(), stop.clone(), root.to_path_buf());
        tokio::spawn(async move {
            loop {
                let paths = tokio::select! {
                    _ = stop.cancelled() => break,
                    r = changes.recv() => match r {
                        Ok(paths) => paths,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(_) => break,
                    },
                };
                let shown: Vec<String> = paths
                    .iter()
                    .take(5)
                    .map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string())
                    .collect();
                let more = if paths.len() > 5 {
                    format!(" and {} more", paths.len() - 5)
                } else {
                    String::new()
                };
                let notice = format!("changed outside the agent: {}{more}", shown.join(", "));
                if tx.send(UiEvent::Notice(notice, false)).is_err() {
                    break;
                }
            }
        });
    }
    if let Some(mcp) = live.mcp.clone() {
        let (tx, stop) = (ui.clone(), stop.clone());
        let lsp = live.session.surface().context().lsp.clone();
        tokio::spawn(async move {
            loop {
                let mut list = match &lsp {
                    Some(lsp) => lsp.status().await,
                    None => Vec::new(),
                };
                list.extend(mcp.status());
                let _ = tx.send(UiEvent::Servers(list));
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = mcp.changed() => {}
                }
            }
        });
    }
    stop
}

/// This project's sessions for the picker: (id, "time · turns · title").
fn session_items(config: &Config) -> Vec<(String, String)> {
    let root = crate::transcript::store::project_root(&config.workspace);
    crate::transcript::list::list(&config.paths.data_dir, Some(&root))
        .into_iter()
        .map(|s| {
            let when = time::OffsetDateTime::from_unix_timestamp(s.updated)
                .map(|t| {
                    format!(
                        "{:02}-{:02} {:02}:{:02}",
                        t.month() as u8,
                        t.day(),
                        t.hour(),
                        t.minute()
                    )
                })
                .unwrap_or_default();
            let label = format!(
                "{when}  {:>3} turns  {}  {}",
                s.turns,
                s.title,
                s.id.chars().take(8).collect::<String>()
            );
            (s.id, label)
        })
        .collect()
}

/// How an undo that stopped at files changed since says so.
const CONFLICT: &str = "Nothing was changed";

/// `/undo`, `/redo`, the code part of `/rewind`: the notice to show and
/// whether it is an error. Files changed since are never overwritten
/// without `force`.
fn undo(
    config: &Config,
    session: &Session,
    since: Option<u32>,
    redo: bool,
    force: bool,
) -> (String, bool) {
    let history = &session.surface().context().history;
    let what = if redo { "redo" } else { "undo" };
    let planned = match since {
        Some(turn) => history.plan_since(turn),
        None => history.plan(1, redo),
    };
    let plan = match planned {
        Ok(Some(p)) => p,
        Ok(None) => return (format!("Nothing to {what}."), false),
        Err(e) => return (format!("cannot read the file history: {e}"), true),
    };
    let mut text = crate::commands::describe(&plan, &config.workspace);
    let conflicts = plan.conflicts().count();
    if conflicts > 0 && !force {
        text.push_str(&format!(
            "{CONFLICT}: {conflicts} file(s) changed since the agent's change (diffs above). /{what} force overwrites them."
        ));
        return (text, true);
    }
    match history.apply(&plan, &config.workspace, force) {
        Ok(files) => {
            session.note_undo(
                plan.targets.first().map_or("", String::as_str),
                redo,
                &files,
            );
            text.push_str(&format!(
                "{} {} file(s); /{} reverses it.",
                if redo { "Redid" } else { "Undid" },
                files.len(),
                if redo { "undo" } else { "redo" }
            ));
            (text, false)
        }
        Err(e) => (format!("{text}{e}"), true),
    }
}
