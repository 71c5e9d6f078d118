//! Text helpers every layer uses: cutting a line or a result to a length,
//! saying how much was cut, and an error with its causes on one line.

/// Cuts `s` to at most `max` characters, saying how much was cut.
pub fn cut_line(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => {
            let rest = s[i..].chars().count();
            format!("{}… [{rest} more characters cut]", &s[..i])
        }
        None => s.to_string(),
    }
}

/// Results longer than this many characters are cut (`fetch`, MCP tools).
pub const MAX_RESULT_CHARS: usize = 100_000;

/// Cuts `text` to [`MAX_RESULT_CHARS`] characters, saying how many more
/// there were.
pub fn cap_result(text: &mut String) {
    let chars = text.chars().count();
    if let Some((end, _)) = text.char_indices().nth(MAX_RESULT_CHARS) {
        text.truncate(end);
        text.push_str(&format!(
            "\n… {} more characters not shown",
            chars - MAX_RESULT_CHARS
        ));
    }
}

/// An error with its causes, on one line ("error sending request:
/// connection refused").
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(&format!(": {s}"));
        source = s.source();
    }
    out
}
