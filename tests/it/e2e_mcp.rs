//! MCP servers through the real binary, against the small stdio server of
//! examples/mcp_server.rs (rmcp's server side): tools offered with the
//! server's schema and instructions, read-only tools run without asking,
//! others go through the gate, a crash is reported and the server restarted,
//! timeouts and Ctrl-C abort a call, `agent mcp list`, a project's config
//! never starts a server, and the same server over streamable HTTP.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Recorded, Reply, Step, call};
use support::project::{BOTH, FAST_LLM, Project, Wire, rounds, sent_results};

/// The test server, built by `cargo test` as an example next to the tests
/// (`cargo test --test e2e_mcp` alone does not rebuild it).
fn server_exe() -> PathBuf {
    support::example_exe("mcp_server")
}

/// `[mcp.<name>]` for the test server, with its notes and pid files in
/// the agent's home.
fn server_entry(p: &Project, name: &str, extra_env: &str, extra: &str) -> String {
    format!(
        "[mcp.{name}]\ncommand = \"{}\"\nenv = {{ MCP_NOTES = \"{}\", MCP_SERVER_PIDS = \"{}\"{extra_env} }}\n{extra}",
        server_exe().display(),
        notes(p).display(),
        pids_file(p).display(),
    )
}

fn with_server(extra_env: &str, extra: &str) -> Project {
    let p = Project::new();
    p.user_config(&format!(
        "{FAST_LLM}{}",
        server_entry(&p, "test", extra_env, extra)
    ));
    p
}

fn notes(p: &Project) -> PathBuf {
    p.home().join("notes.txt")
}

fn pids_file(p: &Project) -> PathBuf {
    p.home().join("pids.txt")
}

/// Process ids of every start of the server.
fn pids(p: &Project) -> Vec<i32> {
    std::fs::read_to_string(pids_file(p))
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Tool names and the system prompt of a recorded request, either wire.
fn tools_and_system(r: &Recorded) -> (Vec<(String, Value, String)>, String) {
    let b = &r.body;
    let tools = b["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let f = if t["function"].is_object() {
                &t["function"]
            } else {
                t
            };
            let schema = if f["parameters"].is_object() {
                f["parameters"].clone()
            } else {
                f["input_schema"].clone()
            };
            (
                f["name"].as_str().unwrap().to_string(),
                schema,
                f["description"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let system = if r.path.ends_with("/chat/completions") {
        b["messages"][0]["content"].as_str().unwrap().to_string()
    } else {
        b["system"][0]["text"].as_str().unwrap().to_string()
    };
    (tools, system)
}

#[test]
fn tools_schema_instructions_and_read_only_calls() {
    for wire in BOTH {
        let p = with_server("", "");
        // Headless without --yolo: read-only tools need nobody.
        let (mock, r) = rounds(
            &p,
            wire,
            vec![
                ("mcp_test_echo", json!({"text": "hi"})),
                ("mcp_test_picture", json!({})),
                ("mcp_test_fail", json!({})),
            ],
            &[],
        );
        assert_eq!(r[0], "echo: hi");
        assert_eq!(r[1], "a red dot\n[image: image/png, 8 bytes]");
        assert_eq!(r[2], "the fail tool failed, as it always does");
        if wire == Wire::Anthropic {
            assert!(sent_results(&mock.requests()[3])[0].is_error);
        }
        // Once the server is ready its tools are offered, with its schema
        // and description, and its instructions are in the system prompt.
        let (tools, system) = tools_and_system(&mock.requests()[1]);
        let echo = tools.iter().find(|t| t.0 == "mcp_test_echo").unwrap();
        assert_eq!(
            echo.1,
            json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "What to echo."}},
                "required": ["text"]
            })
        );
        assert_eq!(echo.2, "Returns the text it is given.");
        let mcp: Vec<&str> = tools
            .iter()
            .map(|t| t.0.as_str())
            .filter(|n| n.starts_with("mcp_"))
            .collect();
        assert_eq!(
            mcp,
            [
                "mcp_test_add_note",
                "mcp_test_crash",
                "mcp_test_echo",
                "mcp_test_fail",
                "mcp_test_picture",
                "mcp_test_sleep",
                "mcp_test_whoami"
            ]
        );
        assert!(
            system.ends_with(
                "# MCP server `test`\n\nIts tools are the ones named `mcp_test_…`. What the server says about using them:\n\n\
                 Use echo to repeat text back. Notes added with add_note are kept in the notes file."
            ),
            "{system}"
        );
        // One start, and nothing left running once the agent exited.
        let started = pids(&p);
        assert_eq!(started.len(), 1);
        assert!(!alive(started[0]), "the server outlived the agent");
    }
}

#[test]
fn a_tool_that_writes_goes_through_the_gate() {
    let p = with_server("", "");
    let note = |text: &str| vec![("mcp_test_add_note", json!({ "text": text }))];
    // Headless without --yolo: refused, with what the person can do.
    let (_, r) = rounds(&p, Wire::OpenAi, note("first"), &[]);
    assert!(
        r[0].starts_with(
            "This `mcp_test_add_note` call needs the person's approval (medium risk: the MCP server `test` says it may change or delete data), and this run cannot ask: it is headless (-p) without --yolo."
        ),
        "{}",
        r[0]
    );
    assert!(
        r[0].contains("add `mcp_test_add_note` to [permissions] allow"),
        "{}",
        r[0]
    );
    assert!(!notes(&p).exists(), "the refused call reached the server");

    // An allow rule for that tool lets it through, once the project that
    // says so is trusted.
    p.file(
        ".agent/config.toml",
        "[permissions]\nallow = [\"mcp_test_add_note\"]\n",
    );
    let (_, r) = rounds(&p, Wire::OpenAi, note("first"), &[]);
    assert!(r[0].contains("needs the person's approval"), "{}", r[0]);
    assert!(
        !notes(&p).exists(),
        "an untrusted project's rule was applied"
    );
    let (_, r) = rounds(&p, Wire::OpenAi, note("first"), &["--trust-project"]);
    assert_eq!(r[0], "noted");
    assert_eq!(std::fs::read_to_string(notes(&p)).unwrap(), "first\n");

    // So does --yolo, without the rule.
    p.file(".agent/config.toml", "");
    let (_, r) = rounds(&p, Wire::OpenAi, note("second"), &["--yolo"]);
    assert_eq!(r[0], "noted");
    assert_eq!(
        std::fs::read_to_string(notes(&p)).unwrap(),
        "first\nsecond\n"
    );
}

#[test]
fn a_crash_is_reported_and_the_next_call_restarts_the_server() {
    let p = with_server("", "");
    let (_, r) = rounds(
        &p,
        Wire::OpenAi,
        vec![
            ("mcp_test_crash", json!({})),
            ("mcp_test_echo", json!({"text": "again"})),
        ],
        &["--yolo"],
    );
    let log = p.home().join("data/mcp-test.log");
    assert_eq!(
        r[0],
        format!(
            "The MCP server `test` stopped while running `crash`: it exited (exit code 3). The end of its stderr ({}):\n  test server ready\n  about to crash on purpose\n\
             It will be restarted on the next call to one of its tools. Do not repeat this call unchanged unless you expect a different outcome.",
            log.display()
        )
    );
    assert_eq!(r[1], "echo: again");
    let started = pids(&p);
    assert_eq!(started.len(), 2, "restarted once");
    assert!(started.iter().all(|pid| !alive(*pid)));
}

#[test]
fn a_slow_server_does_not_delay_the_first_prompt() {
    let p = with_server(", MCP_SERVER_DELAY_MS = \"1500\"", "");
    // The model calls the tool before it was offered: the call waits for
    // the server instead of failing.
    let (mock, r) = rounds(
        &p,
        Wire::OpenAi,
        vec![("mcp_test_echo", json!({"text": "late"}))],
        &[],
    );
    assert_eq!(r[0], "echo: late");
    let names = |i: usize| -> Vec<String> {
        tools_and_system(&mock.requests()[i])
            .0
            .into_iter()
            .map(|t| t.0)
            .collect()
    };
    assert!(
        !names(0).iter().any(|n| n.starts_with("mcp_")),
        "the first request waited for the server"
    );
    assert!(names(1).contains(&"mcp_test_echo".to_string()));
    assert!(
        !tools_and_system(&mock.requests()[0])
            .1
            .contains("MCP server")
    );
    assert!(
        tools_and_system(&mock.requests()[1])
            .1
            .contains("# MCP server `test`")
    );
}

#[test]
fn a_call_over_its_timeout_is_abandoned() {
    let p = with_server("", "tool_timeout_secs = 0.5\n");
    let (_, r) = rounds(
        &p,
        Wire::OpenAi,
        vec![
            ("mcp_test_sleep", json!({"secs": 30})),
            ("mcp_test_echo", json!({"text": "still here"})),
        ],
        &[],
    );
    assert_eq!(
        r[0],
        "`sleep` on the MCP server `test` did not finish within 0.5 s (tool_timeout_secs) and was cancelled. \
         Try a smaller request, or finish without it; the person can raise [mcp.test] tool_timeout_secs."
    );
    assert_eq!(r[1], "echo: still here", "the server keeps serving");
}

#[test]
fn ctrl_c_aborts_a_call_and_stops_the_server() {
    let p = with_server("", "");
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "c0",
            "mcp_test_sleep",
            json!({"secs": 600}),
        )])),
        Step::Reply(Reply::text("never")),
    ]);
    let child = p
        .command_for(&mock, Wire::OpenAi, "go", &[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the server is running the call.
    let log = p.home().join("data/mcp-test.log");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("sleeping 600 s")
    {
        assert!(
            Instant::now() < deadline,
            "the call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = support::project::Run::of(child.wait_with_output().unwrap());
    assert_eq!(run.code, 130, "{}", run.stderr);
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?}",
        sent.elapsed()
    );
    assert!(pids(&p).iter().all(|pid| !alive(*pid)), "orphaned server");
}

#[test]
fn mcp_list_shows_states_and_tools() {
    let p = Project::new();
    p.user_config(&format!(
        "{}[mcp.broken]\ncommand = \"/nonexistent/mcp-server\"\n[mcp.dies]\ncommand = \"sh\"\nargs = [\"-c\", \"echo no config here >&2; exit 2\"]\n[mcp.off]\ncommand = \"whatever\"\nenabled = false\n",
        server_entry(&p, "test", "", "disabled_tools = [\"crash\"]\n")
    ));
    p.file(
        ".agent/config.toml",
        &format!("[mcp.cloned]\ncommand = \"{}\"\n", server_exe().display()),
    );
    let out = p.command().args(["mcp", "list"]).output().unwrap();
    let run = support::project::Run::of(out);
    run.assert_ok();
    let exe = server_exe();
    assert_eq!(
        run.stdout,
        format!(
            "broken  stdio: /nonexistent/mcp-server\n  state: failed: cannot run `/nonexistent/mcp-server`: No such file or directory (os error 2)\n\
             dies  stdio: sh -c echo no config here >&2; exit 2\n  state: failed: it exited (exit code 2). The end of its stderr ({}):\n    no config here\n\
             off  stdio: whatever\n  state: disabled (enabled = false)\n\
             test  stdio: {exe}\n  state: ready (7 tools)\n\
             \x20 - mcp_test_echo (read-only): Returns the text it is given.\n\
             \x20 - mcp_test_add_note: Appends one line to the notes file.\n\
             \x20 - mcp_test_crash (disabled): Makes the server exit.\n\
             \x20 - mcp_test_picture (read-only): Returns a caption and an image.\n\
             \x20 - mcp_test_fail (read-only): Always fails.\n\
             \x20 - mcp_test_sleep (read-only): Waits some seconds.\n\
             \x20 - mcp_test_whoami (read-only): Says which Authorization header the request carried.\n\
             cloned  ignored: defined in {}, and this project is not trusted (`agent trust` shows what it asks for; `agent trust --yes` trusts it)\n",
            p.home().join("data/mcp-dies.log").display(),
            p.root().join(".agent/config.toml").display(),
            exe = exe.display(),
        )
    );
    let started = pids(&p);
    assert_eq!(started.len(), 1, "only the user's server started");
    assert!(!alive(started[0]));
}

#[test]
fn a_projects_config_never_starts_a_server() {
    let p = Project::new();
    // The project's file names a server; the user's names none.
    p.file(".agent/config.toml", &server_entry(&p, "cloned", "", ""));
    let (mock, r) = rounds(
        &p,
        Wire::OpenAi,
        vec![("mcp_cloned_echo", json!({"text": "x"}))],
        &["--yolo"],
    );
    assert!(
        r[0].starts_with("unknown tool `mcp_cloned_echo`"),
        "{}",
        r[0]
    );
    assert!(pids(&p).is_empty(), "the project's server was started");
    for req in mock.requests() {
        let (tools, _) = tools_and_system(&req);
        assert!(!tools.iter().any(|t| t.0.starts_with("mcp_")));
    }
}

/// The test server in HTTP mode; killed when dropped.
struct HttpServer {
    child: std::process::Child,
    port: u16,
}

impl HttpServer {
    fn start(dir: &Path) -> HttpServer {
        let port_file = dir.join("port");
        let child = std::process::Command::new(server_exe())
            .arg("--http")
            .arg(&port_file)
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(&port_file) {
                break p.trim().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "the HTTP server did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        HttpServer { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_streamable_http_server_with_headers_from_the_environment() {
    let p = Project::new();
    let server = HttpServer::start(p.home());
    // The agent runs with HOME set to the test's home directory.
    p.user_config(&format!(
        "{FAST_LLM}[mcp.web]\nurl = \"http://127.0.0.1:{}/mcp\"\nheaders = {{ Authorization = \"Bearer ${{HOME}}\" }}\n",
        server.port
    ));
    let (mock, r) = rounds(
        &p,
        Wire::OpenAi,
        vec![
            ("mcp_web_whoami", json!({})),
            ("mcp_web_echo", json!({"text": "over http"})),
        ],
        &[],
    );
    assert_eq!(
        r[0],
        format!("Authorization: Bearer {}", p.home().display())
    );
    assert_eq!(r[1], "echo: over http");
    let (_, system) = tools_and_system(&mock.requests()[1]);
    assert!(system.contains("# MCP server `web`"), "{system}");

    // One that cannot be reached says why in `agent mcp list`.
    drop(server);
    p.user_config(&format!(
        "{FAST_LLM}[mcp.gone]\nurl = \"http://127.0.0.1:1/mcp\"\nstartup_timeout_secs = 5\n"
    ));
    let run = support::project::Run::of(p.command().args(["mcp", "list"]).output().unwrap());
    run.assert_ok();
    assert!(
        run.stdout
            .starts_with("gone  http: http://127.0.0.1:1/mcp\n  state: failed: cannot reach http://127.0.0.1:1/mcp: "),
        "{}",
        run.stdout
    );
}

#[test]
fn servers_do_not_get_the_agents_provider_keys() {
    // The run sets OPENAI_API_KEY for the mock; the server must not see it,
    // while ordinary variables (HOME) and the entry's own env pass through.
    let p = with_server("", "");
    let (_, results) = rounds(
        &p,
        Wire::OpenAi,
        vec![
            ("mcp_test_echo", json!({"text": "$OPENAI_API_KEY"})),
            ("mcp_test_echo", json!({"text": "$HOME"})),
            ("mcp_test_echo", json!({"text": "$MCP_NOTES"})),
        ],
        &[],
    );
    assert_eq!(results[0], "echo: $OPENAI_API_KEY=(unset)");
    assert_eq!(results[1], format!("echo: $HOME={}", p.home().display()));
    assert_eq!(
        results[2],
        format!("echo: $MCP_NOTES={}", notes(&p).display())
    );

    // Named in the entry's env, a key is passed on purpose.
    let p = with_server(", OPENAI_API_KEY = \"for-this-server\"", "");
    let (_, results) = rounds(
        &p,
        Wire::OpenAi,
        vec![("mcp_test_echo", json!({"text": "$OPENAI_API_KEY"}))],
        &[],
    );
    assert_eq!(results[0], "echo: $OPENAI_API_KEY=for-this-server");
}

#[test]
fn a_server_that_fails_its_first_start_is_tried_again() {
    let p = Project::new();
    let marker = p.home().join("failed-once");
    p.user_config(&format!(
        "{FAST_LLM}{}",
        server_entry(
            &p,
            "test",
            &format!(", MCP_FAIL_FIRST = \"{}\"", marker.display()),
            ""
        )
    ));
    // The first request goes out while the server fails; the model waits
    // in a command long enough for the retry (2 s later) to come up.
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(vec![call(
            "w",
            "bash",
            json!({"command": "sleep 4"}),
        )])),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", &["--yolo"]).assert_ok();
    let names =
        |r: &Recorded| -> Vec<String> { tools_and_system(r).0.into_iter().map(|t| t.0).collect() };
    let reqs = mock.requests();
    assert!(marker.exists(), "the first start did not fail");
    assert!(!names(&reqs[0]).contains(&"mcp_test_echo".to_string()));
    assert!(
        names(&reqs[1]).contains(&"mcp_test_echo".to_string()),
        "{:?}",
        names(&reqs[1])
    );
    assert_eq!(pids(&p).len(), 2, "one failed start, one retry");
}
