//! `fetch` through the real binary against a small HTTP server in this
//! test: HTML made readable, same-host redirects followed and shown, other
//! hosts reported, binaries refused, the gate asked by host.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{Project, Wire, result_texts};

/// Serves a few fixed routes, one connection at a time, until the test ends.
fn web_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) <= 2 {
                    break;
                }
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (status, headers, body): (&str, String, Vec<u8>) = match path.as_str() {
                "/page" => (
                    "200 OK",
                    "Content-Type: text/html; charset=utf-8\r\n".into(),
                    b"<html><head><title>T</title><script>var x = 1;</script></head><body><h1>Release notes</h1><p>Version <b>2.0</b> is out.</p><ul><li>faster</li><li>smaller</li></ul></body></html>".to_vec(),
                ),
                "/moved" => ("302 Found", "Location: /page\r\n".into(), Vec::new()),
                "/away" => (
                    "301 Moved Permanently",
                    "Location: http://example.invalid/elsewhere\r\n".into(),
                    Vec::new(),
                ),
                "/loop" => ("302 Found", "Location: /loop\r\n".into(), Vec::new()),
                "/data.json" => (
                    "200 OK",
                    "Content-Type: application/json\r\n".into(),
                    br#"{"ok": true}"#.to_vec(),
                ),
                "/image.png" => (
                    "200 OK",
                    "Content-Type: image/png\r\n".into(),
                    vec![0x89, b'P', b'N', b'G', 0, 0, 0, 0],
                ),
                _ => (
                    "404 Not Found",
                    "Content-Type: text/plain\r\n".into(),
                    b"no such page".to_vec(),
                ),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    port
}

fn fetch_all(p: &Project, calls: Vec<Value>, flags: &[&str]) -> Vec<String> {
    let mock = MockLlm::start(vec![
        Step::Reply(Reply::tools(
            calls
                .into_iter()
                .enumerate()
                .map(|(i, args)| call(&format!("f{i}"), "fetch", args))
                .collect(),
        )),
        Step::Reply(Reply::text("done")),
    ]);
    p.run(&mock, Wire::OpenAi, "go", flags).assert_ok();
    result_texts(&mock.requests()[1])
}

#[test]
fn pages_redirects_and_refusals() {
    let port = web_server();
    let base = format!("http://127.0.0.1:{port}");
    let p = Project::new();
    let r = fetch_all(
        &p,
        vec![
            json!({"url": format!("{base}/page")}),
            json!({"url": format!("{base}/moved"), "format": "text"}),
            json!({"url": format!("{base}/page"), "format": "raw"}),
            json!({"url": format!("{base}/away")}),
            json!({"url": format!("{base}/loop")}),
            json!({"url": format!("{base}/data.json")}),
            json!({"url": format!("{base}/image.png")}),
            json!({"url": format!("{base}/gone")}),
            json!({"url": "file:///etc/passwd"}),
        ],
        &["--yolo"],
    );
    let html_len = 177;
    assert_eq!(
        r[0],
        format!(
            "{base}/page — HTTP 200, text/html; charset=utf-8, {html_len} bytes\n\n# Release notes\n\nVersion **2.0** is out.\n* faster\n* smaller"
        )
    );
    assert_eq!(
        r[1],
        format!(
            "{base}/page — HTTP 200, text/html; charset=utf-8, {html_len} bytes\nRedirected: {base}/moved → {base}/page\n\nRelease notes\n\nVersion 2.0 is out.\nfaster\nsmaller"
        )
    );
    assert!(
        r[2].ends_with("<li>smaller</li></ul></body></html>"),
        "{}",
        r[2]
    );
    assert_eq!(
        r[3],
        format!(
            "{base}/away redirects to another host: http://example.invalid/elsewhere\nFetch that URL to follow it (it is asked about on its own)."
        )
    );
    assert_eq!(
        r[4],
        format!(
            "more than 5 redirects from {base}/loop (last: {base}/loop); fetch the final URL directly"
        )
    );
    assert_eq!(
        r[5],
        format!("{base}/data.json — HTTP 200, application/json, 12 bytes\n\n{{\"ok\": true}}")
    );
    assert_eq!(
        r[6],
        format!(
            "{base}/image.png is `image/png`, not text; `fetch` reads pages and text files (download other files with `bash`, e.g. curl -o)"
        )
    );
    assert_eq!(
        r[7],
        format!("{base}/gone — HTTP 404, text/plain, 12 bytes\n\nno such page")
    );
    assert_eq!(r[8], "only http and https URLs can be fetched, not `file:`");
}

#[test]
fn fetching_needs_approval_by_host() {
    let port = web_server();
    let p = Project::new();
    // Headless without --yolo: nobody can approve, so the call is refused
    // and the server is never reached with the page.
    let r = fetch_all(
        &p,
        vec![json!({"url": format!("http://127.0.0.1:{port}/page")})],
        &[],
    );
    assert!(!r[0].contains("Release notes"), "{}", r[0]);
    assert!(
        r[0].starts_with("This `fetch` call needs the person's approval (medium risk: reaches 127.0.0.1, a service on this machine or its network)"),
        "{}",
        r[0]
    );
    assert!(r[0].contains("`fetch(domain:127.0.0.1)`"), "{}", r[0]);

    // A project's allow rule is inert until the person trusts the project.
    p.file(
        ".agent/config.toml",
        "[permissions]\nallow = [\"fetch(domain:127.0.0.1)\"]\n",
    );
    let page = json!({"url": format!("http://127.0.0.1:{port}/page")});
    let r = fetch_all(&p, vec![page.clone()], &[]);
    assert!(!r[0].contains("Release notes"), "{}", r[0]);
    // Trusted, the rule for the host lets it through.
    let r = fetch_all(&p, vec![page], &["--trust-project"]);
    assert!(r[0].contains("# Release notes"), "{}", r[0]);
}
