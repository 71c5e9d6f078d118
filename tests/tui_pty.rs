//! The real binary in a pseudo-terminal against the mock LLM: what the
//! person sees (read back with vt100) and what the model receives.

mod support;

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::json;
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{Project, sent_results};

struct Tui {
    screen: Arc<Mutex<vt100::Parser>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Tui {
    fn start(p: &Project, mock: &MockLlm) -> Tui {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_agent"));
        cmd.args([
            "--provider",
            "openai",
            "--base-url",
            &mock.openai_base(),
            "--model",
            "m",
        ]);
        cmd.cwd(p.root());
        cmd.env_clear();
        for (k, v) in [
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", p.home().display().to_string()),
            ("AGENT_HOME", p.home().display().to_string()),
            ("OPENAI_API_KEY", "k".into()),
            ("TERM", "xterm-256color".into()),
            ("GIT_AUTHOR_NAME", "t".into()),
            ("GIT_AUTHOR_EMAIL", "t@t".into()),
            ("GIT_COMMITTER_NAME", "t".into()),
            ("GIT_COMMITTER_EMAIL", "t@t".into()),
        ] {
            cmd.env(k, v);
        }
        let child = pty.slave.spawn_command(cmd).unwrap();
        let mut reader = pty.master.try_clone_reader().unwrap();
        let writer = pty.master.take_writer().unwrap();
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZero::new(30).unwrap(),
            std::num::NonZero::new(100).unwrap(),
            0,
        )));
        let s = Arc::clone(&screen);
        std::thread::spawn(move || {
            let _keep = pty.master;
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                s.lock().unwrap().process(&buf[..n]);
            }
        });
        Tui {
            screen,
            writer,
            child,
        }
    }

    fn text(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    fn wait_for(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.text().contains(what) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("`{what}` never appeared; the screen:\n{}", self.text());
    }

    fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    fn prompt(&mut self, text: &str) {
        self.send(text);
        self.send("\r");
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

#[test]
fn approvals_in_the_terminal() {
    let p = Project::new();
    let mock = MockLlm::start(vec![
        // 1: a write, approved with `y` after keys typed as the dialog opened were ignored.
        Step::Reply(Reply::tools(vec![call(
            "w",
            "write",
            json!({"path": "notes.txt", "content": "hello\n"}),
        )])),
        Step::Reply(Reply::text("Wrote it.")),
        // 2: `a` on git commit covers a second commit; git push still asks; `n` with a reason.
        Step::Reply(Reply::tools(vec![call(
            "g1",
            "bash",
            json!({"command": "git init -q && git commit -q --allow-empty -m one"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "g2",
            "bash",
            json!({"command": "git commit -q --allow-empty -m two"}),
        )])),
        Step::Reply(Reply::tools(vec![call(
            "g3",
            "bash",
            json!({"command": "git push"}),
        )])),
        Step::Reply(Reply::text("Understood.")),
        // 3: Esc ends a running command.
        Step::Reply(Reply::tools(vec![call(
            "s",
            "bash",
            json!({"command": "sleep 30"}),
        )])),
    ]);
    let mut tui = Tui::start(&p, &mock);
    tui.wait_for("Enter sends");

    tui.prompt("make notes");
    // Keys arriving as the dialog opens (a typing burst) must approve nothing.
    for _ in 0..6 {
        tui.send("y");
        std::thread::sleep(Duration::from_millis(60));
    }
    tui.wait_for("Allow write?");
    assert!(
        tui.text().contains("create notes.txt (6 bytes, 1 line)"),
        "{}",
        tui.text()
    );
    assert!(tui.text().contains("risk: low"), "{}", tui.text());
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        tui.text().contains("Allow write?"),
        "the burst approved the write:\n{}",
        tui.text()
    );
    assert!(!p.root().join("notes.txt").exists());
    tui.send("y");
    tui.wait_for("Wrote it.");
    assert_eq!(
        std::fs::read_to_string(p.root().join("notes.txt")).unwrap(),
        "hello\n"
    );

    // Keys typed while no dialog was open went to the composer, as meant; clear it.
    tui.send("\x03");
    tui.prompt("commit twice and push");
    tui.wait_for("Allow bash?");
    std::thread::sleep(Duration::from_millis(700));
    tui.send("a");
    tui.wait_for("run `git push`");
    std::thread::sleep(Duration::from_millis(700));
    tui.send("n");
    std::thread::sleep(Duration::from_millis(100));
    tui.send("no remote here\r");
    tui.wait_for("Understood.");
    let reqs = mock.requests();
    let push = sent_results(&reqs[5]);
    assert_eq!(push[0].call_id, "g3");
    assert!(
        push[0].content.contains("Their reason: \"no remote here\""),
        "{}",
        push[0].content
    );
    assert_eq!(
        sent_results(&reqs[4])[0].content,
        "(no output)\n[exit code 0]",
        "the second commit ran without a dialog"
    );

    tui.prompt("wait");
    tui.wait_for("sleep 30");
    std::thread::sleep(Duration::from_millis(300));
    tui.send("\x1b");
    tui.wait_for("Interrupted.");
    tui.wait_for("Cancelled by the person");
}
