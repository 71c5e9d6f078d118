use super::*;

fn header(id: &str) -> Header {
    Header {
        v: FORMAT,
        id: id.into(),
        created: 1,
        cwd: "/w".into(),
        project: "/w".into(),
        git_root: None,
        provider: "p".into(),
        model: "m".into(),
        agent_version: "0".into(),
        parent: None,
    }
}

#[test]
fn appends_and_replays() {
    let d = tempfile::tempdir().unwrap();
    let log = SessionLog::create(d.path(), header("s1"));
    assert!(!log.path().exists(), "no file before the first entry");
    log.append(&Entry::User {
        turn: 1,
        text: "hi".into(),
        time: 2,
        auto: false,
    });
    log.append(&Entry::Assistant {
        message: Message {
            role: Role::Assistant,
            content: vec![Content::ToolCall {
                id: "c1".into(),
                name: "view".into(),
                arguments: "{}".into(),
            }],
        },
    });
    log.append(&Entry::ToolResult {
        call_id: "c1".into(),
        name: "view".into(),
        content: "text".into(),
        is_error: false,
        diff: None,
        denied: false,
    });
    log.sync();
    let loaded = load(log.path()).unwrap();
    assert_eq!(loaded.header.id, "s1");
    assert!(loaded.warnings.is_empty());
    let r = Replay::of(&loaded.entries);
    assert_eq!(r.turns, 1);
    assert_eq!(r.messages.len(), 3);
    assert_eq!(r.messages[0], Message::user("hi"));
    // A reopened log appends without a second header.
    let again = SessionLog::reopen(log.path().to_path_buf());
    again.append(&Entry::Rewind {
        keep: 1,
        keep_blocks: None,
    });
    let r = Replay::of(&load(log.path()).unwrap().entries);
    assert_eq!(r.messages, vec![Message::user("hi")]);
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let log = SessionLog::create(d.path(), header("s2"));
    log.append(&Entry::User {
        turn: 1,
        text: "one".into(),
        time: 2,
        auto: false,
    });
    drop(log);
    let path = log_path(d.path(), "s2");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"t":"assistant","message":{"role":"assis"#)
        .unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.entries.len(), 1);
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].contains("torn last line"), "{loaded:?}");
    // A bad line in the middle is skipped too, and named.
    f.write_all(b"\n{\"t\":\"rewind\",\"keep\":0}\n").unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.entries.len(), 2);
    assert!(loaded.warnings[0].contains("skipped line 3"), "{loaded:?}");
    // Appending after a torn line starts a line of its own.
    f.write_all(br#"{"t":"rewind","ke"#).unwrap();
    let again = SessionLog::reopen(path.clone());
    again.append(&Entry::Rewind {
        keep: 0,
        keep_blocks: None,
    });
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.entries.len(), 3, "{loaded:?}");
}

#[test]
fn not_a_log_is_an_error_that_names_the_file() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("x.jsonl");
    std::fs::write(&path, "garbage\n").unwrap();
    let e = load(&path).unwrap_err().to_string();
    assert!(e.contains("x.jsonl is not a session log"), "{e}");
}

#[test]
fn the_earlier_json_format_loads() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("old.json");
    std::fs::write(
            &path,
            r#"{"id":"old","provider":"p","model":"m","cwd":"/w","usage":{"input_tokens":5,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0},
               "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},
                           {"role":"assistant","content":[{"type":"text","text":"hello"}]}]}"#,
        )
        .unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.header.id, "old");
    let r = Replay::of(&loaded.entries);
    assert_eq!(r.messages.len(), 2);
    assert_eq!(r.turns, 1);
    assert_eq!(r.total_usage().input_tokens, 5);
}
