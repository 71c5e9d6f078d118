//! The shape of `src/` that AGENTS.md promises: top-level modules import
//! one way (no cycle between them, test code aside) and no source file
//! grows past what a person reads in one sitting.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest source file allowed, in lines.
const MAX_LINES: usize = 800;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The text of a file without its `#[cfg(test)] mod … { … }` block (by
/// convention the last item) and without line comments.
fn non_test_code(text: &str) -> String {
    let cut = regex::Regex::new(r"(?m)^#\[cfg\(test\)\]\s*\n\s*mod \w+\s*\{")
        .expect("a valid pattern")
        .find(text)
        .map_or(text.len(), |m| m.start());
    text[..cut]
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules each file's non-test code names through `crate::`.
fn imports(text: &str) -> BTreeSet<String> {
    let code = non_test_code(text);
    let mut names: BTreeSet<String> = regex::Regex::new(r"crate::(\w+)")
        .expect("a valid pattern")
        .captures_iter(&code)
        .map(|c| c[1].to_string())
        .collect();
    // `use crate::{a, b::c, d::{e, f}}`: the first name of each part.
    for group in regex::Regex::new(r"crate::\{")
        .expect("a valid pattern")
        .find_iter(&code)
    {
        let (mut depth, mut part) = (1, String::new());
        for ch in code[group.end()..].chars() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 || (depth == 1 && ch == ',') {
                let name: String = part
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.insert(name);
                }
                part.clear();
                if depth == 0 {
                    break;
                }
            } else {
                part.push(ch);
            }
        }
    }
    names
}

/// Module → modules it imports, over every non-test file of `src/`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = src();
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&root).expect("under src/");
        let first = rel
            .components()
            .next()
            .expect("a component")
            .as_os_str()
            .to_string_lossy()
            .to_string();
        if first == "lib.rs" || first == "main.rs" {
            continue;
        }
        let in_tests = rel.components().any(|c| c.as_os_str() == "tests")
            || rel.file_name().is_some_and(|n| n == "tests.rs");
        if in_tests {
            continue;
        }
        let module = first.trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(&f).expect("a readable source file");
        let entry = edges.entry(module.clone()).or_default();
        entry.extend(imports(&text).into_iter().filter(|m| *m != module));
    }
    edges
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            let targets = self.edges.get(v).into_iter().flatten();
            for w in targets {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.stack.contains(&w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    scc.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.found.push(scc);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn top_level_modules_import_one_way() {
    let edges = graph();
    assert!(
        edges.len() >= 10 && edges.values().map(BTreeSet::len).sum::<usize>() >= 20,
        "the import graph looks empty; the scan is broken: {edges:?}"
    );
    let found = cycles(&edges);
    let explain: Vec<String> = found
        .iter()
        .map(|scc| {
            let inside: Vec<String> = scc
                .iter()
                .flat_map(|a| {
                    edges[a]
                        .iter()
                        .filter(|b| scc.contains(b))
                        .map(move |b| format!("{a} → {b}"))
                })
                .collect();
            format!("{{{}}}: {}", scc.join(", "), inside.join(", "))
        })
        .collect();
    assert!(
        found.is_empty(),
        "import cycles between top-level modules of src/ (see the layers in AGENTS.md):\n{}",
        explain.join("\n")
    );
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let edge = |e: &mut BTreeMap<String, BTreeSet<String>>, a: &str, b: &str| {
        e.entry(a.into()).or_default().insert(b.into());
    };
    edge(&mut edges, "llm", "log");
    edge(&mut edges, "tools", "llm");
    edge(&mut edges, "llm", "config");
    edge(&mut edges, "config", "tools");
    assert_eq!(cycles(&edges), vec![vec!["config", "llm", "tools"]]);
    let text = "use crate::{log, tools::{Surface, ToolContext}, llm::Provider};\n\
                fn f() { crate::text::cut_line(\"\", 1); } // crate::tui\n\
                #[cfg(test)]\nmod tests {\n    use crate::headless;\n}\n";
    let names: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(names, ["llm", "log", "text", "tools"]);
}
#[test]
fn no_source_file_is_longer_than_a_sitting() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    assert!(files.len() > 50, "found only {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).ok()?.lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "source files over {MAX_LINES} lines; split each by concern:\n{}",
        long.join("\n")
    );
}
