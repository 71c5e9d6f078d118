//! A scripted server over an in-memory pipe: a publication for an older
//! version, or from before the change, is never the answer for a change.

use tokio::io::BufReader;

use super::*;

use super::super::transport::test_io::{frame, read};

fn messages(a: &Answer) -> Vec<String> {
    match a {
        Answer::Current(d) => d.iter().map(|d| d.message.clone()).collect(),
        other => panic!("no current answer: {other:?}"),
    }
}

fn diag(msg: &str) -> Value {
    json!({"range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 5}}, "severity": 1, "message": msg})
}

/// A scripted server over an in-memory pipe.
async fn setup() -> (
    Client,
    BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
) {
    let (c, s) = tokio::io::duplex(1 << 16);
    let (cr, cw) = tokio::io::split(c);
    let (sr, mut sw) = tokio::io::split(s);
    let mut sr = BufReader::new(sr);
    let connecting = tokio::spawn(async move {
        let options = Options {
            name: "t".into(),
            init_options: Value::Null,
            timeout: Duration::from_secs(5),
            quiet_when_clean: false,
            trace: None,
        };
        Client::connect(cr, cw, Path::new("/w"), options).await
    });
    let init = read(&mut sr).await;
    assert_eq!(init["method"], "initialize");
    assert_eq!(
        init["params"]["capabilities"]["textDocument"]["publishDiagnostics"]["versionSupport"],
        true
    );
    frame(
        &mut sw,
        json!({"jsonrpc": "2.0", "id": init["id"], "result": {"capabilities": {}}}),
    )
    .await;
    let client = connecting.await.unwrap().unwrap();
    assert_eq!(read(&mut sr).await["method"], "initialized");
    (client, sr, sw)
}

#[tokio::test]
async fn stale_publications_are_never_reported_as_current() {
    let (client, mut sr, mut sw) = setup().await;
    let path = Path::new("/w/a.py");
    let first = client.sync(path, "python", "x = 1\n").unwrap();
    assert_eq!(read(&mut sr).await["method"], "textDocument/didOpen");
    frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/a.py", "version": 1, "diagnostics": [diag("old")]}})).await;
    let got = client
        .diagnostics_after(
            &first,
            Duration::from_millis(50),
            Instant::now() + Duration::from_secs(2),
        )
        .await;
    assert_eq!(messages(&got), ["old"]);

    // Version 2 sent; the server republishes version 1 late, then 2.
    let second = client.sync(path, "python", "x = \n").unwrap();
    let change = read(&mut sr).await;
    assert_eq!(change["params"]["textDocument"]["version"], 2);
    read(&mut sr).await;
    frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/a.py", "version": 1, "diagnostics": [diag("stale")]}})).await;
    let waiting = client
        .diagnostics_after(
            &second,
            Duration::from_millis(50),
            Instant::now() + Duration::from_millis(300),
        )
        .await;
    assert_eq!(
        waiting,
        Answer::Missing,
        "a stale publication was taken for the new version"
    );
    frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/a.py", "version": 2, "diagnostics": [diag("new")]}})).await;
    let got = client
        .diagnostics_after(
            &second,
            Duration::from_millis(50),
            Instant::now() + Duration::from_secs(2),
        )
        .await;
    assert_eq!(messages(&got), ["new"]);
}

#[tokio::test]
async fn servers_without_versions_count_from_the_change() {
    let (client, mut sr, mut sw) = setup().await;
    let path = Path::new("/w/b.py");
    frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": [diag("before")]}})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let sent = client.sync(path, "python", "y\n").unwrap();
    assert_eq!(read(&mut sr).await["method"], "textDocument/didOpen");
    assert_eq!(
        client
            .diagnostics_after(
                &sent,
                Duration::from_millis(50),
                Instant::now() + Duration::from_millis(200)
            )
            .await,
        Answer::Missing
    );
    frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": []}})).await;
    frame(&mut sw, json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///w/b.py", "diagnostics": [diag("after")]}})).await;
    let got = client
        .diagnostics_after(
            &sent,
            Duration::from_millis(100),
            Instant::now() + Duration::from_secs(2),
        )
        .await;
    assert_eq!(
        messages(&got),
        ["after"],
        "the settled (last) publication wins"
    );
}
