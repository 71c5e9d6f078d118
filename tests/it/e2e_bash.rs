//! End-to-end: the `bash` tool through the real binary (`--yolo`, so no
//! questions) against the mock LLM: output capture, caps, timeouts that kill
//! grandchildren, background jobs, and the OS sandbox.

use crate::support;

use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{Project, Wire, result_texts, rounds};

/// Runs one tool call (then a final answer) and returns what the model got.
fn one_call(p: &Project, name: &str, args: serde_json::Value, extra: &[&str]) -> String {
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call("c", name, args)])),
        Step::Reply(Reply::text("ok")),
    ]);
    let mut flags = vec!["--yolo"];
    flags.extend(extra);
    p.run(&mock, Wire::OpenAi, "go", &flags).assert_ok();
    result_texts(&mock.requests()[1]).remove(0)
}

fn alive(pattern: &str) -> bool {
    std::process::Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .unwrap()
        .status
        .success()
}

/// Whether every process matching `pattern` is gone within 5 s (a session
/// that ended may still be reaping what it stopped).
fn gone_soon(pattern: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(pattern) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

#[test]
fn runs_in_the_workspace_with_exit_code_and_quiet_env() {
    let p = Project::new();
    p.file("a.txt", "x");
    let out = one_call(
        &p,
        "bash",
        json!({"command": "ls; echo err >&2; echo $PAGER $GIT_EDITOR $AGENT; exit 3"}),
        &[],
    );
    assert_eq!(out, "a.txt\nerr\ncat true 1\n[exit code 3]");
    let out = one_call(&p, "bash", json!({"command": "cat; echo done"}), &[]);
    assert_eq!(
        out, "done\n[exit code 0]",
        "stdin is /dev/null, so cat returns at once"
    );
}

#[test]
fn megabytes_of_output_do_not_deadlock_and_keep_head_and_tail() {
    let p = Project::new();
    let cmd = "head -c 5000000 /dev/zero | tr '\\0' 'x'; echo; echo THE-END";
    let out = one_call(&p, "bash", json!({"command": cmd}), &[]);
    assert!(out.starts_with(&"x".repeat(1000)), "{}", &out[..100]);
    assert!(out.contains("bytes of output cut]"), "no cut note");
    assert!(
        out.ends_with("THE-END\n[exit code 0]"),
        "{}",
        &out[out.len() - 100..]
    );
    assert!(out.len() < 31_000, "{} bytes reached the model", out.len());
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let p = Project::new();
    let marker = format!("{}", 100_000 + std::process::id() % 800_000);
    let cmd = format!("sleep {marker}.1 & sh -c 'sleep {marker}.2 & sleep {marker}.3'");
    let out = one_call(&p, "bash", json!({"command": cmd, "timeout_secs": 1}), &[]);
    assert!(
        out.contains("Timed out after 1 s: the command and everything it started were stopped"),
        "{out}"
    );
    assert!(
        gone_soon(&format!("sleep {marker}")),
        "a grandchild survived the timeout"
    );
}

#[test]
fn leftover_background_processes_are_stopped() {
    let p = Project::new();
    let marker = format!("{}", 200_000 + std::process::id() % 700_000);
    let out = one_call(
        &p,
        "bash",
        json!({"command": format!("sleep {marker} & echo started")}),
        &[],
    );
    assert!(out.starts_with("started\n[exit code 0]"), "{out}");
    assert!(out.contains("were stopped"), "{out}");
    assert!(!alive(&format!("sleep {marker}")));
}

#[test]
fn background_jobs_lifecycle() {
    let p = Project::new();
    let marker = format!("{}", 300_000 + std::process::id() % 600_000);
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![
            call(
                "a",
                "bash",
                json!({"command": "for i in 1 2 3; do echo tick$i; sleep 0.1; done", "run_in_background": true}),
            ),
            call(
                "b",
                "bash",
                json!({"command": format!("sleep {marker}"), "run_in_background": true}),
            ),
        ])),
        Step::Reply(Reply::tools(vec![call(
            "c",
            "job_output",
            json!({"id": 1, "wait": 10}),
        )])),
        Step::Reply(Reply::tools(vec![
            call("d", "job_kill", json!({"id": 2})),
            call("e", "job_output", json!({"id": 1})),
        ])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::Anthropic, "go", &["--yolo"]).assert_ok();
    let started = result_texts(&mock.requests()[1]);
    assert!(
        started[0].starts_with("Started in the background as job 1."),
        "{started:?}"
    );
    assert!(
        started[1].starts_with("Started in the background as job 2."),
        "{started:?}"
    );
    assert_eq!(
        result_texts(&mock.requests()[2]),
        vec!["Job 1 finished (exit code 0).\ntick1\ntick2\ntick3\n"]
    );
    let last = result_texts(&mock.requests()[3]);
    assert!(
        last[0].starts_with(&format!(
            "Job 2 (sleep {marker}): the command and everything it started were stopped."
        )),
        "{last:?}"
    );
    // job_output ran alongside job_kill, so job 2 may still be listed.
    assert!(last[1].starts_with("there is no job 1;"), "{last:?}");
    assert!(!alive(&format!("sleep {marker}")));
}

#[test]
fn jobs_end_with_the_session() {
    let p = Project::new();
    let marker = format!("{}", 400_000 + std::process::id() % 500_000);
    one_call(
        &p,
        "bash",
        json!({"command": format!("sleep {marker}"), "run_in_background": true}),
        &[],
    );
    assert!(
        gone_soon(&format!("sleep {marker}")),
        "a job outlived the session"
    );
}

#[test]
fn sandbox_refuses_writes_outside_and_says_so() {
    if !support::prerequisite(
        agent::shell::Sandbox::supported(),
        "this kernel has no Landlock",
    ) {
        return;
    }
    let p = Project::new();
    // A home outside every temp directory (the checkout may itself be in
    // /tmp), so `~` is not writable by the sandbox.
    let temps = [
        std::path::PathBuf::from("/tmp"),
        std::path::PathBuf::from("/var/tmp"),
        std::env::temp_dir(),
    ];
    let Some(home) = [
        std::env::var_os("HOME").map(std::path::PathBuf::from),
        Some("/root".into()),
        Some("/var/lib".into()),
        Some("/opt".into()),
    ]
    .into_iter()
    .flatten()
    .filter(|c| !temps.iter().any(|t| c.starts_with(t)))
    .find_map(|c| tempfile::tempdir_in(c).ok()) else {
        support::prerequisite(
            false,
            "there is no writable directory outside the temp directories",
        );
        return;
    };
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![
            call("a", "bash", json!({"command": "touch ~/x"})),
            call("b", "bash", json!({"command": "touch ./x && echo made"})),
        ])),
        Step::Reply(Reply::text("ok")),
    ]);
    let mut cmd = p.command_for(&mock, Wire::OpenAi, "go", &["--yolo"]);
    cmd.env("HOME", home.path());
    support::project::Run::of(cmd.output().unwrap()).assert_ok();
    let r = result_texts(&mock.requests()[1]);
    assert!(r[0].contains("Permission denied"), "{}", r[0]);
    assert!(
        r[0].contains("this looks like the OS sandbox refusing a write"),
        "{}",
        r[0]
    );
    assert!(!home.path().join("x").exists());
    assert_eq!(r[1], "made\n[exit code 0]");
    assert!(p.root().join("x").exists());
    // With the sandbox off, the same write goes through.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "a",
            "bash",
            json!({"command": "touch ~/x"}),
        )])),
        Step::Reply(Reply::text("ok")),
    ]);
    let mut cmd = p.command_for(&mock, Wire::OpenAi, "go", &["--yolo", "--sandbox", "off"]);
    cmd.env("HOME", home.path());
    support::project::Run::of(cmd.output().unwrap()).assert_ok();
    assert!(home.path().join("x").exists());
}

#[test]
fn headless_without_yolo_denies_and_explains() {
    let p = Project::new();
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![
            call("a", "bash", json!({"command": "git status"})),
            call("b", "bash", json!({"command": "touch made-it"})),
            call("c", "bash", json!({"command": "rm -rf ~"})),
            call("d", "bash", json!({"command": "sudo ls"})),
        ])),
        Step::Reply(Reply::text("ok")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &[]).assert_ok();
    let r = result_texts(&mock.requests()[1]);
    assert!(
        r[0].contains("[exit code"),
        "read-only runs without a question: {}",
        r[0]
    );
    assert!(
        r[1].starts_with(
            "This `bash` call needs the person's approval (low risk: creates files or directories)"
        ),
        "{}",
        r[1]
    );
    assert!(
        r[1].contains("add `bash(touch:*)` to [permissions] allow"),
        "{}",
        r[1]
    );
    assert!(!p.root().join("made-it").exists());
    assert!(
        r[2].contains("(high risk: recursive deletion of the home directory)"),
        "{}",
        r[2]
    );
    assert!(
        r[2].contains("High-risk calls always need a person"),
        "{}",
        r[2]
    );
    assert!(
        r[3].starts_with("`sudo` is banned (privilege escalation)"),
        "{}",
        r[3]
    );
}

#[test]
fn allow_rules_and_deny_rules_from_config() {
    let p = Project::new();
    p.file(
        ".agent/config.toml",
        "[permissions]\nallow = [\"bash(touch:*)\"]\ndeny = [\"bash(git push:*)\"]\n",
    );
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![
            call("a", "bash", json!({"command": "touch ok.txt"})),
            call("b", "bash", json!({"command": "git push"})),
        ])),
        Step::Reply(Reply::text("ok")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &["--yolo"]).assert_ok();
    let r = result_texts(&mock.requests()[1]);
    assert_eq!(r[0], "(no output)\n[exit code 0]");
    assert!(p.root().join("ok.txt").exists());
    assert!(
        r[1].starts_with("This `bash` call is denied by the rule `bash(git push:*)`"),
        "{}",
        r[1]
    );
}

#[test]
fn a_finished_job_does_not_leave_its_children_behind() {
    let p = Project::new();
    let marker = format!("{}", 500_000 + std::process::id() % 400_000);
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "a",
            "bash",
            json!({"command": format!("sleep {marker} & echo started"), "run_in_background": true}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "b",
            "job_output",
            json!({"id": 1, "wait": 5}),
        )])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &["--yolo"]).assert_ok();
    let out = result_texts(&mock.requests()[2]);
    assert!(
        out[0].starts_with("Job 1 finished (exit code 0).\nstarted"),
        "{out:?}"
    );
    assert!(
        !alive(&format!("sleep {marker}")),
        "the job's background child survived"
    );
}

/// `kill -9` of the agent takes its commands with it, background jobs and
/// what they started with `setsid` included.
#[test]
fn commands_die_with_the_agent_even_when_it_is_killed() {
    let p = Project::new();
    let base = 500_000 + std::process::id() % 400_000;
    let (job, escaped) = (format!("{base}.21"), format!("{base}.22"));
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "a",
            "bash",
            json!({"command": format!("setsid sleep {escaped} & sleep {job}"), "run_in_background": true}),
        )])),
        // The agent waits on the model while the job runs.
        Step::Stall(Reply::text("never")),
    ]);
    let mut agent = p
        .command_for(&mock, Wire::OpenAi, "go", &["--yolo"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !(alive(&format!("sleep {job}")) && alive(&format!("sleep {escaped}"))) {
        assert!(started.elapsed().as_secs() < 20, "the job never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    agent.kill().unwrap();
    agent.wait().unwrap();
    let killed = std::time::Instant::now();
    let contained = agent::shell::contain::namespaces_available();
    loop {
        let left =
            alive(&format!("sleep {job}")) || (contained && alive(&format!("sleep {escaped}")));
        if !left {
            break;
        }
        assert!(
            killed.elapsed().as_secs() < 3,
            "commands outlived the agent by 3 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_command_longer_than_the_kernel_takes_as_an_argument_still_runs() {
    let p = Project::new();
    // 300 KB in one command: over the 128 KiB the kernel allows one argument.
    let long = format!("printf %s '{}' | wc -c", "a".repeat(300_000));
    let (_mock, results) = rounds(
        &p,
        Wire::OpenAi,
        vec![("bash", json!({"command": long}))],
        &["--yolo"],
    );
    assert!(
        results[0].starts_with("300000"),
        "{}",
        &results[0][..results[0].len().min(300)]
    );
}
