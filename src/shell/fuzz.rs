//! Property test: any text, and any mutation of a real command, gets a
//! judgment from the analysis, never a panic; and what it calls read-only
//! is low risk with nothing unknown or banned in it. Rule texts get a rule
//! or an error.
//!
//! `cargo test` runs a bounded number of cases from a fixed seed. To run
//! longer: `AGENT_FUZZ_CASES=200000 AGENT_FUZZ_SEED=7 cargo test --release
//! --lib shell::fuzz -- --nocapture` (a failing input is printed).

use std::path::{Path, PathBuf};

use super::prefix::{Ban, DEFAULT_BANNED};
use super::{PathEnv, analyze, analyze_within};
use crate::permission::{Risk, Rule, RuleList};

/// Characters that matter to bash, to the parser or to byte slicing.
const ALPHABET: &[&str] = &[
    " ", " ", "a", "r", "m", "-", "-r", "f", "/", "~", ".", "..", "*", "?", "[", "]", "{", "}",
    ",", "$", "$(", ")", "(", "`", "'", "\"", "\\", "|", "||", "&", "&&", ";", ";;", "<", ">",
    ">>", "<<", "<<<", "<(", ">(", "=", "!", "#", "\n", "\t", "€", "é", "𝔘", "\u{1f}", "$((", "))",
    "[[", "]]", "${", "${!", "@P", "EOF", "x", "1", "0", "sudo", "bash", "-c", "eval", "find",
    "-exec", "{}", "\\;", "xargs", "git", "sed", "awk", "cat", "ls", "echo",
];

fn cases() -> usize {
    std::env::var("AGENT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000)
}

fn seed() -> u64 {
    std::env::var("AGENT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(11)
}

fn random_text(rng: &mut fastrand::Rng) -> String {
    let n = rng.usize(0..40);
    (0..n)
        .map(|_| ALPHABET[rng.usize(0..ALPHABET.len())])
        .collect()
}

/// A real command with a few random edits (on character boundaries).
fn mutated(rng: &mut fastrand::Rng, seeds: &[String]) -> String {
    let mut chars: Vec<char> = seeds[rng.usize(0..seeds.len())].chars().collect();
    for _ in 0..rng.usize(1..4) {
        let at = rng.usize(0..=chars.len());
        match rng.u8(0..4) {
            0 if at < chars.len() => {
                chars.remove(at);
            }
            1 => {
                let piece = ALPHABET[rng.usize(0..ALPHABET.len())];
                for (k, c) in piece.chars().enumerate() {
                    chars.insert(at + k, c);
                }
            }
            2 => {
                let other: Vec<char> = seeds[rng.usize(0..seeds.len())].chars().collect();
                let cut = rng.usize(0..=other.len());
                chars.splice(at..at, other[..cut].iter().copied());
            }
            _ if at < chars.len() => {
                chars[at] = ALPHABET[rng.usize(0..ALPHABET.len())]
                    .chars()
                    .next()
                    .unwrap_or('x');
            }
            _ => {}
        }
    }
    chars.into_iter().collect()
}

fn seeds() -> Vec<String> {
    include_str!("testdata/corpus.tsv")
        .lines()
        .chain(include_str!("testdata/attacks.tsv").lines())
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.splitn(3, '\t').nth(2))
        .map(|c| c.replace("\\n", "\n"))
        .collect()
}

#[test]
fn every_input_gets_a_judgment() {
    let env = PathEnv::new(
        PathBuf::from("/tmp/probe-ws"),
        Some(PathBuf::from("/home/u")),
    );
    let bans: Vec<Ban> = DEFAULT_BANNED.iter().map(|b| Ban::parse(b)).collect();
    let seeds = seeds();
    let mut rng = fastrand::Rng::with_seed(seed());
    for i in 0..cases() {
        let text = if i % 2 == 0 {
            random_text(&mut rng)
        } else {
            mutated(&mut rng, &seeds)
        };
        let judged = std::panic::catch_unwind(|| {
            let env = PathEnv::new(env.workspace.clone(), env.home.clone());
            analyze(&text, &env, &bans)
        });
        let a = judged.unwrap_or_else(|_| panic!("the analysis panicked on {text:?}"));
        if a.read_only {
            assert!(
                a.risk.level == Risk::Low && a.banned.is_none() && a.unknown.is_none(),
                "{text:?} is read-only but {} ({}), banned {:?}, unknown {:?}",
                a.risk.level,
                a.risk.reason,
                a.banned,
                a.unknown
            );
        }
        let rule = format!("bash({text})");
        let parsed = std::panic::catch_unwind(|| {
            Rule::parse(&rule, RuleList::Deny, "fuzz", Path::new("/w"), None).map(|_| ())
        });
        assert!(parsed.is_ok(), "rule parsing panicked on {rule:?}");
    }
}

#[test]
fn huge_and_long_inputs_get_a_judgment() {
    let env = PathEnv::new(
        PathBuf::from("/tmp/probe-ws"),
        Some(PathBuf::from("/home/u")),
    );
    let bans: Vec<Ban> = DEFAULT_BANNED.iter().map(|b| Ban::parse(b)).collect();
    // A megabyte of argument, and ten thousand parts, judged in full
    // (the time limit is the release build's business: see benches).
    let slow = std::time::Duration::from_secs(60);
    let big = format!("echo {}", "a".repeat(1 << 20));
    assert!(analyze_within(&big, &env, &bans, slow).read_only);
    let parts = vec!["ls -la src"; 10_000].join(" && ");
    let a = analyze_within(&parts, &env, &bans, slow);
    assert!(a.read_only, "{}", a.risk.reason);
    // Past the time limit, what is left is unknown, never read-only.
    let a = analyze_within(&parts, &env, &bans, std::time::Duration::ZERO);
    assert!(!a.read_only && a.unknown.is_some());
    let heredoc = format!("cat <<EOF\n{}\nEOF", "line $(date)\n".repeat(1 << 16));
    assert!(!analyze(&heredoc, &env, &bans).read_only);
    // More than the budget: judged as unknown, never read-only.
    let more = vec!["ls"; 30_000].join("; ");
    let a = analyze(&more, &env, &bans);
    assert!(!a.read_only && a.unknown.is_some());
    // Deep nesting and a megabyte that does not parse.
    let deep = format!("{}ls{}", "$(".repeat(500), ")".repeat(500));
    assert!(!analyze(&deep, &env, &bans).read_only);
    let broken = format!("echo '{}", "x ".repeat(1 << 19));
    assert!(!analyze(&broken, &env, &bans).read_only);
}
