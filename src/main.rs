//! The `agent` binary: parse arguments, load configuration, pick the front end.

// A front end: it owns standard output and error.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;

use agent::cli::{Cli, McpAction, PermissionsAction, Subcommand};
use agent::config::{Config, Overrides, Paths};
use agent::permission::RuleList;
use agent::{headless, llm};

fn main() -> ExitCode {
    // The agent's memory and environment hold the provider keys: other
    // processes of the person's (a hook, a command outside the sandbox)
    // may not read them through /proc/<pid>/environ or mem, nor ptrace it.
    // SAFETY: prctl on this process; children's execve resets the flag.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0) };
    let cli = Cli::parse();
    // One thread drives the session: the work is I/O-bound, and tools do their
    // file-system work on the blocking pool, so parallel calls still overlap.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("agent: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match runtime.block_on(run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("agent: {e:#}");
            ExitCode::FAILURE
        }
    };
    // Blocking work still running (a tool's file walk) does not hold the exit.
    runtime.shutdown_background();
    code
}

async fn run(cli: Cli) -> anyhow::Result<u8> {
    let prompt = if cli.command.is_some() {
        None
    } else {
        read_prompt(&cli)?
    };
    let cwd = match &cli.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot determine the current directory")?,
    };
    let flags = Overrides {
        provider: cli.provider.clone(),
        model: cli.model.clone(),
        base_url: cli.base_url.clone(),
        max_steps: cli.max_steps,
        yolo: cli.yolo
            || cli.permission_mode == Some(agent::cli::PermissionMode::BypassPermissions),
        sandbox: cli.sandbox,
    };
    let overrides = flags.over(Overrides::from_env()?);
    let mut config = Config::load(Paths::from_env()?, &cwd, overrides)?;
    config.add_flag_rules(RuleList::Allow, &cli.allowed_tools, "--allowedTools")?;
    config.add_flag_rules(RuleList::Deny, &cli.disallowed_tools, "--disallowedTools")?;
    if let Some(mode) = cli.permission_mode {
        let (allow, deny) = mode.rules();
        let owned = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        config.add_flag_rules(RuleList::Allow, &owned(allow), "--permission-mode")?;
        config.add_flag_rules(RuleList::Deny, &owned(deny), "--permission-mode")?;
    }
    config.append_system_prompt = cli.append_system_prompt.clone();
    agent::log::set_log_dir(&config.paths.data_dir);
    agent::tools::Journal::set_dir(config.paths.data_dir.join("writes"));
    let grant = matches!(cli.command, Some(Subcommand::Trust { yes: true, .. }));
    if (cli.trust_project || grant)
        && let Err(e) = config.trust_project()
    {
        eprintln!(
            "agent: warning: trusting the project for this run only; could not record it under {}: {e}",
            config.paths.data_dir.display()
        );
    }
    if let Some(Subcommand::Trust { revoke, .. }) = &cli.command {
        if *revoke {
            let had = agent::config::trust::revoke(&config.paths.data_dir, &config.workspace)
                .with_context(|| {
                    format!(
                        "could not update the trust record under {}",
                        config.paths.data_dir.display()
                    )
                })?;
            print_out(&if had {
                format!("agent no longer trusts {}.\n", config.workspace.display())
            } else {
                format!("{} was not trusted.\n", config.workspace.display())
            });
            return Ok(0);
        }
        print_out(&agent::config::trust::report(&config));
        return Ok(0);
    }
    if let Some(Subcommand::Permissions { action }) = &cli.command {
        return match action {
            PermissionsAction::Check { json, tool, args } => {
                let args = if args == "-" {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(
                        |e| {
                            anyhow::anyhow!("could not read the arguments from standard input: {e}")
                        },
                    )?;
                    text
                } else {
                    args.clone()
                };
                let out = agent::commands::permissions::check(&config, tool, &args, *json)
                    .map_err(anyhow::Error::msg)?;
                print_out(&format!("{}\n", out.trim_end()));
                Ok(0)
            }
            PermissionsAction::List => {
                print_out(&agent::commands::permissions::list(&config));
                Ok(0)
            }
        };
    }
    match &cli.command {
        Some(Subcommand::Sessions { all, json }) => {
            print_out(&agent::commands::sessions(&config, *all, *json));
            return Ok(0);
        }
        Some(Subcommand::Undo {
            session,
            turns,
            dry_run,
            force,
        }) => {
            let (out, code) =
                agent::commands::undo(&config, session.as_deref(), *turns, false, *dry_run, *force);
            print_out(&out);
            return Ok(code);
        }
        Some(Subcommand::Redo {
            session,
            dry_run,
            force,
        }) => {
            let (out, code) =
                agent::commands::undo(&config, session.as_deref(), 1, true, *dry_run, *force);
            print_out(&out);
            return Ok(code);
        }
        _ => {}
    }
    if let Some(Subcommand::Doctor) = &cli.command {
        print_out(&agent::doctor::report(&config).await);
        return Ok(0);
    }
    if let Some(Subcommand::Mcp {
        action: McpAction::List,
    }) = &cli.command
    {
        print_out(&agent::commands::mcp::list(&config).await);
        return Ok(0);
    }
    let cleaned = clean_interrupted_writes(&config);
    let Some(prompt) = prompt else {
        if !config.project_trusted {
            ask_trust(&mut config)?;
        } else {
            for note in config.ignored_notes() {
                eprintln!("agent: {note}");
            }
        }
        let resolved = config.resolve_provider(&|name| std::env::var(name).ok())?;
        let provider = llm::connect(&resolved, &config.llm)?;
        // `--resume` without an id: the interface offers the list.
        let pick = cli.resume.as_deref() == Some("");
        let resume = if pick {
            None
        } else {
            continuing(&config, cli.continue_last, cli.resume.as_deref())?
        };
        let code = agent::tui::run(
            &config,
            provider,
            agent::wiring::ModelFacts::of(&resolved),
            agent::tui::Start {
                first: cli.initial.clone(),
                resume,
                pick,
            },
        )
        .await;
        // Quitting does not wait for the scan (long done, or harmless to end).
        drop(cleaned);
        return code;
    };
    for note in config.ignored_notes() {
        eprintln!("agent: {note}");
    }
    if cli.resume.as_deref() == Some("") {
        bail!(
            "--resume needs a session id in a headless run (`agent sessions` lists them), or use --continue for the newest"
        );
    }
    let resume = continuing(&config, cli.continue_last, cli.resume.as_deref())?;
    let resolved = config.resolve_provider(&|name| std::env::var(name).ok())?;
    let provider = llm::connect(&resolved, &config.llm)?;
    let code = headless::run(
        &config,
        provider,
        agent::wiring::ModelFacts::of(&resolved),
        &prompt,
        headless::Io {
            output: cli.output_format,
            partial: cli.include_partial_messages,
            input: cli.input_format,
        },
        resume,
    )
    .await;
    let _ = cleaned.recv_timeout(CLEAN_WAIT);
    Ok(code)
}

/// Longest a finished run waits for the project's scan for temp files.
const CLEAN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Writes a crash interrupted leave temporary files: those the journal
/// names are removed now; the project is also searched by name (for a
/// journal kept in another data directory), in the background so a large
/// tree does not delay the start. The receiver hears when that is done.
fn clean_interrupted_writes(config: &Config) -> std::sync::mpsc::Receiver<()> {
    let removed = agent::tools::Journal::clean(&config.paths.data_dir.join("writes"));
    if removed > 0 {
        agent::log::log(&format!(
            "removed {removed} temporary file(s) of writes an earlier run did not finish"
        ));
    }
    let (done, cleaned) = std::sync::mpsc::channel();
    let root = config.workspace.clone();
    std::thread::spawn(move || {
        let removed = agent::tools::clean_project(&root);
        if removed > 0 {
            agent::log::log(&format!(
                "removed {removed} temporary file(s) of interrupted writes in {}",
                root.display()
            ));
        }
        let _ = done.send(());
    });
    cleaned
}

/// Before the full-screen UI opens, in a project the person has not trusted
/// (or whose settings changed since): say what trusting it does, once.
fn ask_trust(config: &mut Config) -> anyhow::Result<()> {
    let mut text = agent::config::trust::question(config);
    text.push_str("Trust this project? Only say yes if you trust where it came from. [y/N] ");
    eprint!("{text}");
    let mut answer = String::new();
    if !std::io::stdin().is_terminal() {
        eprintln!();
    } else {
        std::io::stdin()
            .read_line(&mut answer)
            .context("cannot read the answer from the terminal")?;
    }
    if matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
        if let Err(e) = config.trust_project() {
            eprintln!("agent: warning: trusted for this run only; could not record it: {e}");
        }
    } else {
        eprintln!(
            "agent: not trusted: language servers stay off and the project's own settings are ignored (`agent trust --yes` changes that)."
        );
    }
    Ok(())
}

/// The session `--continue` / `--resume ID` names, read back; what the
/// person should know about it goes to stderr.
fn continuing(
    config: &Config,
    continue_last: bool,
    resume: Option<&str>,
) -> anyhow::Result<Option<agent::transcript::Loaded>> {
    match agent::wiring::find_session(config, continue_last, resume) {
        Ok(Some((loaded, notes))) => {
            for n in notes {
                eprintln!("agent: {n}");
            }
            Ok(Some(loaded))
        }
        Ok(None) => Ok(None),
        Err(e) => bail!("{e}"),
    }
}

/// Prints to stdout; a closed pipe (`| head`) is not an error worth a panic.
fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// The prompt from `-p`, `-p -` (stdin) or piped stdin; `None` means interactive.
fn read_prompt(cli: &Cli) -> anyhow::Result<Option<String>> {
    // The prompts are the user messages on stdin, read turn by turn.
    if cli.input_format == agent::cli::InputFormat::StreamJson {
        if cli.prompt.is_none() {
            bail!("--input-format stream-json is for a headless run: add -p");
        }
        return Ok(Some(String::new()));
    }
    let from_stdin = match cli.prompt.as_deref() {
        Some("-") => true,
        // `-p` alone: the prompt is the positional argument, or stdin.
        Some("") => match &cli.initial {
            Some(p) => return with_piped_input(non_empty(p.clone())?).map(Some),
            None => true,
        },
        Some(p) => return with_piped_input(non_empty(p.to_string())?).map(Some),
        None => cli.initial.is_none() && !std::io::stdin().is_terminal(),
    };
    if !from_stdin {
        return Ok(None);
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("cannot read the prompt from standard input")?;
    non_empty(text).map(Some)
}

/// Piped input goes before the prompt, as context (Claude Code's
/// `cat log | claude -p "explain"`); a terminal is not read.
fn with_piped_input(prompt: String) -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        return Ok(prompt);
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_PIPED + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the input piped to agent")?;
    if bytes.len() as u64 > MAX_PIPED {
        bail!(
            "the input piped to agent is over {} MiB; pass a smaller part, or name the file in the prompt so the agent reads what it needs",
            MAX_PIPED >> 20
        );
    }
    let text = String::from_utf8_lossy(&bytes);
    if text.trim().is_empty() {
        return Ok(prompt);
    }
    Ok(format!("{}\n\n{prompt}", text.trim_end()))
}

/// Piped input larger than this is refused (it would fill the context).
const MAX_PIPED: u64 = 8 << 20;

fn non_empty(p: String) -> anyhow::Result<String> {
    if p.trim().is_empty() {
        bail!(
            "the prompt is empty; give the task as `agent -p \"<your task>\"` or on standard input"
        );
    }
    Ok(p)
}
