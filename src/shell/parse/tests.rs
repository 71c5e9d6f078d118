//! The parser judged from the outside.

use super::*;

fn argvs(text: &str) -> Vec<Vec<String>> {
    parse(text)
        .commands
        .iter()
        .filter(|c| !c.words.is_empty())
        .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
        .collect()
}

#[test]
fn lists_pipelines_and_subshells() {
    assert_eq!(
        argvs("a 1 && b 2 || (c; d) | e & f"),
        vec![
            vec!["a", "1"],
            vec!["b", "2"],
            vec!["c"],
            vec!["d"],
            vec!["e"],
            vec!["f"]
        ]
    );
}

#[test]
fn quoting_and_escapes_are_removed() {
    assert_eq!(
        argvs(r#""rm" r''m \rm $'r\x6d' -"rf""#),
        vec![vec!["rm", "rm", "rm", "rm", "-rf"]]
    );
}

#[test]
fn substitutions_are_commands_strings_are_data() {
    let s = parse(r#"echo "rm -rf /" $(whoami) `id` <(ls) # rm -rf /"#);
    let names: Vec<&str> = s
        .commands
        .iter()
        .map(|c| c.words[0].text.as_str())
        .collect();
    assert_eq!(names, ["whoami", "id", "ls", "echo"]);
    assert!(s.commands[0].substituted && !s.commands[3].substituted);
    assert_eq!(s.commands[3].words[1].text, "rm -rf /");
    assert!(s.commands[3].words[2].dynamic);
}

#[test]
fn ifs_splits_words() {
    assert_eq!(argvs("rm${IFS}-rf${IFS}/"), vec![vec!["rm", "-rf", "/"]]);
}

#[test]
fn redirects_pipes_and_assignments() {
    let s = parse("FOO=1 cat < in.txt 2>&1 | tee out.txt > /dev/null");
    let cat = &s.commands[0];
    assert_eq!(cat.assignments[0].text(), "FOO=1");
    assert_eq!(cat.redirects[0].op, "<");
    assert!(!cat.redirects[0].writes());
    assert!(!cat.redirects[1].writes(), "2>&1 is a duplication");
    let tee = &s.commands[1];
    assert_eq!(tee.piped_from, Some(0));
    assert!(tee.redirects[0].writes());
    assert_eq!(tee.redirects[0].target.text, "/dev/null");
    assert_eq!(s.assigned[0].0, "FOO");
}

#[test]
fn fork_bomb_is_self_recursive() {
    assert_eq!(parse(":(){ :|:& };:").self_recursive, vec![":"]);
}

#[test]
fn quoted_heredoc_body_is_data_unquoted_body_runs() {
    let s = parse("cat <<'EOF' > f.txt\nrm -rf / $(id)\nEOF\n");
    assert_eq!(
        argvs("cat <<'EOF' > f.txt\nrm -rf / $(id)\nEOF\n"),
        [["cat"]]
    );
    let r = &s.commands[0].redirects;
    assert!(
        r.iter()
            .any(|r| r.heredoc.as_deref().is_some_and(|h| h.contains("rm -rf /")))
    );
    assert!(r.iter().any(|r| r.writes() && r.target.text == "f.txt"));
    for text in [
        "cat <<EOF\n$(rm -rf ~) `id`\nEOF\n",
        "cat <<-EOF\n\t$(rm -rf ~)\n\t`id`\n\tEOF\n",
    ] {
        let names: Vec<String> = argvs(text).into_iter().map(|a| a[0].clone()).collect();
        assert!(names.contains(&"rm".to_string()), "{text:?}: {names:?}");
        assert!(names.contains(&"id".to_string()), "{text:?}: {names:?}");
    }
}

#[test]
fn evaluations_and_their_variables() {
    let ev = |t: &str| parse(t).evaluations;
    assert_eq!(
        ev("echo $((x + 1))"),
        [Evaluation::Arithmetic(vec!["x".into()])]
    );
    assert_eq!(ev("echo $((1 + 2))"), [Evaluation::Arithmetic(vec![])]);
    assert!(ev("(( a[i]++ ))").contains(&Evaluation::Arithmetic(vec!["a".into(), "i".into()])));
    assert_eq!(
        ev("[[ $n -lt 3 ]]"),
        [Evaluation::Arithmetic(vec!["$n".into()])]
    );
    assert_eq!(
        ev("echo ${!x} ${y@P}"),
        [
            Evaluation::Indirect("x".into()),
            Evaluation::Prompt("y".into())
        ]
    );
    assert!(ev("echo ${!arr[@]}").is_empty());
    assert!(matches!(&ev("[[ -v 'a[$(id)]' ]]")[0], Evaluation::Code(c) if c.contains("$(id)")));
    let s = parse("x='a[$(id)]'; for i in 1 $(ls); do :; done");
    let names: Vec<&str> = s.assigned.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["x", "i", "i"]);
    assert!(s.assigned[2].1.dynamic);
    // `$(...)` inside a subscript is a command.
    assert!(argvs("echo ${a[$(id)]}").iter().any(|a| a[0] == "id"));
    assert!(argvs("echo \"$(<~/.ssh/id_rsa)\"").len() == 1);
    assert!(
        parse("echo \"$(<~/.ssh/id_rsa)\"").commands[0].redirects[0]
            .target
            .text
            == "~/.ssh/id_rsa"
    );
}

#[test]
fn globs_and_braces_only_when_unquoted() {
    let w = |t: &str| parse(t).commands[0].words[1].clone();
    assert!(w("ls *.rs").is_glob());
    assert!(!w("ls '*.rs'").is_glob());
    assert!(!w("ls \"*.rs\"").is_glob());
    assert!(w("cat {..,x}/secret").is_brace());
    assert!(!w("cat '{..,x}'/secret").is_brace());
    assert_eq!(w("cat {..,x}/secret").text, "{..,x}/secret");
}

#[test]
fn broken_text_is_flagged() {
    assert!(parse("echo 'unterminated").errors);
    assert!(!parse("echo fine").errors);
}

#[test]
fn arithmetic_assignments_are_found() {
    use super::expansions::arithmetic_assignments as a;
    assert_eq!(a("PATH=10"), ["PATH"]);
    assert_eq!(
        a("x == 1 || y <= 2 || z >= 3 || w != 4"),
        Vec::<String>::new()
    );
    assert_eq!(a("a[i+1] += 2"), ["a"]);
    assert_eq!(a("i++, --j"), ["i", "j"]);
    assert_eq!(a("$x + 1"), Vec::<String>::new());
    assert_eq!(a("x <<= 1"), ["x"]);
    for cmd in [
        "echo $((PATH=10))",
        "(( PATH=10 ))",
        "echo $[PATH=10]",
        "[[ 1 -eq PATH=10 ]]",
        "a=(1 2); echo ${a[PATH=10]}",
        ": $((HOME++))",
    ] {
        let s = super::parse(cmd);
        assert!(
            s.assigned.iter().any(|(n, _)| n == "PATH" || n == "HOME"),
            "{cmd}: {:?}",
            s.assigned
        );
    }
}
