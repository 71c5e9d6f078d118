//! What a server's answer means when it is not a good event stream: an HTTP
//! status with a vendor's error body, a `Retry-After`, a 2xx body that is
//! something else. Each becomes an [`LlmError`] that says what to do; the
//! transport decides what to retry. Nothing here does I/O.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use super::LlmError;

/// Who answered, for the messages.
pub(super) struct Origin<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    pub key_env: &'a str,
}

/// Maps an HTTP failure to an error that says what to do.
pub(super) fn status_error(
    who: &Origin<'_>,
    status: u16,
    url: &str,
    body: &str,
    retry_after: Option<Duration>,
) -> LlmError {
    let (kind, message) = error_fields(body);
    let detail = if message.is_empty() {
        body.chars()
            .take(300)
            .collect::<String>()
            .trim()
            .to_string()
    } else {
        message.clone()
    };
    let lower = format!("{kind} {message}").to_lowercase();
    let mentions_model = lower.contains("model");
    let context = about_context_length(&lower);
    let missing = [
        "not found",
        "not_found",
        "does not exist",
        "unknown",
        "no such",
    ]
    .iter()
    .any(|m| lower.contains(m));
    match status {
        401 | 403 => LlmError::Auth {
            status,
            provider: who.provider.to_string(),
            env: who.key_env.to_string(),
            detail,
        },
        400 | 404 | 413 | 422 if context => LlmError::ContextLength(detail),
        400 | 404 | 422 if mentions_model && missing => LlmError::UnknownModel {
            model: who.model.to_string(),
            provider: who.provider.to_string(),
            detail,
        },
        _ => {
            let hint = match status {
                404 => {
                    "check base_url (for kind \"openai\" it includes the version, e.g. /v1; for kind \"anthropic\" it is the host only)"
                }
                429 => "rate limited; wait a moment or lower your usage",
                500.. => "the provider had a problem; try again later",
                _ => "",
            };
            LlmError::Status {
                provider: who.provider.to_string(),
                status,
                url: url.to_string(),
                hint: hint.to_string(),
                detail,
                retry_after,
            }
        }
    }
}

/// Whether an error's type or message (lowercase) says the request is longer
/// than the model's context: OpenAI's `context_length_exceeded`, "maximum
/// context length" (OpenAI, vLLM, DeepSeek, OpenRouter), Anthropic's "prompt
/// is too long", llama.cpp's "exceeds the available context size".
pub(super) fn about_context_length(lower: &str) -> bool {
    [
        "context_length",
        "context length",
        "context window",
        "prompt is too long",
        "maximum context",
        "too many tokens",
        "context size",
        "context limit",
    ]
    .iter()
    .any(|m| lower.contains(m))
}

/// A 2xx answer whose body (`head`: its start) is not an event stream.
pub(super) fn not_event_stream(
    provider: &str,
    status: u16,
    content_type: String,
    head: &[u8],
) -> LlmError {
    let (kind, _) = error_fields(&String::from_utf8_lossy(head));
    LlmError::NotEventStream {
        provider: provider.to_string(),
        status,
        content_type,
        first_line: first_line(head),
        retryable: !request_is_wrong(&kind),
    }
}

/// Whether a body's first line is an SSE field or comment.
pub(super) fn looks_like_sse(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let line = text
        .trim_start_matches('\u{FEFF}')
        .trim_start()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    ["data:", "event:", ":", "id:", "retry:"]
        .iter()
        .any(|p| line.starts_with(p))
}

/// The first non-blank line of a body, shortened, for an error message.
fn first_line(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(head);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    super::openai::truncate(line.unwrap_or_default())
}

/// An error kind that says the request itself (or the account) is wrong,
/// so sending it again cannot help.
fn request_is_wrong(kind: &str) -> bool {
    [
        "invalid_request",
        "authentication",
        "permission",
        "not_found",
        "insufficient_quota",
        "billing",
    ]
    .iter()
    .any(|k| kind.contains(k))
}

/// `error.type`/`error.code` and `error.message` from either vendor's error body.
fn error_fields(body: &str) -> (String, String) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
        return (String::new(), String::new());
    };
    let err = v.get("error").unwrap_or(&v);
    let s = |key: &str| {
        err.get(key)
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let kind = [s("code"), s("type")]
        .into_iter()
        .find(|k| !k.is_empty())
        .unwrap_or_default();
    let message = match err {
        serde_json::Value::String(m) => m.clone(),
        _ => s("message"),
    };
    (kind, message)
}

/// `retry-after-ms` (OpenAI), else `retry-after` as seconds or an HTTP date.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    const WHO: Origin<'static> = Origin {
        provider: "p",
        model: "m",
        key_env: "K",
    };

    #[test]
    fn context_length_from_either_vendor_and_compatible_servers() {
        for (status, body) in [
            (
                400,
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            ),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            ),
            (
                400,
                r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}"#,
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
            ),
        ] {
            match status_error(&WHO, status, "u", body, None) {
                LlmError::ContextLength(detail) => assert!(!detail.is_empty(), "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
        // A bad request about something else is not one.
        let other =
            r#"{"error":{"message":"tools[0].name is invalid","type":"invalid_request_error"}}"#;
        assert!(matches!(
            status_error(&WHO, 400, "u", other, None),
            LlmError::Status { status: 400, .. }
        ));
        assert!(!LlmError::ContextLength(String::new()).is_transient());
    }

    #[test]
    fn not_an_event_stream_is_retryable_unless_the_request_is_wrong() {
        let html = b"\n<!DOCTYPE html>\n<html>...";
        assert!(!looks_like_sse(html));
        match not_event_stream("p", 200, "text/html".into(), html) {
            LlmError::NotEventStream {
                first_line,
                retryable,
                ..
            } => assert_eq!((first_line.as_str(), retryable), ("<!DOCTYPE html>", true)),
            other => panic!("{other:?}"),
        }
        let quota = br#"{"error":{"type":"insufficient_quota","message":"no"}}"#;
        assert!(!not_event_stream("p", 200, "application/json".into(), quota).is_transient());
        assert!(looks_like_sse(b"\r\n: ping\n"));
        assert!(looks_like_sse(b"data: {}\n"));
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut d = HeaderMap::new();
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        d.insert("retry-after", HeaderValue::from_str(&later).unwrap());
        let got = retry_after(&d).unwrap();
        assert!(
            got > Duration::from_secs(25) && got <= Duration::from_secs(30),
            "{got:?}"
        );
    }

    #[test]
    fn error_fields_of_both_vendors() {
        let openai = r#"{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
        assert_eq!(
            error_fields(openai),
            (
                "model_not_found".into(),
                "The model `x` does not exist".into()
            )
        );
        let anthropic =
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}"#;
        assert_eq!(
            error_fields(anthropic),
            ("not_found_error".into(), "model: claude-x".into())
        );
        assert_eq!(error_fields("<html>"), (String::new(), String::new()));
    }
}
