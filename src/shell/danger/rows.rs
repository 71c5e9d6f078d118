//! The rows: one per program or family of programs, each a list of cases
//! tried in order, or a procedural check (`files`, `services`).

use super::files;
use super::services;
use super::{Invocation, Judge, Row, When};
use crate::permission::{Risk, RiskAssessment};
use Risk::{High, Low, Medium};
use When::*;

const fn cases(programs: &'static [&'static str], c: &'static [(When, Risk, &'static str)]) -> Row {
    Row {
        programs,
        judge: Judge::Cases(c),
    }
}

const fn check(
    programs: &'static [&'static str],
    f: fn(&Invocation) -> Option<RiskAssessment>,
) -> Row {
    Row {
        programs,
        judge: Judge::Check(f),
    }
}

const NOT_DRY_RUN: When = Not(&ArgPrefix(&["--dry-run"]));
const PUBLISH: &str = "publishes a package";
const DRY_RUN: &str = "a dry run of publishing";
const INSTALLS: &str = "installs or removes packages (their install scripts run)";
const IN_PLACE: &str = "changes files in place";
const FORMATS: &str = "rewrites source files in place (formatting)";

pub(super) const ROWS: &[Row] = &[
    // Irreversible deletion and file changes.
    check(
        &["rm", "rmdir", "unlink", "shred", "srm", "wipe"],
        files::rm,
    ),
    check(&["find"], files::find),
    check(&["mv"], files::mv),
    check(&["cp"], files::cp),
    check(&["chmod"], files::chmod),
    check(&["chown", "chgrp"], files::chown),
    check(&["dd"], files::dd),
    check(&["rsync"], files::rsync),
    cases(&["truncate"], &[(Always, Medium, IN_PLACE)]),
    cases(
        &["ed", "ex", "vi", "vim", "nvim", "emacs", "nano", "red"],
        &[(
            Always,
            Medium,
            "edits files with an editor run from the command line",
        )],
    ),
    cases(
        &["awk", "gawk"],
        &[(
            AnyOf(&[
                Pair("-i", "inplace"),
                Pair("--include", "inplace"),
                ArgPrefix(&["-iinplace", "--include=inplace"]),
            ]),
            Medium,
            IN_PLACE,
        )],
    ),
    cases(
        &["sed"],
        &[(
            AnyOf(&[Flag('i', "--in-place"), ArgPrefix(&["-i", "--in-place"])]),
            Medium,
            IN_PLACE,
        )],
    ),
    check(&["perl"], files::perl),
    cases(&["ruby"], &[(Flag('i', "--in-place"), Medium, IN_PLACE)]),
    cases(
        &["tee"],
        &[(Always, Medium, "writes the files it is given")],
    ),
    cases(
        &["mkdir", "touch"],
        &[(Always, Low, "creates files or directories")],
    ),
    cases(
        &["ln"],
        &[
            (Flag('f', "--force"), Medium, "replaces files with links"),
            (Always, Low, "creates links"),
        ],
    ),
    cases(&["install"], &[(Always, Medium, "copies files into place")]),
    // Repository history and state.
    check(&["git"], services::git),
    // Disks, mounts, power, processes.
    cases(
        &[
            "mkfs",
            "mke2fs",
            "mkswap",
            "fdisk",
            "sfdisk",
            "cfdisk",
            "gdisk",
            "sgdisk",
            "parted",
            "wipefs",
            "blkdiscard",
        ],
        &[(Always, High, "formats or partitions a disk")],
    ),
    cases(
        &[
            "mount",
            "umount",
            "swapon",
            "swapoff",
            "losetup",
            "cryptsetup",
        ],
        &[(Always, High, "mounts or unmounts file systems")],
    ),
    cases(
        &["shutdown"],
        &[
            (Arg(&["-c"]), Medium, "cancels a pending shutdown"),
            (Always, High, "shuts down or restarts the machine"),
        ],
    ),
    cases(
        &["reboot", "halt", "poweroff", "kexec"],
        &[(Always, High, "shuts down or restarts the machine")],
    ),
    cases(
        &["init", "telinit"],
        &[(Arg(&["0", "6"]), High, "shuts down or restarts the machine")],
    ),
    cases(
        &["loginctl"],
        &[(
            Sub(&["poweroff", "reboot", "halt", "suspend", "hibernate"]),
            High,
            "shuts down or restarts the machine",
        )],
    ),
    cases(
        &["systemctl"],
        &[
            (
                Sub(&[
                    "poweroff",
                    "reboot",
                    "halt",
                    "kexec",
                    "suspend",
                    "hibernate",
                    "rescue",
                    "emergency",
                    "soft-reboot",
                ]),
                High,
                "shuts down or restarts the machine",
            ),
            (
                Sub(&["enable", "link", "edit"]),
                High,
                "installs a service that starts by itself (persistence)",
            ),
            (
                Sub(&[
                    "status",
                    "show",
                    "list-units",
                    "list-unit-files",
                    "is-active",
                    "is-enabled",
                    "cat",
                ]),
                Low,
                "shows system services",
            ),
            (Always, Medium, "changes system services"),
        ],
    ),
    check(&["kill"], files::kill),
    cases(&["killall5"], &[(Always, High, "kills every process")]),
    check(&["pkill", "killall"], files::pkill),
    // History and persistence.
    cases(
        &["history"],
        &[(
            AnyOf(&[
                Flag('c', "--clear"),
                All(&[Flag('w', "--write"), Arg(&["/dev/null"])]),
            ]),
            High,
            "clears shell history",
        )],
    ),
    cases(
        &["unset"],
        &[(ArgPrefix(&["HIST"]), High, "disables shell history")],
    ),
    check(
        &["export", "declare", "typeset", "readonly", "local"],
        files::declaration,
    ),
    cases(
        &["set"],
        &[(Pair("+o", "history"), High, "disables shell history")],
    ),
    cases(
        &["crontab"],
        &[
            (Flag('r', "--remove"), High, "removes every cron job"),
            (Flag('l', "--list"), Low, "lists cron jobs"),
            (
                Always,
                High,
                "installs cron jobs that run commands later (persistence)",
            ),
        ],
    ),
    cases(
        &["at", "batch"],
        &[
            (
                AnyOf(&[Flag('l', "--list"), Arg(&["-c"])]),
                Low,
                "lists scheduled jobs",
            ),
            (
                Always,
                High,
                "schedules commands to run later (persistence)",
            ),
        ],
    ),
    cases(
        &["setcap"],
        &[(
            Always,
            High,
            "grants capabilities to a program (privilege escalation)",
        )],
    ),
    cases(
        &[
            "useradd", "userdel", "usermod", "passwd", "chpasswd", "visudo", "groupadd",
            "groupdel", "adduser", "deluser",
        ],
        &[(Always, High, "changes user accounts")],
    ),
    cases(
        &["iptables", "ip6tables", "nft", "ufw", "firewall-cmd"],
        &[
            (
                AnyOf(&[Flag('L', "--list"), Arg(&["status", "list"])]),
                Low,
                "shows the firewall",
            ),
            (Always, High, "changes the firewall"),
        ],
    ),
    // Secrets.
    cases(
        &["gh"],
        &[
            (Pair("auth", "token"), High, "prints a GitHub token"),
            (Always, Medium, "uses GitHub"),
        ],
    ),
    cases(
        &["gpg", "gpg2"],
        &[(ArgPrefix(&["--export-secret"]), High, "exports secret keys")],
    ),
    cases(
        &["security"],
        &[(
            All(&[
                ArgPrefix(&["find-generic-password", "find-internet-password"]),
                Arg(&["-w"]),
            ]),
            High,
            "prints a stored password",
        )],
    ),
    // Network.
    cases(
        &[
            "curl",
            "wget",
            "aria2c",
            "http",
            "https",
            "xh",
            "lwp-request",
        ],
        &[(Always, Medium, "uses the network")],
    ),
    cases(
        &[
            "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp",
        ],
        &[(Always, Medium, "connects to another machine")],
    ),
    // Infrastructure and data.
    check(&["docker", "podman", "nerdctl"], services::container),
    cases(
        &["docker-compose", "podman-compose"],
        &[
            (
                All(&[Arg(&["down"]), Flag('v', "--volumes")]),
                High,
                "deletes the project's Docker volumes (their data is lost)",
            ),
            (Always, Medium, "runs containers"),
        ],
    ),
    cases(
        &["kubectl", "oc"],
        &[
            (
                All(&[
                    Pair("config", "view"),
                    AnyOf(&[ArgPrefix(&["--raw", "--flatten"])]),
                ]),
                High,
                "prints cluster credentials",
            ),
            (
                AnyOf(&[
                    Sub(&["delete", "drain"]),
                    All(&[Sub(&["replace"]), Flag('\0', "--force")]),
                ]),
                High,
                "deletes Kubernetes resources",
            ),
            (
                Sub(&[
                    "get",
                    "describe",
                    "logs",
                    "version",
                    "explain",
                    "top",
                    "api-resources",
                    "cluster-info",
                ]),
                Low,
                "reads Kubernetes cluster state",
            ),
            (Always, Medium, "changes a Kubernetes cluster"),
        ],
    ),
    cases(
        &["helm"],
        &[
            (
                Sub(&["uninstall", "delete", "del"]),
                High,
                "deletes a Helm release",
            ),
            (All(&[Sub(&["push"]), NOT_DRY_RUN]), High, PUBLISH),
            (Always, Medium, "changes a Kubernetes cluster"),
        ],
    ),
    cases(
        &["terraform", "tofu", "terragrunt"],
        &[
            (Arg(&["destroy"]), High, "destroys infrastructure"),
            (
                All(&[
                    Sub(&["apply"]),
                    ArgPrefix(&["-auto-approve", "--auto-approve", "-destroy"]),
                ]),
                High,
                "destroys or changes infrastructure without review",
            ),
            (
                All(&[Sub(&["state"]), Arg(&["rm"])]),
                High,
                "removes resources from the infrastructure's state",
            ),
            (
                Sub(&[
                    "plan",
                    "validate",
                    "fmt",
                    "show",
                    "output",
                    "version",
                    "providers",
                    "graph",
                ]),
                Low,
                "plans or inspects infrastructure",
            ),
            (Always, Medium, "changes infrastructure"),
        ],
    ),
    cases(
        &["pulumi"],
        &[
            (
                AnyOf(&[Sub(&["destroy"]), All(&[Sub(&["up"]), Flag('y', "--yes")])]),
                High,
                "destroys or changes infrastructure without review",
            ),
            (Always, Medium, "changes infrastructure"),
        ],
    ),
    cases(
        &["cdk", "sls", "serverless"],
        &[(
            Sub(&["destroy", "remove"]),
            High,
            "destroys cloud infrastructure",
        )],
    ),
    check(&["aws"], services::aws),
    check(&["gsutil"], services::gsutil),
    check(&["gcloud", "az"], services::gcloud),
    cases(
        &["s3cmd"],
        &[(
            All(&[
                Arg(&["del", "rm", "rb"]),
                AnyOf(&[Flag('r', "--recursive"), Flag('\0', "--force")]),
            ]),
            High,
            "deletes cloud storage recursively",
        )],
    ),
    cases(
        &["mc"],
        &[
            (
                All(&[
                    Arg(&["rm"]),
                    AnyOf(&[Flag('\0', "--recursive"), Flag('\0', "--force")]),
                ]),
                High,
                "deletes cloud storage recursively",
            ),
            (Arg(&["rb"]), High, "deletes a storage bucket"),
        ],
    ),
    cases(
        &["rclone"],
        &[
            (
                Sub(&["purge", "delete", "deletefile", "rmdirs"]),
                High,
                "deletes cloud storage",
            ),
            (
                Sub(&["sync"]),
                Medium,
                "mirrors files, deleting extra ones at the destination",
            ),
        ],
    ),
    cases(
        &["zpool", "zfs"],
        &[(
            Sub(&["destroy", "labelclear"]),
            High,
            "destroys a storage pool or data set",
        )],
    ),
    cases(
        &["diskutil"],
        &[(
            ArgPrefix(&["erase", "partition", "zeroDisk", "secureErase"]),
            High,
            "formats or partitions a disk",
        )],
    ),
    cases(
        &["dropdb", "dropuser"],
        &[(Always, High, "drops a database")],
    ),
    cases(
        &["mysqladmin"],
        &[(AnyOf(&[Arg(&["drop", "DROP"])]), High, "drops a database")],
    ),
    check(
        &[
            "psql",
            "mysql",
            "mariadb",
            "sqlite3",
            "mongosh",
            "mongo",
            "clickhouse-client",
            "cqlsh",
            "cockroach",
            "duckdb",
        ],
        services::sql,
    ),
    check(&["redis-cli"], services::redis),
    cases(
        &["rails", "rake", "bin/rails", "./bin/rails"],
        &[(
            Arg(&[
                "db:drop",
                "db:reset",
                "db:purge",
                "db:schema:load",
                "db:drop:all",
            ]),
            High,
            "drops or wipes database data",
        )],
    ),
    cases(
        &["prisma"],
        &[(
            AnyOf(&[
                Pair("migrate", "reset"),
                All(&[Pair("db", "push"), Flag('\0', "--force-reset")]),
            ]),
            High,
            "drops or wipes database data",
        )],
    ),
    // Interpreters and project tools.
    cases(
        &["python", "python3"],
        &[(
            All(&[
                ArgSuffix(&["manage.py"]),
                Arg(&["flush", "reset_db", "sqlflush"]),
            ]),
            High,
            "drops or wipes database data",
        )],
    ),
    // Publishing and packages.
    cases(
        &["npm", "pnpm", "yarn", "bun"],
        &[
            (All(&[Pair("npm", "publish"), NOT_DRY_RUN]), High, PUBLISH),
            (
                All(&[Sub(&["publish", "unpublish"]), NOT_DRY_RUN]),
                High,
                PUBLISH,
            ),
            (Sub(&["publish"]), Low, DRY_RUN),
            (
                Sub(&[
                    "install",
                    "i",
                    "ci",
                    "add",
                    "update",
                    "upgrade",
                    "up",
                    "uninstall",
                    "remove",
                    "rm",
                    "un",
                    "link",
                    "dedupe",
                    "prune",
                ]),
                Medium,
                INSTALLS,
            ),
            (
                Sub(&["exec", "x", "dlx"]),
                Medium,
                "downloads and runs a package",
            ),
        ],
    ),
    cases(
        &["npx", "pnpx", "bunx"],
        &[(Always, Medium, "downloads and runs a package")],
    ),
    cases(
        &["cargo"],
        &[
            (
                All(&[Sub(&["publish", "yank", "owner"]), NOT_DRY_RUN]),
                High,
                PUBLISH,
            ),
            (Sub(&["publish"]), Low, DRY_RUN),
            (
                Sub(&["install", "uninstall", "add", "remove", "rm", "update"]),
                Medium,
                INSTALLS,
            ),
            (Sub(&["fmt"]), Medium, FORMATS),
            (
                All(&[Sub(&["clippy", "fix"]), Arg(&["--fix"])]),
                Medium,
                IN_PLACE,
            ),
            (Sub(&["fix"]), Medium, IN_PLACE),
        ],
    ),
    cases(
        &["gem"],
        &[
            (All(&[Sub(&["push", "yank"]), NOT_DRY_RUN]), High, PUBLISH),
            (Sub(&["install", "uninstall", "update"]), Medium, INSTALLS),
        ],
    ),
    cases(&["twine"], &[(Sub(&["upload"]), High, PUBLISH)]),
    cases(
        &["poetry", "uv", "hatch", "flit", "pdm"],
        &[
            (All(&[Sub(&["publish"]), NOT_DRY_RUN]), High, PUBLISH),
            (Sub(&["publish"]), Low, DRY_RUN),
            (
                Sub(&["add", "remove", "install", "sync", "lock", "update", "pip"]),
                Medium,
                INSTALLS,
            ),
        ],
    ),
    cases(
        &[
            "pip",
            "pip3",
            "pipx",
            "conda",
            "mamba",
            "micromamba",
            "easy_install",
        ],
        &[(
            Sub(&[
                "install",
                "uninstall",
                "remove",
                "update",
                "upgrade",
                "create",
                "inject",
            ]),
            Medium,
            INSTALLS,
        )],
    ),
    cases(
        &["go"],
        &[
            (Sub(&["get", "install"]), Medium, INSTALLS),
            (Sub(&["fmt", "fix"]), Medium, FORMATS),
            (Sub(&["mod"]), Low, "updates the module files"),
        ],
    ),
    cases(
        &["bundle", "composer", "brew", "port", "nix-env"],
        &[(
            Sub(&[
                "install",
                "update",
                "add",
                "require",
                "remove",
                "uninstall",
                "upgrade",
                "-i",
                "-e",
            ]),
            Medium,
            INSTALLS,
        )],
    ),
    cases(&["mvn"], &[(Arg(&["deploy"]), High, PUBLISH)]),
    cases(
        &["gradle", "./gradlew", "gradlew"],
        &[(ArgPrefix(&["publish"]), High, PUBLISH)],
    ),
    cases(
        &["dotnet"],
        &[
            (Pair("nuget", "push"), High, PUBLISH),
            (Sub(&["add", "remove"]), Medium, INSTALLS),
        ],
    ),
    cases(&["vsce", "ovsx"], &[(Sub(&["publish"]), High, PUBLISH)]),
    cases(
        &["pod"],
        &[
            (Pair("trunk", "push"), High, PUBLISH),
            (Sub(&["install", "update"]), Medium, INSTALLS),
        ],
    ),
    cases(
        &["lerna", "changeset"],
        &[(Arg(&["publish"]), High, PUBLISH)],
    ),
    cases(
        &["semantic-release", "release-it", "np"],
        &[(NOT_DRY_RUN, High, PUBLISH), (Always, Low, DRY_RUN)],
    ),
    cases(
        &["goreleaser"],
        &[(
            All(&[Arg(&["release"]), Not(&Flag('\0', "--snapshot"))]),
            High,
            PUBLISH,
        )],
    ),
    cases(
        &["mix"],
        &[
            (ArgPrefix(&["hex.publish"]), High, PUBLISH),
            (ArgPrefix(&["deps.get", "deps.update"]), Medium, INSTALLS),
        ],
    ),
    cases(
        &["dart", "flutter"],
        &[
            (Pair("pub", "publish"), High, PUBLISH),
            (Pair("pub", "get"), Medium, INSTALLS),
        ],
    ),
    cases(
        &["cabal"],
        &[
            (Arg(&["upload"]), High, PUBLISH),
            (Sub(&["install"]), Medium, INSTALLS),
        ],
    ),
    cases(
        &["buildah", "skopeo"],
        &[(Sub(&["push", "copy"]), High, PUBLISH)],
    ),
    // Formatters that rewrite files.
    cases(&["gofmt", "goimports"], &[(Flag('w', ""), Medium, FORMATS)]),
    cases(
        &["rustfmt", "black", "autopep8", "isort", "clang-format"],
        &[(
            Not(&ArgPrefix(&["--check", "--diff", "--version", "-n"])),
            Medium,
            FORMATS,
        )],
    ),
    cases(
        &["prettier", "eslint", "ruff", "biome"],
        &[(
            ArgPrefix(&["--write", "--fix", "-w", "format", "--apply"]),
            Medium,
            FORMATS,
        )],
    ),
];
