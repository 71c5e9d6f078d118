//! `fetch` through the real binary against a small HTTP server in this
//! test: HTML made readable, same-host redirects followed and shown, other
//! hosts reported, binaries refused, the gate asked by host.

use crate::support;

use serde_json::{Value, json};
use support::http::{Page, Server};
use support::mock_llm::{MockLlm, Reply, Step, call};
use support::project::{Project, Wire, result_texts};

/// The answer to each path of the test's web server.
fn route(path: &str) -> Page {
    let html = Some(("Content-Type", "text/html; charset=utf-8"));
    match path {
        "/page" => Page::new(
            200,
            html,
            b"<html><head><title>T</title><script>var x = 1;</script></head><body><h1>Release notes</h1><p>Version <b>2.0</b> is out.</p><ul><li>faster</li><li>smaller</li></ul></body></html>",
        ),
        "/moved" => Page::new(302, Some(("Location", "/page")), b""),
        "/away" => Page::new(
            301,
            Some(("Location", "http://example.invalid/elsewhere")),
            b"",
        ),
        "/loop" => Page::new(302, Some(("Location", "/loop")), b""),
        "/data.json" => Page::new(
            200,
            Some(("Content-Type", "application/json")),
            br#"{"ok": true}"#,
        ),
        "/image.png" => Page::new(
            200,
            Some(("Content-Type", "image/png")),
            &[0x89, b'P', b'N', b'G', 0, 0, 0, 0],
        ),
        _ => Page::new(404, Some(("Content-Type", "text/plain")), b"no such page"),
    }
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
    let server = Server::routes(route);
    let port = server.addr().port();
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
    let server = Server::routes(route);
    let port = server.addr().port();
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
