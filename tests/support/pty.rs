//! The real binary in a pseudo-terminal, its screen read back with vt100.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use super::project::Project;

pub const ROWS: u16 = 30;
pub const COLS: u16 = 100;

pub struct Tui {
    screen: Arc<Mutex<vt100::Parser>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Tui {
    /// `agent --trust-project` for `p`, talking OpenAI's wire format to
    /// `base` (tests of other things than the trust question).
    pub fn start(p: &Project, base: &str) -> Tui {
        Tui::start_with(p, base, &["--trust-project"])
    }

    /// `agent` with `extra` arguments.
    pub fn start_with(p: &Project, base: &str, extra: &[&str]) -> Tui {
        Tui::start_env(p, base, extra, &[])
    }

    /// `agent` with `extra` arguments and environment variables.
    pub fn start_env(p: &Project, base: &str, extra: &[&str], env: &[(&str, &str)]) -> Tui {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_agent"));
        cmd.args(["--provider", "openai", "--base-url", base, "--model", "m"]);
        cmd.args(extra);
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
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pty.slave.spawn_command(cmd).unwrap();
        let mut reader = pty.master.try_clone_reader().unwrap();
        let writer = pty.master.take_writer().unwrap();
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZero::new(ROWS).unwrap(),
            std::num::NonZero::new(COLS).unwrap(),
            0,
        )));
        let s = Arc::clone(&screen);
        std::thread::spawn(move || {
            let _keep = pty.master;
            let mut buf = [0u8; 16384];
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

    pub fn text(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Waits (up to 20 s) until the screen shows `what`; returns when.
    pub fn wait_for(&self, what: &str) -> Instant {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.text().contains(what) {
                return Instant::now();
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        panic!("`{what}` never appeared; the screen:\n{}", self.text());
    }

    pub fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    pub fn prompt(&mut self, text: &str) {
        self.send(text);
        self.send("\r");
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Whether the program is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
