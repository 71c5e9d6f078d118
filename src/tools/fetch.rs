//! `fetch`: one HTTP(S) GET, asked about by the URL's host. Redirects are
//! followed on the same host only (a different host would be a different
//! approval) and shown; the body is capped; HTML becomes readable text with
//! html2text (the only maintained HTML renderer for terminals in Rust).

use crate::text::error_chain;
use std::net::IpAddr;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Tool, ToolContext, ToolError, render};
use crate::permission::{CallFacts, RiskAssessment, Scope, Subjects};

/// The most a response body may be; the rest is not read.
pub const MAX_BYTES: usize = 5 * 1024 * 1024;
const MAX_REDIRECTS: usize = 5;
const DEFAULT_TIMEOUT_SECS: u64 = 30;
const MAX_TIMEOUT_SECS: u64 = 120;
/// Width HTML is laid out at.
const WIDTH: usize = 100;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// HTML as plain text.
    Text,
    /// HTML as Markdown-like text: headings, emphasis, links as footnotes.
    #[default]
    Markdown,
    /// The body as it came.
    Raw,
}

pub struct Fetch;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FetchArgs {
    /// An http:// or https:// URL.
    url: String,
    /// How to return HTML: `markdown` (default), `text` or `raw`.
    format: Option<Format>,
    /// Seconds before giving up (default 30, at most 120).
    timeout_secs: Option<u64>,
}

fn parse(url: &str) -> Result<Url, ToolError> {
    let parsed = Url::parse(url.trim()).map_err(|e| {
        ToolError::new(format!(
            "`{url}` is not a URL ({e}); give a full http:// or https:// URL"
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ToolError::new(format!(
            "only http and https URLs can be fetched, not `{}:`",
            parsed.scheme()
        )));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(ToolError::new(format!("`{url}` has no host")));
    }
    Ok(parsed)
}

/// This machine or its private network: reachable only from here, so a
/// fetch there is not just reading the web. Every spelling of an address
/// counts as the address (the URL parser already turns `2130706433`,
/// `0x7f.1` and `127.1` into `127.0.0.1`); an IPv6 address that carries an
/// IPv4 one (`::ffff:127.0.0.1`, `::127.0.0.1`, `64:ff9b::7f00:1`) is
/// judged as that IPv4 address.
fn is_local(url: &Url) -> bool {
    let host = crate::permission::normalize_host(url.host_str().unwrap_or_default());
    match host.trim_matches(['[', ']']).parse::<IpAddr>() {
        Ok(ip) => local_ip(ip),
        Err(_) => host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local"),
    }
}

fn local_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => {
            let [a, b, ..] = ip.octets();
            ip.is_loopback()
                || ip.is_unspecified()
                || ip.is_private()
                || ip.is_link_local()
                || ip.is_broadcast()
                // Shared address space (carrier-grade NAT) and benchmarking.
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
                || a == 0
        }
        IpAddr::V6(ip) => {
            let s = ip.segments();
            let embedded = ip.to_ipv4_mapped().or_else(|| {
                // IPv4-compatible (`::a.b.c.d`) and the NAT64 prefix.
                let compatible = s[..6].iter().all(|x| *x == 0) && (s[6] != 0 || s[7] > 1);
                let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
                (compatible || nat64).then(|| {
                    std::net::Ipv4Addr::new(
                        (s[6] >> 8) as u8,
                        s[6] as u8,
                        (s[7] >> 8) as u8,
                        s[7] as u8,
                    )
                })
            });
            match embedded {
                Some(v4) => local_ip(IpAddr::V4(v4)),
                None => {
                    ip.is_loopback()
                        || ip.is_unspecified()
                        || (s[0] & 0xfe00) == 0xfc00
                        || (s[0] & 0xffc0) == 0xfe80
                }
            }
        }
    }
}

fn is_text(content_type: &str) -> bool {
    let ct = content_type.to_ascii_lowercase();
    ct.is_empty()
        || ct.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml", "x-sh", "csv"]
            .iter()
            .any(|t| ct.contains(t))
}

impl Tool for Fetch {
    type Args = FetchArgs;
    const NAME: &'static str = "fetch";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(
            include_str!("../../templates/fetch.md"),
            &[
                ("max_mib", (MAX_BYTES / (1024 * 1024)).to_string()),
                ("max_chars", crate::text::MAX_RESULT_CHARS.to_string()),
                ("max_redirects", MAX_REDIRECTS.to_string()),
            ],
        )
    }

    fn effect(&self) -> Effect {
        Effect::Network
    }

    fn paths(_: &FetchArgs) -> Vec<&str> {
        Vec::new()
    }

    fn summary(args: &FetchArgs) -> String {
        args.url.clone()
    }

    fn facts(&self, args: &FetchArgs, _: &ToolContext) -> Result<CallFacts, ToolError> {
        let url = parse(&args.url)?;
        let host = crate::permission::normalize_host(url.host_str().unwrap_or_default());
        let risk = if is_local(&url) {
            RiskAssessment::medium(format!(
                "reaches {host}, a service on this machine or its network"
            ))
        } else {
            RiskAssessment::low(format!("reads a page from {host}"))
        };
        Ok(CallFacts {
            tool: Self::NAME.to_string(),
            description: format!("fetch {url}"),
            risk,
            scope: Scope::Domain {
                tool: Self::NAME.to_string(),
                domain: host.clone(),
            },
            needs_approval: true,
            subjects: Subjects {
                hosts: vec![host],
                ..Subjects::default()
            },
            banned: None,
            protected: None,
            outside_sandbox: None,
            diff: None,
        })
    }

    async fn run(&self, args: FetchArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => Err(ToolError::new("cancelled")),
            r = fetch(args) => r,
        }
    }
}

async fn fetch(args: FetchArgs) -> Result<String, ToolError> {
    let secs = args
        .timeout_secs
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .clamp(1, MAX_TIMEOUT_SECS);
    crate::tls::install();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(secs))
        .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ToolError::new(format!("could not set up HTTP: {e}")))?;
    let first = parse(&args.url)?;
    let mut url = first.clone();
    let mut hops: Vec<String> = Vec::new();
    let mut response = loop {
        let response = client.get(url.clone()).send().await.map_err(|e| {
            let why = if e.is_timeout() {
                format!(
                    "no answer within {secs} s (raise `timeout_secs`, at most {MAX_TIMEOUT_SECS})"
                )
            } else {
                error_chain(&e)
            };
            ToolError::new(format!("could not fetch {url}: {why}"))
        })?;
        if !response.status().is_redirection() {
            break response;
        }
        let Some(next) = response
            .headers()
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .and_then(|l| url.join(l).ok())
        else {
            return Err(ToolError::new(format!(
                "{url} answered {} without a usable Location",
                response.status()
            )));
        };
        if next.host_str() != first.host_str() {
            return Ok(format!(
                "{url} redirects to another host: {next}\nFetch that URL to follow it (it is asked about on its own)."
            ));
        }
        if hops.len() == MAX_REDIRECTS {
            return Err(ToolError::new(format!(
                "more than {MAX_REDIRECTS} redirects from {first} (last: {next}); fetch the final URL directly"
            )));
        }
        hops.push(next.to_string());
        url = next;
    };
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|c| c.to_str().ok())
        .unwrap_or_default()
        .to_string();
    if !is_text(&content_type) {
        return Err(ToolError::new(format!(
            "{url} is `{content_type}`, not text; `fetch` reads pages and text files (download other files with `bash`, e.g. curl -o)"
        )));
    }
    let mut body: Vec<u8> = Vec::new();
    let mut cut = false;
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        ToolError::new(format!(
            "the download from {url} broke off: {}",
            error_chain(&e)
        ))
    })? {
        let room = MAX_BYTES - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let format = args.format.unwrap_or_default();
    let html = content_type.to_ascii_lowercase().contains("html");
    // Raw, not HTML, or HTML html2text cannot lay out: the bytes as text.
    let text = match (html, format) {
        (true, Format::Markdown) => html2text::config::plain()
            .string_from_read(&body[..], WIDTH)
            .ok(),
        (true, Format::Text) => {
            html2text::config::with_decorator(html2text::render::TrivialDecorator::new())
                .string_from_read(&body[..], WIDTH)
                .ok()
        }
        _ => None,
    }
    .unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned());
    let mut head = format!(
        "{url} — HTTP {}, {}, {} bytes{}",
        status.as_u16(),
        if content_type.is_empty() {
            "no content type"
        } else {
            &content_type
        },
        body.len(),
        if cut {
            format!(" (cut at {} MiB)", MAX_BYTES / (1024 * 1024))
        } else {
            String::new()
        }
    );
    if !hops.is_empty() {
        head.push_str(&format!("\nRedirected: {first} → {}", hops.join(" → ")));
    }
    let mut text = text.trim_end().to_string();
    crate::text::cap_result(&mut text);
    let result = format!("{head}\n\n{text}");
    if status.is_success() {
        Ok(result)
    } else {
        Err(ToolError::new(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(url: &str) -> bool {
        is_local(&Url::parse(url).unwrap())
    }

    #[test]
    fn every_spelling_of_a_local_address_is_local() {
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://[64:ff9b::7f00:1]/",
            "http://0.0.0.0/",
            "http://localhost./",
            "http://LOCALHOST/",
            "http://169.254.169.254/latest/meta-data",
            "http://192.168.1.1/",
            "http://100.64.0.1/",
            "http://[fe80::1]/",
            "http://[fd00::1]/",
        ] {
            assert!(local(url), "{url}");
        }
        for url in [
            "http://93.184.216.34/",
            "https://docs.rs/",
            "http://[2606:4700::1111]/",
        ] {
            assert!(!local(url), "{url}");
        }
    }

    #[test]
    fn hosts_are_normalised_for_rules() {
        use crate::permission::normalize_host;
        assert_eq!(normalize_host("Docs.RS."), "docs.rs");
        assert_eq!(normalize_host("bücher.de"), "xn--bcher-kva.de");
        assert_eq!(normalize_host("[::ffff:127.0.0.1]"), "127.0.0.1");
        assert_eq!(normalize_host("2130706433"), "127.0.0.1");
    }
}
