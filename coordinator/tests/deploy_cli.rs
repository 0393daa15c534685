//! The deployment files under `deploy/` run the real binaries with flags that exist.
//!
//! Every invocation of `coordinator` or `worker` found in
//! - `command:` / `args:` flow sequences of every YAML file (compose, Kubernetes manifests,
//!   kustomize overlays and components); a container's `command` followed by its `args` is
//!   one command line, and `args` alone go through the image's entrypoint, whose first word
//!   picks the program,
//! - `ExecStart=` of the systemd units,
//! - command examples: comment lines indented as code (`#   ...`) in those files and fenced
//!   code blocks of `deploy/README.md`,
//!
//! is walked against the binary's own `--help` (subcommand by subcommand): every flag must be
//! listed there, a flag taking a value must have one, a flag taking none must not, required
//! flags (the `Usage:` line) must be present and positionals must be expected. Values are not
//! parsed, so placeholders (`$(POD_NAME)`, `${WORKER_CONCURRENCY:-2}`, `%i`, `vtw_...`) pass.
//! (`--help` itself stops clap at the first help flag, so it cannot check the other flags.)
//!
//! The worker binary is another package's; it is looked for next to the coordinator binary.
//! `cargo test --workspace` builds it (the worker package has integration tests); alone,
//! `cargo test -p coordinator` needs a `cargo build --workspace` (same profile) first.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

fn deploy_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

fn binary(program: &str) -> PathBuf {
    let coordinator = Path::new(env!("CARGO_BIN_EXE_coordinator"));
    if program == "coordinator" {
        return coordinator.to_path_buf();
    }
    let path = coordinator.with_file_name(format!("{program}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing: build the workspace's binaries first (`cargo build --workspace` with the \
         profile of this test run; `cargo test --workspace` does it)",
        path.display()
    );
    path
}

/// One subcommand's interface, read from its `--help`.
#[derive(Debug, Default)]
struct Help {
    /// Long and short flags; true when the flag takes a value.
    flags: HashMap<String, bool>,
    subcommands: BTreeSet<String>,
    /// Flags the `Usage:` line requires.
    required: Vec<String>,
    /// Flags an environment variable can stand for (`[env: NAME]`).
    from_env: BTreeSet<String>,
    positionals: usize,
}

/// `subcommand`: the last word of the command path (its `Usage:` line also shows the flags
/// its parents require, before it).
fn parse_help(text: &str, subcommand: Option<&str>) -> Help {
    let mut help = Help::default();
    let mut section = "";
    let mut last: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(usage) = line.strip_prefix("Usage:") {
            let mut depth = 0i32;
            let mut own = subcommand.is_none();
            for word in usage.split_whitespace() {
                if Some(word) == subcommand {
                    own = true;
                }
                if own && depth == 0 && word.starts_with("--") {
                    help.required.push(word.to_string());
                }
                depth += word.matches('[').count() as i32 - word.matches(']').count() as i32;
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            section = line.trim_end_matches(':');
            continue;
        }
        let item = line.trim_start();
        match section {
            // Entries are indented by two; wrapped descriptions by more.
            "Commands" if line.len() - item.len() == 2 => {
                if let Some(name) = item.split_whitespace().next() {
                    help.subcommands.insert(name.to_string());
                }
            }
            "Arguments" if item.starts_with('<') || item.starts_with('[') => {
                help.positionals += 1;
            }
            "Options" if item.starts_with("--") || is_short(item) => {
                // `-s, --long <VALUE>  description`, `--long <VALUE>`, `--long`.
                let mut names = Vec::new();
                let mut takes_value = false;
                for word in item.split_whitespace() {
                    let word = word.trim_end_matches(',');
                    if word.starts_with('-') && names.len() < 2 && !takes_value {
                        names.push(word.to_string());
                    } else if word.starts_with('<') || word.starts_with("[<") {
                        takes_value = true;
                        break;
                    } else {
                        break;
                    }
                }
                for name in &names {
                    help.flags.insert(name.clone(), takes_value);
                }
                last = names;
                if line.contains("[env: ") {
                    help.from_env.extend(last.iter().cloned());
                }
            }
            "Options" if line.contains("[env: ") => {
                // Long help: the `[env: NAME]` of the flag above, on a line of its own.
                help.from_env.extend(last.iter().cloned());
            }
            _ => {}
        }
    }
    help
}

fn is_short(item: &str) -> bool {
    let b = item.as_bytes();
    b.len() >= 2 && b[0] == b'-' && b[1].is_ascii_alphanumeric()
}

#[derive(Default)]
struct Helps(BTreeMap<(String, Vec<String>), Help>);

impl Helps {
    fn get(&mut self, program: &str, path: &[String]) -> &Help {
        self.0
            .entry((program.to_string(), path.to_vec()))
            .or_insert_with(|| {
                let out = Command::new(binary(program))
                    .args(path)
                    .arg("--help")
                    .output()
                    .expect("the binary runs");
                assert!(
                    out.status.success(),
                    "`{program} {} --help` failed: {}",
                    path.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                );
                parse_help(
                    &String::from_utf8_lossy(&out.stdout),
                    path.last().map(String::as_str),
                )
            })
    }
}

/// A command line found in a deployment file.
#[derive(Debug)]
struct Invocation {
    source: String,
    /// `coordinator` or `worker`.
    program: String,
    args: Vec<String>,
}

/// `coordinator`/`worker`, also as a path (`/usr/local/bin/worker`, `target/release/worker`).
fn program_of(word: &str) -> Option<&'static str> {
    let name = word.rsplit('/').next().unwrap_or(word);
    let pathlike = word == name
        || word.starts_with('/')
        || word.starts_with("./")
        || word.starts_with("target/");
    match name {
        "coordinator" if pathlike => Some("coordinator"),
        "worker" if pathlike => Some("worker"),
        _ => None,
    }
}

/// Problems of one invocation, checked against the binaries' help.
fn check(helps: &mut Helps, inv: &Invocation) -> Vec<String> {
    let mut problems = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut positionals = 0;
    let mut i = 0;
    let args = &inv.args;
    while i < args.len() {
        let arg = &args[i];
        let help = helps.get(&inv.program, &path);
        let here = || format!("`{}`", command_name(&inv.program, &path));
        if arg == "--" {
            break;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (arg.as_str(), None),
            };
            match help.flags.get(name) {
                None => {
                    problems.push(format!("{} does not accept {name}", here()));
                    // Its value, if any, is no positional.
                    if inline.is_none() && args.get(i + 1).is_some_and(|v| !v.starts_with('-')) {
                        i += 1;
                    }
                }
                Some(true) if inline.is_none() => match args.get(i + 1) {
                    Some(v) if !v.starts_with("--") => i += 1,
                    _ => problems.push(format!("{} {name} needs a value", here())),
                },
                Some(false) if inline.is_some() => {
                    problems.push(format!("{} {name} takes no value", here()))
                }
                Some(_) => {}
            }
            seen.insert(name.to_string());
        } else if positionals == 0 && help.subcommands.contains(arg) {
            problems.extend(missing(&inv.program, &path, help, &seen));
            path.push(arg.clone());
            seen.clear();
        } else if positionals < help.positionals {
            positionals += 1;
        } else {
            problems.push(format!("{} does not expect the argument {arg:?}", here()));
        }
        i += 1;
    }
    let help = helps.get(&inv.program, &path);
    if !help.subcommands.is_empty() && path.is_empty() && inv.program == "coordinator" {
        problems.push("`coordinator` needs a subcommand".to_string());
    }
    problems.extend(missing(&inv.program, &path, help, &seen));
    // Without a subcommand the worker joins a cluster, which takes a coordinator URL.
    if inv.program == "worker" && path.is_empty() && !seen.contains("--coordinator") {
        problems.push("`worker` without a subcommand needs --coordinator".to_string());
    }
    problems
        .into_iter()
        .map(|p| {
            format!(
                "{}: {p}\n    in: {} {}",
                inv.source,
                inv.program,
                args.join(" ")
            )
        })
        .collect()
}

fn command_name(program: &str, path: &[String]) -> String {
    std::iter::once(program.to_string())
        .chain(path.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Required flags of one subcommand level that are neither given nor taken from the environment.
fn missing(program: &str, path: &[String], help: &Help, seen: &BTreeSet<String>) -> Vec<String> {
    help.required
        .iter()
        .filter(|f| !seen.contains(*f) && !help.from_env.contains(*f))
        .map(|f| format!("`{}` needs {f}", command_name(program, path)))
        .collect()
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn relative(path: &Path) -> String {
    let root = deploy_dir();
    format!(
        "deploy/{}",
        path.strip_prefix(&root).unwrap_or(path).display()
    )
}

/// A YAML flow sequence starting at `text[0] == '['`: its items and the bytes it spans.
fn flow_sequence(text: &str) -> Result<(Vec<String>, usize), String> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut items = Vec::new();
    let mut item = String::new();
    let mut has_item = false;
    let mut k = 1;
    while k < chars.len() {
        let (_, c) = chars[k];
        match c {
            '"' => {
                k += 1;
                while k < chars.len() && chars[k].1 != '"' {
                    if chars[k].1 == '\\' && k + 1 < chars.len() {
                        k += 1;
                        item.push(match chars[k].1 {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                    } else {
                        item.push(chars[k].1);
                    }
                    k += 1;
                }
                has_item = true;
            }
            '\'' => {
                k += 1;
                while k < chars.len() {
                    if chars[k].1 == '\'' {
                        if chars.get(k + 1).map(|c| c.1) == Some('\'') {
                            item.push('\'');
                            k += 2;
                            continue;
                        }
                        break;
                    }
                    item.push(chars[k].1);
                    k += 1;
                }
                has_item = true;
            }
            '#' if k > 0 && chars[k - 1].1.is_whitespace() => {
                while k < chars.len() && chars[k].1 != '\n' {
                    k += 1;
                }
            }
            ',' | ']' => {
                if has_item {
                    items.push(item.trim().to_string());
                }
                item.clear();
                has_item = false;
                if c == ']' {
                    return Ok((items, chars[k].0 + 1));
                }
            }
            '[' | '{' => return Err("nested collections are not command lines".into()),
            c if c.is_whitespace() => {
                if has_item {
                    item.push(c);
                }
            }
            c => {
                item.push(c);
                has_item = true;
            }
        }
        k += 1;
    }
    Err("unterminated flow sequence".into())
}

/// `command:` and `args:` lists of a YAML file, in order: (line, indent, key, items).
fn yaml_lists(path: &Path, text: &str) -> Vec<(usize, usize, String, Vec<String>)> {
    let mut lists = Vec::new();
    let mut offset = 0;
    for (n, line) in text.lines().enumerate() {
        let start = offset;
        offset += line.len() + 1;
        let body = line.trim_start();
        let indent = line.len() - body.len();
        let body_start = start + indent;
        let (indent, body, body_start) = match body.strip_prefix("- ") {
            Some(rest) => (indent + 2, rest, body_start + 2),
            None => (indent, body, body_start),
        };
        for key in ["command", "args"] {
            let Some(rest) = body.strip_prefix(key).and_then(|r| r.strip_prefix(':')) else {
                continue;
            };
            let value = rest.trim_start();
            let at = format!("{}:{}", relative(path), n + 1);
            let next = text
                .lines()
                .skip(n + 1)
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'));
            if value.is_empty() && !next.is_some_and(|l| l.starts_with("- ")) {
                continue; // a mapping, e.g. compose's build `args:`
            }
            assert!(
                value.starts_with('['),
                "{at}: write `{key}:` as a flow sequence ([\"prog\", \"--flag\", ...]) so that \
                 deploy_cli.rs can check it"
            );
            let from = body_start + key.len() + 1 + (rest.len() - value.len());
            let (items, _) = flow_sequence(&text[from..]).unwrap_or_else(|e| panic!("{at}: {e}"));
            lists.push((n + 1, indent, key.to_string(), items));
        }
    }
    lists
}

/// Invocations in `command`/`args` lists of a YAML file.
fn yaml_invocations(path: &Path, text: &str, out: &mut Vec<Invocation>) {
    let lists = yaml_lists(path, text);
    let mut k = 0;
    while k < lists.len() {
        let (line, indent, key, items) = &lists[k];
        let mut argv = items.clone();
        // A container's command, then its args: one command line.
        if key == "command" {
            if let Some((_, next_indent, next_key, next_items)) = lists.get(k + 1) {
                if next_key == "args" && next_indent == indent {
                    argv.extend(next_items.iter().cloned());
                    k += 1;
                }
            }
        }
        if let Some(program) = argv.first().and_then(|w| program_of(w)) {
            out.push(Invocation {
                source: format!("{}:{line}", relative(path)),
                program: program.to_string(),
                args: argv[1..].to_vec(),
            });
        }
        k += 1;
    }
}

/// Split a shell-like line into words (quotes removed; stops at a comment or an operator).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut has = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                has = true;
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => match chars.next() {
                Some(n) if !n.is_whitespace() => {
                    word.push(n);
                    has = true;
                }
                _ => {}
            },
            c if c.is_whitespace() => {
                if has {
                    words.push(std::mem::take(&mut word));
                    has = false;
                }
            }
            _ => {
                word.push(c);
                has = true;
            }
        }
    }
    if has {
        words.push(word);
    }
    let end = words
        .iter()
        .position(|w| {
            w.starts_with('#')
                || matches!(
                    w.as_str(),
                    "|" | "||" | "&&" | ";" | ">" | ">>" | "2>" | "&"
                )
        })
        .unwrap_or(words.len());
    words.truncate(end);
    words
}

/// The invocation on an example line: the first `coordinator`/`worker` word followed by a
/// flag or one of its subcommands (`docker compose run coordinator coordinator token add`).
fn example_invocation(helps: &mut Helps, source: String, line: &str) -> Option<Invocation> {
    // A unit's override shown as an example (`ExecStart=/usr/local/bin/coordinator ...`).
    let line = line.strip_prefix("ExecStart=").unwrap_or(line);
    let words = shell_words(line);
    for (k, word) in words.iter().enumerate() {
        let Some(program) = program_of(word) else {
            continue;
        };
        let Some(next) = words.get(k + 1) else {
            continue;
        };
        if next.starts_with('-') || helps.get(program, &[]).subcommands.contains(next) {
            return Some(Invocation {
                source,
                program: program.to_string(),
                args: words[k + 1..].to_vec(),
            });
        }
    }
    None
}

/// `ExecStart=` of a systemd unit, continuation lines joined.
fn systemd_invocations(path: &Path, text: &str, out: &mut Vec<Invocation>) {
    let mut logical = String::new();
    let mut first = 0;
    for (n, line) in text.lines().enumerate() {
        if logical.is_empty() {
            first = n + 1;
        }
        match line.strip_suffix('\\') {
            Some(part) => {
                logical.push_str(part);
                logical.push(' ');
                continue;
            }
            None => logical.push_str(line),
        }
        let full = std::mem::take(&mut logical);
        let Some(value) = full.trim().strip_prefix("ExecStart=") else {
            continue;
        };
        let value = value.trim_start_matches(['-', '@', '+', '!', ':']);
        let words = shell_words(value);
        let source = format!("{}:{first}", relative(path));
        let program = words.first().and_then(|w| program_of(w));
        let program = program.unwrap_or_else(|| panic!("{source}: ExecStart= runs {words:?}"));
        out.push(Invocation {
            source,
            program: program.to_string(),
            args: words[1..].to_vec(),
        });
    }
}

/// Example command lines: comment lines indented as code, and fenced blocks of Markdown.
fn example_lines(path: &Path, text: &str) -> Vec<(String, String)> {
    let markdown = path.extension().is_some_and(|e| e == "md");
    let mut lines = Vec::new();
    let mut fenced = false;
    let mut pending = String::new();
    for (n, line) in text.lines().enumerate() {
        let code = if markdown {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            fenced.then_some(line)
        } else {
            line.trim_start()
                .strip_prefix('#')
                .filter(|rest| rest.starts_with("   ") && !rest.trim().is_empty())
        };
        let Some(code) = code else {
            continue;
        };
        let code = code.trim().trim_start_matches("$ ");
        match code.strip_suffix('\\') {
            Some(part) => {
                pending.push_str(part);
                pending.push(' ');
            }
            None => {
                pending.push_str(code);
                lines.push((
                    format!("{}:{} (example)", relative(path), n + 1),
                    std::mem::take(&mut pending),
                ));
            }
        }
    }
    lines
}

/// Command lines per kind of file and program.
type Counts = BTreeMap<(&'static str, String), usize>;

/// Everything to check, and how many command lines each kind of file gave.
fn invocations(helps: &mut Helps) -> (Vec<Invocation>, Counts) {
    let mut all = Vec::new();
    let mut counts = BTreeMap::new();
    let mut paths = Vec::new();
    files(&deploy_dir(), &mut paths);
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // not text
        };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let before = all.len();
        let kind = if name.ends_with(".yaml") || name.ends_with(".yml") {
            yaml_invocations(&path, &text, &mut all);
            if relative(&path).starts_with("deploy/k8s/") {
                "kubernetes"
            } else {
                "compose"
            }
        } else if name.ends_with(".service") {
            systemd_invocations(&path, &text, &mut all);
            "systemd"
        } else {
            "other"
        };
        for inv in &all[before..] {
            *counts.entry((kind, inv.program.clone())).or_insert(0) += 1;
        }
        for (source, line) in example_lines(&path, &text) {
            if let Some(inv) = example_invocation(helps, source, &line) {
                *counts.entry(("examples", inv.program.clone())).or_insert(0) += 1;
                all.push(inv);
            }
        }
    }
    (all, counts)
}

#[test]
fn deployment_files_use_real_flags() {
    let mut helps = Helps::default();
    let (all, counts) = invocations(&mut helps);
    // The files are found and read: each kind starts a coordinator and a worker.
    for kind in ["compose", "kubernetes", "systemd"] {
        for program in ["coordinator", "worker"] {
            assert!(
                counts.contains_key(&(kind, program.to_string())),
                "no {program} command line in the {kind} files: {counts:?}"
            );
        }
    }
    assert!(
        counts.contains_key(&("examples", "coordinator".to_string())),
        "{counts:?}"
    );
    let mut problems = Vec::new();
    for inv in &all {
        eprintln!("{}: {} {}", inv.source, inv.program, inv.args.join(" "));
        problems.extend(check(&mut helps, inv));
    }
    assert!(
        problems.is_empty(),
        "deployment files disagree with the binaries:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_catches_wrong_command_lines() {
    let mut helps = Helps::default();
    let inv = |program: &str, args: &[&str]| Invocation {
        source: "test".into(),
        program: program.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
    };
    let ok = inv(
        "coordinator",
        &[
            "serve",
            "--db",
            "/d",
            "--http-listen",
            "0.0.0.0:9090",
            "--http-read-token",
        ],
    );
    assert_eq!(check(&mut helps, &ok), Vec::<String>::new());
    let cases: [(&str, &[&str], &str); 7] = [
        ("worker", &["--concurrency", "4"], "needs --coordinator"),
        (
            "coordinator",
            &["serve", "--db", "/d", "--bogus-flag", "1"],
            "does not accept --bogus-flag",
        ),
        ("coordinator", &["serve", "--db"], "--db needs a value"),
        (
            "coordinator",
            &["serve", "--listen", "0.0.0.0:1"],
            "needs --db",
        ),
        (
            "coordinator",
            &["serve", "--db", "/d", "--http-read-token=x"],
            "takes no value",
        ),
        (
            "coordinator",
            &["serv", "--db", "/d"],
            "does not expect the argument",
        ),
        (
            "worker",
            &["--coordinator", "http://c:50051", "--concurency", "4"],
            "does not accept --concurency",
        ),
    ];
    for (program, args, expected) in cases {
        let problems = check(&mut helps, &inv(program, args));
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{program} {args:?}: expected {expected:?}, got {problems:?}"
        );
    }
    let (items, _) = flow_sequence(
        r#"["worker", '--name', "$(POD_NAME)", x y, # c
        "a\"b"] tail"#,
    )
    .unwrap();
    assert_eq!(items, ["worker", "--name", "$(POD_NAME)", "x y", "a\"b"]);
}
