//! What "allow for this session" remembers of a command: its prefix by an
//! arity table (`git commit`, `cargo test`, `npm run build`, `docker compose
//! up`); a plain program like `ls` is its own prefix. And the banned list.

/// How many words (program included) name the action. Unlisted programs: 1.
const ARITY: &[(&str, usize)] = &[
    ("git", 2),
    ("cargo", 2),
    ("npm", 2),
    ("pnpm", 2),
    ("yarn", 2),
    ("bun", 2),
    ("deno", 2),
    ("go", 2),
    ("docker", 2),
    ("podman", 2),
    ("kubectl", 2),
    ("helm", 2),
    ("terraform", 2),
    ("tofu", 2),
    ("pulumi", 2),
    ("make", 2),
    ("just", 2),
    ("pip", 2),
    ("pip3", 2),
    ("uv", 2),
    ("poetry", 2),
    ("pipenv", 2),
    ("bundle", 2),
    ("gem", 2),
    ("rake", 2),
    ("mvn", 2),
    ("gradle", 2),
    ("./gradlew", 2),
    ("dotnet", 2),
    ("rustup", 2),
    ("brew", 2),
    ("systemctl", 2),
    ("gh", 3),
    ("aws", 3),
    ("gcloud", 3),
    ("az", 3),
    ("npx", 2),
    ("pnpx", 2),
    ("node", 2),
    ("python", 2),
    ("python3", 2),
    ("ruby", 2),
    ("perl", 2),
    ("bash", 2),
    ("sh", 2),
    ("zsh", 2),
    ("composer", 2),
    ("mix", 2),
    ("stack", 2),
    ("cabal", 2),
    ("swift", 2),
    ("flutter", 2),
    ("dart", 2),
    ("redis-cli", 2),
    ("psql", 1),
    ("nix", 2),
    ("ansible-playbook", 2),
    ("cmake", 1),
    ("ssh", 2),
    ("scp", 1),
];

/// Subcommands that take one more word (`npm run build`, `docker compose up`).
const DEEPER: &[(&str, &str)] = &[
    ("npm", "run"),
    ("pnpm", "run"),
    ("yarn", "run"),
    ("bun", "run"),
    ("uv", "run"),
    ("poetry", "run"),
    ("bundle", "exec"),
    ("docker", "compose"),
    ("podman", "compose"),
    ("cargo", "run"),
    ("go", "run"),
    ("python", "-m"),
    ("python3", "-m"),
    ("git", "stash"),
    ("git", "remote"),
    ("kubectl", "rollout"),
    ("dotnet", "ef"),
    ("npx", "--yes"),
];

/// The prefix of `argv`: the program and its action words, flags skipped.
pub fn prefix(argv: &[&str]) -> String {
    let Some(&program) = argv.first() else {
        return String::new();
    };
    let mut arity = ARITY
        .iter()
        .find(|(p, _)| *p == program)
        .map_or(1, |(_, n)| *n);
    let mut words = vec![program];
    let mut rest = argv[1..].iter();
    while words.len() < arity {
        let Some(&w) = rest.next() else { break };
        // Flags are not part of the action, except `python -m`.
        if w.starts_with('-') && !(w == "-m" && program.starts_with("python")) {
            // `git -C dir`: a flag with a value before the subcommand.
            if words.len() == 1 && matches!(w, "-C" | "-c") {
                rest.next();
            }
            continue;
        }
        if words.len() == 2 && DEEPER.iter().any(|(p, s)| *p == program && *s == words[1]) {
            arity += 1;
        }
        words.push(w);
        if words.len() == 2 && DEEPER.iter().any(|(p, s)| *p == program && *s == w) {
            arity = arity.max(3);
        }
    }
    words.join(" ")
}

/// One banned command: its words (`apt-get install`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ban {
    pub words: Vec<String>,
    pub why: String,
}

impl Ban {
    pub fn parse(entry: &str) -> Ban {
        Ban {
            words: entry.split_whitespace().map(str::to_string).collect(),
            why: default_reason(entry).to_string(),
        }
    }

    pub fn text(&self) -> String {
        self.words.join(" ")
    }

    /// The program matches and the further words appear in order (flags in
    /// between are fine: `apt-get -y install`).
    pub fn matches(&self, argv: &[&str]) -> bool {
        let Some((first, more)) = self.words.split_first() else {
            return false;
        };
        if argv.first() != Some(&first.as_str()) {
            return false;
        }
        let mut rest = argv[1..].iter();
        // A short flag in the ban (`pacman -S`) also matches in a cluster (`-Syu`).
        let fits = |w: &str, a: &str| {
            a == w
                || (w.len() == 2
                    && w.starts_with('-')
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].contains(&w[1..]))
        };
        more.iter().all(|w| rest.any(|a| fits(w, a)))
    }
}

/// Banned unless the person's config says otherwise.
pub const DEFAULT_BANNED: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "pkexec",
    "run0",
    "apt install",
    "apt remove",
    "apt purge",
    "apt upgrade",
    "apt full-upgrade",
    "apt autoremove",
    "apt-get install",
    "apt-get remove",
    "apt-get purge",
    "apt-get upgrade",
    "apt-get dist-upgrade",
    "apt-get autoremove",
    "aptitude install",
    "aptitude remove",
    "dpkg -i",
    "dpkg --install",
    "dpkg -r",
    "dpkg -P",
    "dpkg --remove",
    "dpkg --purge",
    "yum install",
    "yum remove",
    "yum update",
    "yum erase",
    "dnf install",
    "dnf remove",
    "dnf upgrade",
    "dnf update",
    "zypper install",
    "zypper in",
    "zypper remove",
    "zypper rm",
    "pacman -S",
    "pacman --sync",
    "pacman --remove",
    "pacman --upgrade",
    "apt reinstall",
    "apt-get reinstall",
    "apt-get build-dep",
    "yum groupinstall",
    "yum reinstall",
    "microdnf install",
    "nala install",
    "nala remove",
    "xbps-install",
    "xbps-remove",
    "pacman -R",
    "pacman -U",
    "pacman -Syu",
    "apk add",
    "apk del",
    "emerge",
    "snap install",
    "snap remove",
    "rpm -i",
    "rpm -U",
    "rpm -e",
    "port install",
    "mkfs",
    "mkfs.ext4",
    "mkfs.ext3",
    "mkfs.xfs",
    "mkfs.btrfs",
    "mkfs.vfat",
    "mkfs.fat",
    "mke2fs",
    "mkswap",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "wipefs",
    "mount",
    "umount",
    "swapon",
    "swapoff",
    "losetup",
];

fn default_reason(entry: &str) -> &'static str {
    let program = entry.split_whitespace().next().unwrap_or_default();
    match program {
        "sudo" | "su" | "doas" | "pkexec" | "run0" => "privilege escalation",
        "mount" | "umount" | "swapon" | "swapoff" | "losetup" => "mounting file systems",
        p if p.starts_with("mkfs")
            || p.starts_with("mke2fs")
            || p.contains("disk")
            || matches!(p, "mkswap" | "parted" | "wipefs") =>
        {
            "disk formatting or partitioning"
        }
        "apt" | "apt-get" | "aptitude" | "dpkg" | "yum" | "dnf" | "zypper" | "pacman" | "apk"
        | "emerge" | "snap" | "rpm" | "port" => "system-wide package installation",
        _ => "banned in your configuration",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(cmd: &str) -> String {
        prefix(&cmd.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn prefixes_by_arity() {
        assert_eq!(p("git commit -m x"), "git commit");
        assert_eq!(p("git -C sub push --force"), "git push");
        assert_eq!(p("cargo test --all"), "cargo test");
        assert_eq!(p("npm run build -- --watch"), "npm run build");
        assert_eq!(p("docker compose up -d"), "docker compose up");
        assert_eq!(p("ls -la src"), "ls");
        assert_eq!(p("python -m pytest -q"), "python -m pytest");
        assert_eq!(p("gh pr create --fill"), "gh pr create");
        assert_eq!(p("git"), "git");
    }

    #[test]
    fn bans_match_with_flags_between() {
        let b = Ban::parse("apt-get install");
        assert!(b.matches(&["apt-get", "-y", "install", "curl"]));
        assert!(!b.matches(&["apt-get", "update"]));
        assert_eq!(b.why, "system-wide package installation");
        assert!(Ban::parse("sudo").matches(&["sudo"]));
    }
}
