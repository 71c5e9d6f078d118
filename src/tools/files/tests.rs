use super::*;

const STAMP: FileStamp = FileStamp {
    modified: None,
    size: 0,
    hash: 0,
    prefix: None,
};

#[test]
fn crlf_and_bom_round_trip() {
    let o = Original::decode(b"\xef\xbb\xbfa\r\nb\r\n".to_vec(), None, STAMP, "f").unwrap();
    assert!(o.bom && o.crlf);
    assert_eq!(o.text, "a\nb\n");
    assert_eq!(o.encode("a\nc\n"), b"\xef\xbb\xbfa\r\nc\r\n");
    let mixed = Original::decode(b"a\r\nb\n".to_vec(), None, STAMP, "f").unwrap();
    assert!(!mixed.crlf);
    assert_eq!(mixed.encode(&mixed.text), b"a\r\nb\n");
}

#[test]
fn diff_has_real_line_numbers() {
    let old: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("line 50\n", "line fifty\n");
    let d = unified_diff("f.txt", &old, &new);
    assert_eq!(
        d,
        "--- a/f.txt\n+++ b/f.txt\n@@ -47,7 +47,7 @@\n line 47\n line 48\n line 49\n-line 50\n+line fifty\n line 51\n line 52\n line 53\n"
    );
}

#[test]
fn diff_edges_creation_appending_and_deleting() {
    assert_eq!(
        unified_diff("n", "", "a\nb\n"),
        "--- a/n\n+++ b/n\n@@ -1,0 +1,2 @@\n+a\n+b\n"
    );
    assert_eq!(
        unified_diff("n", "a\n", "a\nb\n"),
        "--- a/n\n+++ b/n\n@@ -1,1 +1,2 @@\n a\n+b\n"
    );
    assert_eq!(
        unified_diff("n", "a\nb\n", ""),
        "--- a/n\n+++ b/n\n@@ -1,2 +1,0 @@\n-a\n-b\n"
    );
    assert_eq!(line_counts("x\ny\ny\nz\n", "x\ny\nz\n"), (0, 1));
    assert_eq!(line_counts("é\n", "ü\n"), (1, 1));
}

#[test]
fn atomic_write_keeps_mode_and_leaves_no_temp_files() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    let p = root.join("s.sh");
    std::fs::write(&p, "old").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    write_atomic(Some(&root), &p, b"new", Some(0o100755)).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn a_directory_swapped_for_a_link_never_takes_the_write_elsewhere() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap().join("ws");
    let outside = d.path().canonicalize().unwrap().join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    // Judged as `ws/sub/f` inside the project; then `sub` becomes a
    // link to a directory outside it.
    let target = root.join("sub/f");
    std::fs::remove_dir(root.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("sub")).unwrap();
    let e = write_atomic(Some(&root), &target, b"x", None).unwrap_err();
    assert!(e.to_string().contains("is no longer a directory"), "{e}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    // Missing directories are made, one by one, inside.
    write_atomic(Some(&root), &root.join("new/deeper/g"), b"y", None).unwrap();
    assert_eq!(std::fs::read(root.join("new/deeper/g")).unwrap(), b"y");
    // A link as the file itself is replaced, not followed.
    std::os::unix::fs::symlink(outside.join("h"), root.join("h")).unwrap();
    write_atomic(Some(&root), &root.join("h"), b"z", None).unwrap();
    assert!(!outside.join("h").exists());
    assert_eq!(std::fs::read(root.join("h")).unwrap(), b"z");
}

#[test]
fn thousands_separators() {
    assert_eq!(thousands(1200), "1,200");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1234567), "1,234,567");
}
