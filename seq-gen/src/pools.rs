//! The text the generator draws from: inputs, commands, values and conditions modelled on what
//! models really write (calls fanned out and gathered, shell one-liners full of `;` and quotes).
//!
//! Item-level texts are written as they stand *inside an item* (already JSON-escaped once:
//! `\"`, `\\`, `\n`, `\u00e9`); the file level escapes them a second time.

/// A group input. The same name always has the same type, so callers can pass their own input
/// on by reference and the types line up.
#[derive(Debug)]
pub(crate) struct Input {
    pub(crate) name: &'static str,
    pub(crate) ty: &'static str,
    /// A literal of the type, as item-level JSON.
    pub(crate) literal: &'static str,
}

pub(crate) const INPUTS: &[Input] = &[
    input("host", "string", r#""web-01""#),
    input("path", "string", r#""/srv/app""#),
    input("count", "integer", "3"),
    input("verbose", "bool", "true"),
    input("hosts", "array", r#"["web-01", "web-02", "db-主机"]"#),
    input("主机", "string", r#""prod-主机-7""#),
    input("limit", "number", "0.75"),
    input("opts", "object", r#"{"enabled": true, "mode": "fast"}"#),
];

const fn input(name: &'static str, ty: &'static str, literal: &'static str) -> Input {
    Input { name, ty, literal }
}

/// `cmd_run` commands: the bodies of item-level JSON strings.
pub(crate) const COMMANDS: &[&str] = &[
    r#"ssh $args.host uptime"#,
    r#"ssh $args.host top -bn1 | head -n 20"#,
    r#"echo \"=== raw (471B) ===\"; cat /tmp/x.json; echo; echo \"=== ps ===\"; ps aux | grep -c \"[r]un.py\"; echo \"=== log ===\"; cat /tmp/run.log"#,
    r#"printf 'r\u00e9sum\u00e9 de %s\\n' \"$args.host\""#,
    r#"cd $args.path\ngit pull --ff-only\nsystemctl restart app"#,
    r#"grep -c \"ERROR\" /var/log/主机/${args.host}.log"#,
    r#"dir C:\\Users\\admin\\logs /s /b"#,
    r#"du -sh $args.path/* | sort -h | tail -n $args.count"#,
    r#"for h in $args.hosts; do ping -c1 -W1 $h; done"#,
    r#"echo $HOME $$; ls -la \"$args.path\""#,
    r#"journalctl -u nginx --since \"1 hour ago\" | grep -E \"(5[0-9]{2})\" | wc -l"#,
    r#"curl -s -H \"Content-Type: application/json\" -d \"{\\\"host\\\": \\\"$args.主机\\\", \\\"limit\\\": $args.limit}\" http://localhost:8080/api/check"#,
    r#"ssh ${args.主机} 'df -h / ; free -m ; cat /proc/loadavg'"#,
    r#"tar -czf /backups/$args.host-$(date +%F).tar.gz $args.path && echo \"备份完成 ✓\""#,
    r#"awk -F'\\t' '{print $1\"\\t\"$3}' /srv/data/${args.path}.tsv | head -n $args.count"#,
    r#"python3 -c \"import json,sys; print(json.load(sys.stdin)['count'])\" < /tmp/状态.json"#,
    r#"kubectl get pods -n prod -o wide | grep -v Running; echo \"exit=$?\""#,
    r#"cat /etc/os-release; uname -a; nproc; free -h"#,
];

/// `cmd_run` timeouts passed as an argument: none longer than a group timeout below or the
/// default, so that a generated file checks clean.
pub(crate) const CMD_TIMEOUTS: &[&str] = &["30s", "10s", "20s", "5s"];

/// The literal arrays `each` items go through (item-level JSON), the empty one included.
pub(crate) const EACH_LISTS: &[&str] = &[
    r#"["a", "b", "c"]"#,
    r#"[]"#,
    r#"[{"host": "web-1", "port": 22}, {"host": "主机-2", "port": 2222}]"#,
    r#"[1, 2.5, null, true]"#,
];

/// `echo` values of `each` items: the element, its place, both in text.
pub(crate) const EACH_VALUES: &[&str] = &[
    r#"$each"#,
    r#"$each_index"#,
    r#""element $each_index is ${each}""#,
    r#"{"at": $each_index, "was": $each}"#,
];

/// `echo` values: item-level JSON, some with bare references.
pub(crate) const ECHO_VALUES: &[&str] = &[
    r#"{"host": $args.hosts[0], "tags": ["web", "主机"], "note": "caf\u00e9 \"ok\""}"#,
    r#"$args.opts"#,
    r#""检查 $args.host 完成""#,
    r#"{"count": $args.count, "limit": $args.limit, "verbose": $args.verbose}"#,
    r#"[1, 2.5, -3e2, true, null, "x\\y"]"#,
    r#"{"path": "$args.path", "nested": {"a": [{"b": "c"}, {"d": ["e", "f"]}], "ok": false}}"#,
    r#""line one\nline two \"quoted\" \\ done""#,
    r#"{"主机": "$args.主机", "端口": 22, "labels": {"env": "prod", "tier": "db"}}"#,
];

pub(crate) const READ_PATHS: &[&str] = &[
    r#"$args.path/config.json"#,
    r#"/etc/主机/${args.host}.conf"#,
    r#"/var/log/app/error.log"#,
    r#"C:\\ProgramData\\app\\settings.ini"#,
];

pub(crate) const LIST_PATHS: &[&str] = &[r#"$args.path"#, r#"/var/log"#, r#"/srv/数据/归档"#];

pub(crate) const MESSAGES: &[&str] = &[
    r#"主机 $args.host: 巡检完成\n"#,
    r#"部署完成 🚀 ${args.主机}"#,
    r#"checked $args.count hosts, limit=$args.limit"#,
    r#"\"$args.path\" is clean; nothing to do"#,
    r#"r\u00e9sultat: OK"#,
];

/// `when` conditions: bodies of *file-level* JSON strings.
pub(crate) const CONDITIONS: &[&str] = &[
    r#"$args.verbose == true"#,
    r#"$args.count > 0"#,
    r#"$args.host != \"\""#,
    r#"$args.主机 contains \"prod\""#,
    r#"$args.verbose"#,
    r#"$args.limit >= 0.5"#,
    r#"$args.opts.enabled == true"#,
    r#"$args.hosts contains \"web-01\""#,
];

/// Conditions of `seq_when_call`: bodies of *item-level* JSON strings.
pub(crate) const CALL_CONDITIONS: &[&str] = &[
    r#"$args.count > 3"#,
    r#"$args.host != \"localhost\""#,
    r#"$args.verbose"#,
];

pub(crate) const GROUP_STEMS: &[&str] = &[
    "拉取单台",
    "巡检全部",
    "fetch-node",
    "rotate-logs",
    "collect-metrics",
    "部署检查",
    "backup-db",
    "notify",
    "清理缓存",
    "sync-config",
];

/// Descriptions: bodies of file-level JSON strings (`\u00e9` kept as an escape on purpose).
pub(crate) const DESCRIPTIONS: &[&str] = &[
    "拉取一台节点的 uptime 与负载",
    "对三台节点并行调用「拉取单台」",
    "Collect metrics and write a r\\u00e9sum\\u00e9 of the \\\"hot\\\" hosts",
    "rotate logs older than 7 days; keep the last 3",
    "备份数据库并校验 checksum",
];

pub(crate) const SLOTS: &[&str] = &[
    "summary", "load", "status", "listing", "config", "payload", "report", "detail", "结果",
    "metrics", "backup", "state",
];

pub(crate) const ARRAY_SLOT: &str = "reports";

/// Group timeouts.
pub(crate) const TIMEOUTS: &[&str] = &["30s", "45s", "1m30s", "2m", "40s", "1h"];
