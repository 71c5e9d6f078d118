//! The hosts a command reaches, for domain rules: URLs anywhere
//! (`https://h/…`, `git@h:repo`), and for programs that connect, every
//! operand and option value that names a host, with or without a scheme
//! (`curl evil.example`, `nc h 80`, `socat TCP:h:80 -`, `curl -x h:8080`).
//! A host that cannot be known (`curl "https://$u/"`, curl's own `{a,b}`
//! globbing) is unknown, and every domain deny rule applies to it.

/// Programs that connect to the hosts named on their command line.
const NETWORK: &[&str] = &[
    "curl",
    "wget",
    "xh",
    "http",
    "https",
    "aria2c",
    "lwp-request",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "ftp",
    "ping",
    "dig",
    "nslookup",
    "host",
    "whois",
    "traceroute",
];

/// `git` subcommands that reach a remote.
const GIT_NETWORK: &[&str] = &[
    "clone",
    "fetch",
    "pull",
    "push",
    "ls-remote",
    "remote",
    "submodule",
];

/// Whether `name args` connects to the hosts its words name.
pub fn connects(name: &str, args: &[&str]) -> bool {
    NETWORK.contains(&name)
        || (name == "git"
            && super::danger::positional("git", args)
                .first()
                .is_some_and(|s| GIT_NETWORK.contains(s)))
}

/// What a word says about hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    Host(String),
    /// A host is there but cannot be known.
    Unknown,
}

/// The host of a URL-like word: `https://h/…`, `git@h:repo`.
pub fn url_host(word: &str) -> Option<String> {
    if let Some((_, rest)) = word.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        let host = authority.rsplit('@').next().unwrap_or(authority);
        let host = if host.starts_with('[') {
            host.split(']').next().map(|h| format!("{h}]"))?
        } else {
            host.split(':').next().unwrap_or(host).to_string()
        };
        return (!host.is_empty()).then_some(host);
    }
    let (user_host, _) = word.split_once(':')?;
    let (_, host) = user_host.rsplit_once('@')?;
    (host.contains('.') || host == "localhost").then(|| host.to_string())
}

/// A host name or address as written without a scheme: `h.example`,
/// `user@h.example:22`, `h.example/path`, `10.0.0.1:80`, `[::1]`.
fn bare_host(word: &str) -> Option<String> {
    let w = word.rsplit_once('@').map_or(word, |(_, h)| h);
    let host = if let Some(v6) = w.strip_prefix('[') {
        format!("[{}]", v6.split(']').next()?)
    } else {
        w.split(['/', ':', '?', '#']).next()?.to_string()
    };
    let name_like = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        && (host.contains('.') || host.eq_ignore_ascii_case("localhost"));
    let v6 = host.starts_with('[')
        && host[1..host.len() - 1]
            .parse::<std::net::Ipv6Addr>()
            .is_ok();
    let number = !host.is_empty() && host.chars().all(|c| c.is_ascii_digit()) && host.len() > 6;
    (name_like || v6 || number).then_some(host)
}

/// What one word of `name` reaches. `dynamic`: its value is only known at
/// run time; `network`: the program connects to what it names;
/// `globoff`: curl was told not to expand `{}`/`[]` in URLs.
pub fn reach(name: &str, word: &str, dynamic: bool, network: bool, globoff: bool) -> Vec<Reach> {
    if let Some(h) = url_host(word) {
        // curl expands `{a,b}` and `[1-3]` in URLs itself.
        if name == "curl" && !globoff && h.contains(['{', '[', '}', ']']) {
            return vec![Reach::Unknown];
        }
        if dynamic && (h.contains('$') || h.contains('`')) {
            return vec![Reach::Unknown];
        }
        return vec![Reach::Host(h)];
    }
    if !network {
        return Vec::new();
    }
    if dynamic {
        return vec![Reach::Unknown];
    }
    // `socat TCP:h:80 -`, `OPENSSL:h:443`: the host is the second field.
    if name == "socat" {
        let mut fields = word.split([':', ',']);
        let kind = fields.next().unwrap_or_default().to_ascii_uppercase();
        let connects = ["TCP", "UDP", "OPENSSL", "SOCKS", "PROXY", "SCTP", "DCCP"]
            .iter()
            .any(|k| kind.starts_with(k));
        if connects {
            return vec![
                fields
                    .next()
                    .and_then(bare_host)
                    .map_or(Reach::Unknown, Reach::Host),
            ];
        }
    }
    // `--connect-to a:443:h:443`, `-e http_proxy=h:8080`: every field.
    let mut out: Vec<Reach> = bare_host(word).map(Reach::Host).into_iter().collect();
    for piece in word.split([':', '=', ',']) {
        if let Some(h) = bare_host(piece)
            && !out.contains(&Reach::Host(h.clone()))
        {
            out.push(Reach::Host(h));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_with_and_without_schemes() {
        let host = |name: &str, w: &str| {
            reach(name, w, false, connects(name, &[]), false)
                .into_iter()
                .next()
        };
        assert_eq!(
            host("cat", "https://Evil.example/x"),
            Some(Reach::Host("Evil.example".into()))
        );
        assert_eq!(
            host("cat", "http://u:p@h.io:8080/"),
            Some(Reach::Host("h.io".into()))
        );
        assert_eq!(
            host("git", "git@github.com:me/repo.git"),
            Some(Reach::Host("github.com".into()))
        );
        assert_eq!(
            host("cat", "http://[::1]:80/"),
            Some(Reach::Host("[::1]".into()))
        );
        assert_eq!(host("cat", "src/main.rs"), None);
        assert_eq!(
            host("curl", "evil.example/x"),
            Some(Reach::Host("evil.example".into()))
        );
        assert_eq!(host("nc", "10.0.0.1"), Some(Reach::Host("10.0.0.1".into())));
        assert_eq!(
            host("curl", "2130706433"),
            Some(Reach::Host("2130706433".into()))
        );
        assert_eq!(
            host("socat", "TCP:evil.example:80"),
            Some(Reach::Host("evil.example".into()))
        );
        assert_eq!(
            reach("curl", "a.com:443:evil.example:443", false, true, false),
            [
                Reach::Host("a.com".into()),
                Reach::Host("evil.example".into())
            ]
        );
        assert_eq!(
            host("curl", "https://evil.exampl{e}/"),
            Some(Reach::Unknown)
        );
        assert_eq!(
            reach("curl", "https://$u/", true, true, false),
            [Reach::Unknown]
        );
        assert!(connects("git", &["clone", "x"]) && !connects("git", &["status"]));
    }
}
