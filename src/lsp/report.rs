//! The text a tool result gets from diagnostics: one diagnostic as a line
//! (its whole message and related places, within bounds), and the report
//! after a change (the file's errors and warnings, then errors elsewhere).

use std::path::Path;

use lsp_types::{Diagnostic, DiagnosticSeverity};

use super::client::path_of;

fn severity(d: &Diagnostic) -> &'static str {
    match d.severity {
        Some(DiagnosticSeverity::ERROR) => "error",
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "error",
    }
}

pub(super) fn line(
    file: &str,
    server: &str,
    d: &Diagnostic,
    display: &(dyn Fn(&Path) -> String + Sync),
) -> String {
    let source = d.source.clone().unwrap_or_else(|| server.to_string());
    let code = match &d.code {
        Some(lsp_types::NumberOrString::Number(n)) => format!("/{n}"),
        Some(lsp_types::NumberOrString::String(s)) => format!("/{s}"),
        None => String::new(),
    };
    let mut out = format!(
        "{file}:{}:{} {} [{source}{code}] ",
        d.range.start.line + 1,
        d.range.start.character + 1,
        severity(d),
    );
    // The whole message (rustc's expected/found, gopls' have/want), its
    // continuation lines indented, within bounds.
    let lines: Vec<&str> = d.message.lines().filter(|l| !l.trim().is_empty()).collect();
    for (i, l) in lines.iter().take(MESSAGE_LINES).enumerate() {
        if i > 0 {
            out.push_str("\n      ");
        }
        out.push_str(&crate::text::cut_line(l.trim_end(), 300));
    }
    if lines.len() > MESSAGE_LINES {
        out.push_str(&format!(
            "\n      … {} more lines",
            lines.len() - MESSAGE_LINES
        ));
    }
    // Where the server points to as related, when it says so briefly.
    for r in d.related_information.iter().flatten().take(2) {
        let at = path_of(r.location.uri.as_str())
            .map(|p| display(&p))
            .unwrap_or_else(|| r.location.uri.to_string());
        out.push_str(&format!(
            "\n      see {at}:{}: {}",
            r.location.range.start.line + 1,
            crate::text::cut_line(r.message.lines().next().unwrap_or_default(), 200)
        ));
    }
    out
}

/// Lines of one diagnostic's message shown.
const MESSAGE_LINES: usize = 6;

/// Errors and warnings shown per list.
const MAX_LISTED: usize = 20;

pub(super) fn format_report(
    server: &str,
    path: &Path,
    mine: &[Diagnostic],
    all: &[(String, Vec<Diagnostic>)],
    display: &(dyn Fn(&Path) -> String + Sync),
) -> String {
    let shown = display(path);
    let important = |d: &&Diagnostic| matches!(severity(d), "error" | "warning");
    let mut own: Vec<&Diagnostic> = mine.iter().filter(important).collect();
    own.sort_by_key(|d| (severity(d) != "error", d.range.start.line));
    let errors = own.iter().filter(|d| severity(d) == "error").count();
    let warnings = own.len() - errors;
    let mut out = String::from("Diagnostics:\n");
    for d in own.iter().take(MAX_LISTED) {
        out.push_str(&format!("  {}\n", line(&shown, server, d, display)));
    }
    if own.len() > MAX_LISTED {
        out.push_str(&format!("  … and {} more\n", own.len() - MAX_LISTED));
    }
    let here = super::client::uri(path);
    let others: Vec<(String, &Diagnostic)> = all
        .iter()
        .filter(|(u, _)| *u != here)
        .flat_map(|(u, ds)| {
            let file = path_of(u).map(|p| display(&p)).unwrap_or_else(|| u.clone());
            ds.iter()
                .filter(|d| severity(d) == "error")
                .map(move |d| (file.clone(), d))
        })
        .collect();
    if !others.is_empty() {
        out.push_str("  Other files:\n");
        for (file, d) in others.iter().take(MAX_LISTED) {
            out.push_str(&format!("  {}\n", line(file, server, d, display)));
        }
        if others.len() > MAX_LISTED {
            out.push_str(&format!("  … and {} more\n", others.len() - MAX_LISTED));
        }
    }
    out.push_str(&format!(
        "  {errors} error{}, {warnings} warning{} in {shown}{}",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        if others.is_empty() {
            String::new()
        } else {
            format!(
                "; {} error{} in other files",
                others.len(),
                if others.len() == 1 { "" } else { "s" }
            )
        }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_messages_and_related_places_are_shown_within_bounds() {
        let d: Diagnostic = serde_json::from_value(serde_json::json!({
            "range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 9}},
            "severity": 1,
            "source": "rustc",
            "code": "E0308",
            "message": "mismatched types\nexpected `&str`\n   found `i32`\n\n".to_string() + &"x\n".repeat(10),
            "relatedInformation": [{
                "location": {"uri": "file:///w/src/greet.rs", "range": {"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 12}}},
                "message": "function defined here"
            }]
        }))
        .unwrap();
        let display = |p: &Path| p.strip_prefix("/w").unwrap().display().to_string();
        assert_eq!(
            line("src/lib.rs", "ra", &d, &display),
            "src/lib.rs:4:5 error [rustc/E0308] mismatched types\n      expected `&str`\n         found `i32`\n      x\n      x\n      x\n      … 7 more lines\n      see src/greet.rs:2: function defined here"
        );
    }
}
