//! The binary's command line and configuration, from the outside.

use crate::support;

use support::mock_llm::{MockLlm, Reply, Step};
use support::project::{Project, Run};

fn run(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = p.command();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::of(cmd.output().unwrap())
}

#[test]
fn version_and_help() {
    let p = Project::new();
    let v = run(&p, &["--version"], &[]);
    assert_eq!(v.code, 0);
    assert_eq!(v.stdout, format!("agent {}\n", env!("CARGO_PKG_VERSION")));
    let h = run(&p, &["--help"], &[]);
    assert_eq!(h.code, 0);
    for flag in [
        "--print",
        "--output-format",
        "--provider",
        "--model",
        "--base-url",
        "--cwd",
    ] {
        assert!(h.stdout.contains(flag), "help lacks {flag}:\n{}", h.stdout);
    }
}

#[test]
fn no_provider_explains_how_to_configure_one() {
    let p = Project::new();
    let r = run(&p, &["-p", "hi"], &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("no LLM provider is configured"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("export ANTHROPIC_API_KEY=..."),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("export OPENAI_API_KEY=..."),
        "{}",
        r.stderr
    );
}

#[test]
fn provider_is_picked_by_which_key_is_present() {
    let p = Project::new();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("from deepseek"))]);
    // deepseek is an OpenAI-compatible built-in; only its key is set.
    let r = run(
        &p,
        &["--base-url", &mock.openai_base(), "-p", "hi"],
        &[("DEEPSEEK_API_KEY", "dk")],
    );
    assert_eq!(r.stdout, "from deepseek\n", "{}", r.stderr);
    let req = &mock.requests()[0];
    assert_eq!(req.header("authorization"), Some("Bearer dk"));
    assert_eq!(req.body["model"], "deepseek-chat");
}

#[test]
fn malformed_config_names_file_line_and_key() {
    let p = Project::new();
    p.user_config("[providers.mine]\nkind = \"openai\"\nmodel = 5\n");
    let r = run(&p, &["-p", "hi"], &[("OPENAI_API_KEY", "k")]);
    assert_eq!(r.code, 1);
    let file = p.home().join("config.toml");
    assert!(
        r.stderr
            .starts_with(&format!("agent: {}:3:", file.display())),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("providers.mine.model"), "{}", r.stderr);

    let p = Project::new();
    p.file(".agent/config.toml", "[llm]\nmax_retries = \"three\"\n");
    let r = run(&p, &["-p", "hi"], &[("OPENAI_API_KEY", "k")]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains(".agent/config.toml:2:"), "{}", r.stderr);
    assert!(r.stderr.contains("llm.max_retries"), "{}", r.stderr);
}

#[test]
fn layers_project_over_user_env_over_files_flags_over_env() {
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::text("1")),
        Step::Reply(Reply::text("2")),
        Step::Reply(Reply::text("3")),
    ]);
    let p = Project::new();
    p.user_config(&format!(
        "provider = \"mine\"\n[llm]\nretry_base_ms = 5\n[providers.mine]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"MINE_KEY\"\nmodel = \"user-model\"\nheaders = {{ x-team = \"blue\" }}\n",
        mock.openai_base()
    ));
    p.file(
        ".agent/config.toml",
        "[providers.mine]\nmodel = \"project-model\"\n",
    );
    let env = [("MINE_KEY", "mk")];
    assert_eq!(run(&p, &["-p", "a"], &env).stdout, "1\n");
    assert_eq!(
        run(
            &p,
            &["-p", "b"],
            &[("MINE_KEY", "mk"), ("AGENT_MODEL", "env-model")]
        )
        .stdout,
        "2\n"
    );
    assert_eq!(
        run(
            &p,
            &["-p", "c", "--model", "flag-model"],
            &[("MINE_KEY", "mk"), ("AGENT_MODEL", "env-model")]
        )
        .stdout,
        "3\n"
    );
    let models: Vec<String> = mock
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["project-model", "env-model", "flag-model"]);
    assert_eq!(mock.requests()[0].header("x-team"), Some("blue"));
    assert_eq!(
        mock.requests()[0].header("authorization"),
        Some("Bearer mk")
    );
}

#[test]
fn xdg_config_home_is_honoured_without_agent_home() {
    let p = Project::new();
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("agent")).unwrap();
    std::fs::write(
        xdg.path().join("agent/config.toml"),
        "provider = \"nope\"\n",
    )
    .unwrap();
    let mut cmd = p.command();
    cmd.env_remove("AGENT_HOME")
        .env("XDG_CONFIG_HOME", xdg.path())
        .args(["-p", "hi"]);
    let r = Run::of(cmd.output().unwrap());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("unknown provider `nope`"), "{}", r.stderr);
}

#[test]
fn missing_key_cwd_flag_and_empty_prompt() {
    let p = Project::new();
    let r = run(&p, &["--provider", "anthropic", "-p", "hi"], &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("export ANTHROPIC_API_KEY=<your key>"),
        "{}",
        r.stderr
    );

    let r = run(&p, &["-C", "/definitely/not/here", "-p", "hi"], &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("cannot use /definitely/not/here as the project directory"),
        "{}",
        r.stderr
    );

    let r = run(&p, &["-p", "  "], &[]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("the prompt is empty"), "{}", r.stderr);
}

#[test]
fn cwd_flag_sets_the_workspace() {
    let p = Project::new();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("only-here.txt"), "x").unwrap();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![support::mock_llm::call(
            "l",
            "ls",
            serde_json::json!({}),
        )])),
        Step::Reply(Reply::text("ok")),
    ]);
    let dir = other.path().to_str().unwrap();
    let r = run(
        &p,
        &[
            "-C",
            dir,
            "--provider",
            "openai",
            "--base-url",
            &mock.openai_base(),
            "-p",
            "ls",
        ],
        &[("OPENAI_API_KEY", "k")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listing = support::project::result_texts(&mock.requests()[1]);
    assert!(listing[0].contains("only-here.txt"), "{listing:?}");
}

#[test]
fn a_rule_naming_no_tool_is_a_located_error_and_claude_names_work() {
    let p = Project::new();
    p.user_config(
        "[permissions]\nallow = [\"Bash(ls:*)\"]\ndeny = [\"Read(~/.ssh/**)\", \"Bsh(rm:*)\"]\n",
    );
    let r = run(&p, &["permissions", "list"], &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let file = p.home().join("config.toml");
    assert!(
        r.stderr.contains(&file.display().to_string()),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("permissions.deny[1]"), "{}", r.stderr);
    assert!(
        r.stderr.contains("names no tool agent has (`Bsh`)"),
        "{}",
        r.stderr
    );

    p.user_config(
        "[permissions]\ndeny = [\"Read(~/.ssh/**)\", \"WebFetch(domain:Evil.Example.)\"]\n",
    );
    let check = |tool: &str, args: &str| {
        let r = run(&p, &["permissions", "check", "--json", tool, args], &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        serde_json::from_str::<serde_json::Value>(&r.stdout).unwrap()
    };
    let j = check("grep", r#"{"pattern": "x", "path": "~/.ssh/id_rsa"}"#);
    assert_eq!(j["decision"], "deny", "{j}");
    assert_eq!(j["rule"], "Read(~/.ssh/**)", "{j}");
    let j = check("bash", r#"{"command": "curl https://EVIL.example/x"}"#);
    assert_eq!(j["decision"], "deny", "{j}");
    // Not a panic (a byte slice inside a multi-byte character once was).
    let j = check("bash", r#"{"command": "chmod u€x f"}"#);
    assert_eq!(j["decision"], "ask", "{j}");
}

#[test]
fn permissions_check_reads_large_calls_from_standard_input() {
    let p = Project::new();
    let big = serde_json::json!({ "command": format!("echo {}", "a".repeat(300_000)) }).to_string();
    let mut cmd = p.command();
    cmd.args(["permissions", "check", "--json", "bash", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), big.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["decision"], "allow", "{j}");
}

/// `agent doctor` reports what it checked in the real sandbox just now.
#[test]
fn doctor_reports_what_the_sandbox_really_refused() {
    let p = Project::new();
    p.file(".git/hooks/keep", "");
    p.file(".git/config", "[core]\n");
    p.file(
        ".agent/config.toml",
        "[permissions]\nallow = [\"bash(make:*)\"]\n",
    );
    let r = run(&p, &["doctor"], &[("OPENAI_API_KEY", "sk-x")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = |what: &str| -> String {
        r.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(what))
            .unwrap_or_else(|| panic!("no `{what}` line in:\n{}", r.stdout))
            .to_string()
    };
    assert!(
        line("create a file in the project").ends_with(" allowed"),
        "{}",
        r.stdout
    );
    let sandboxed = agent::shell::Sandbox::supported();
    let contained = sandboxed && agent::shell::contain::namespaces_available();
    let hooks = line("create a hook in .git/hooks");
    let config = line("change .agent/config.toml");
    if contained {
        assert!(hooks.ends_with(" refused"), "{hooks}");
        assert!(config.ends_with(" refused"), "{config}");
        assert!(
            r.stdout.contains("user namespaces:  available"),
            "{}",
            r.stdout
        );
    }
    assert!(
        !r.stdout.contains("ALLOWED, though it should not be"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("project:          not trusted") && r.stdout.contains("allow rules (1)"),
        "{}",
        r.stdout
    );
    assert!(line("keys withheld:").contains("OPENAI_API_KEY"));
    assert_eq!(
        std::fs::read_to_string(p.root().join(".agent/config.toml")).unwrap(),
        "[permissions]\nallow = [\"bash(make:*)\"]\n",
        "the probes changed nothing"
    );
    assert!(!p.root().join(".git/hooks/.agent-doctor").exists());
}

#[test]
fn p_alone_takes_the_prompt_from_the_last_argument_as_claude_code_does() {
    let p = Project::new();
    let mock = MockLlm::start(vec![Step::Reply(Reply::text("answered"))]);
    let mut cmd = p.command();
    cmd.args([
        "--provider",
        "openai",
        "--base-url",
        &mock.openai_base(),
        "--model",
        "mock-1",
        "-p",
        "--output-format",
        "json",
        "the question",
    ])
    .env("OPENAI_API_KEY", "sk-test");
    let run = Run::of(cmd.output().unwrap());
    run.assert_ok();
    let v: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(v["result"], "answered");
    let sent = mock.requests()[0].body.to_string();
    assert!(sent.contains("the question"), "{sent}");
}
