//! `coordinator serve`, `coordinator run ...` and `coordinator token add`.

use crate::cli::Outcome;
use crate::client;
use crate::core::Timing;
use crate::server::ServeConfig;
use crate::store::{self, Role};
use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use proto::v1 as pb;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `coordinator serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Database file (created on first start).
    #[arg(long)]
    pub db: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,
    /// Serve the web dashboard, its JSON endpoints and Prometheus metrics (`/metrics`) over
    /// HTTP on this address (`--metrics-listen` is the older name).
    #[arg(long, alias = "metrics-listen")]
    pub http_listen: Option<SocketAddr>,
    /// Require a token (any live one, as a bearer token or the password of HTTP basic
    /// authentication) to read the dashboard too; acting always needs an admin token.
    #[arg(long)]
    pub http_read_token: bool,
    /// Dashboard connections open at most (each open page holds one for its live updates).
    #[arg(long, default_value_t = crate::web::DEFAULT_MAX_CONNECTIONS as u32, value_parser = clap::value_parser!(u32).range(1..))]
    pub http_max_connections: u32,
    /// TLS certificate (PEM); needs --tls-key.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM); needs --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Lease lifetime without a heartbeat, seconds.
    #[arg(long, default_value_t = 45)]
    pub lease_timeout: u64,
    /// Open connections at most; more wait in the accept backlog until one closes.
    #[arg(long, default_value_t = crate::limits::DEFAULT_MAX_CONNECTIONS, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Calls handled at once at most (all services); more wait in order.
    #[arg(long, default_value_t = crate::limits::DEFAULT_MAX_CALLS, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_calls: u32,
}

/// `coordinator run ...`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Coordinator URL.
    #[arg(
        long,
        env = "COORDINATOR_URL",
        default_value = "http://127.0.0.1:50051"
    )]
    pub coordinator: String,
    /// Admin token.
    #[arg(long, env = "COORDINATOR_TOKEN", hide_env_values = true)]
    pub token: String,
    /// PEM root certificate for a TLS coordinator with a private CA.
    #[arg(long)]
    pub ca: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: RunCommand,
}

/// Run subcommands.
#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Create a run from a TOML config file, or each run of a plan file (`[[runs]]`, as in
    /// `examples/`).
    Create {
        /// The config.
        file: PathBuf,
        /// Of a plan, create only the run with this name (repeat for several): e.g. the SPSA
        /// run of a tune-then-test plan, whose test needs the tuned values.
        #[arg(long = "run", value_name = "NAME")]
        only: Vec<String>,
    },
    /// List runs.
    List,
    /// Show a run's figures.
    Show {
        /// Run id.
        id: u64,
    },
    /// Pause a run.
    Pause {
        /// Run id.
        id: u64,
    },
    /// Resume a paused run.
    Resume {
        /// Run id.
        id: u64,
    },
    /// Stop a run for good.
    Stop {
        /// Run id.
        id: u64,
    },
    /// Raise a run's game budget (fishtest's "add games"): a match, study or undecided SPRT
    /// plays on to the new total; one that had played every pair becomes active again.
    Extend {
        /// Run id.
        id: u64,
        /// The new total of games (even, more than the run has now).
        #[arg(long)]
        games: u64,
    },
    /// Recompute a run's figures from its stored pairs and compare them with the running
    /// totals (exit status 1 on a mismatch).
    Verify {
        /// Run id.
        id: u64,
    },
    /// Print a run's PGNs.
    Pgn {
        /// Run id.
        id: u64,
    },
    /// Exclude a worker's results from a run (or include them again with --include).
    Exclude {
        /// Run id.
        id: u64,
        /// Worker name as shown by `run show`.
        worker: String,
        /// Include the worker again.
        #[arg(long)]
        include: bool,
    },
}

/// `coordinator token ...`.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: TokenCommand,
}

/// Token roles on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RoleArg {
    /// May call the worker service.
    Worker,
    /// May call the admin service.
    Admin,
}

/// Token subcommands.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token and print it (it is stored hashed and cannot be shown again).
    Add {
        /// Database file (created if missing).
        #[arg(long)]
        db: PathBuf,
        /// Role of the token.
        #[arg(long, value_enum)]
        role: RoleArg,
        /// Name: unique among live tokens. For a worker token it is the worker's identity in
        /// every figure, residual and exclusion (machine names are labels under it).
        #[arg(long, default_value = "default")]
        name: String,
        /// Most game slots the token's workers may hold at once (a worker token stands for
        /// one machine or one fleet).
        #[arg(long, default_value_t = store::DEFAULT_MAX_SLOTS)]
        max_slots: u32,
    },
    /// List tokens (names, roles, slots, revocation; never the secrets).
    List {
        /// Database file.
        #[arg(long)]
        db: PathBuf,
    },
    /// Revoke a token by name: from the next call on it is refused, also by a running
    /// coordinator.
    Revoke {
        /// Database file.
        #[arg(long)]
        db: PathBuf,
        /// Token name.
        name: String,
    },
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Resolves on the first SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// `coordinator serve`.
pub fn serve(args: ServeArgs) -> anyhow::Result<Outcome> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let rt = runtime()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let http = match args.http_listen {
            Some(a) => Some(
                tokio::net::TcpListener::bind(a)
                    .await
                    .with_context(|| format!("cannot listen on {a}"))?,
            ),
            None => None,
        };
        let mut config = ServeConfig::new(args.db);
        config.timing = Timing {
            lease_timeout_ms: args.lease_timeout.max(1) * 1000,
            heartbeat_interval_ms: (args.lease_timeout.max(1) * 1000 / 3).max(200),
            ..Timing::default()
        };
        config.tls = args.tls_cert.zip(args.tls_key);
        config.web = crate::web::WebConfig {
            read_requires_token: args.http_read_token,
            max_connections: args.http_max_connections as usize,
        };
        config.limits = crate::limits::Limits {
            max_connections: args.max_connections as usize,
            max_calls: args.max_calls as usize,
        };
        if let Some(l) = &http {
            if let Ok(a) = l.local_addr() {
                eprintln!("dashboard: http://{a}/");
            }
        }
        crate::serve(config, listener, http, shutdown_signal()).await?;
        Ok(Outcome {
            stdout: String::new(),
            code: 0,
        })
    })
}

/// `coordinator run ...`.
pub fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let rt = runtime()?;
    rt.block_on(async move {
        let mut c = client::admin(&args.coordinator, &args.token, args.ca.as_deref()).await?;
        let req = |id| pb::RunRequest { run_id: id };
        let mut code = 0;
        let stdout = match args.command {
            RunCommand::Verify { id } => {
                let v = c
                    .verify_run(req(id))
                    .await
                    .map_err(client::ClientError::from)?
                    .into_inner();
                if v.problems.is_empty() {
                    format!(
                        "run {id}: {} stored pairs recomputed, totals agree\n",
                        v.pairs
                    )
                } else {
                    code = 1;
                    let mut out = format!(
                        "run {id}: {} stored pairs recomputed, {} disagreements:\n",
                        v.pairs,
                        v.problems.len()
                    );
                    for p in v.problems {
                        out.push_str(&format!("  {p}\n"));
                    }
                    out
                }
            }
            RunCommand::Create { file, only } => {
                let text = std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?;
                let mut out = String::new();
                for (name, config_toml) in
                    run_configs(&text, &only, &crate::options_file::plan_dir(&file))
                        .with_context(|| format!("{}", file.display()))?
                {
                    let s = c
                        .create_run(pb::CreateRunRequest { config_toml })
                        .await
                        .map_err(client::ClientError::from)
                        .with_context(|| format!("run {name:?}"))?
                        .into_inner();
                    out.push_str(&format!(
                        "created run {} ({}, {} pairs)\n",
                        s.run_id, s.kind, s.pairs_total
                    ));
                }
                out
            }
            RunCommand::List => {
                let r = c
                    .list_runs(pb::ListRunsRequest {})
                    .await
                    .map_err(client::ClientError::from)?;
                client::format_list(&r.into_inner().runs)
            }
            RunCommand::Show { id } => {
                let d = c
                    .show_run(req(id))
                    .await
                    .map_err(client::ClientError::from)?;
                client::format_detail(&d.into_inner())
            }
            RunCommand::Pause { id } | RunCommand::Resume { id } | RunCommand::Stop { id } => {
                let (verb, r) = match args.command {
                    RunCommand::Pause { .. } => ("paused", c.pause_run(req(id)).await),
                    RunCommand::Resume { .. } => ("resumed", c.resume_run(req(id)).await),
                    _ => ("stopped", c.stop_run(req(id)).await),
                };
                r.map_err(client::ClientError::from)?;
                format!("run {id} {verb}\n")
            }
            RunCommand::Extend { id, games } => {
                let s = c
                    .extend_run(pb::ExtendRunRequest { run_id: id, games })
                    .await
                    .map_err(client::ClientError::from)?
                    .into_inner();
                format!(
                    "run {id}: {} of {} games played, {}\n",
                    s.pairs_done * 2,
                    s.pairs_total * 2,
                    client::state_name(s.state)
                )
            }
            RunCommand::Pgn { id } => {
                let mut stream = c
                    .export_pgn(req(id))
                    .await
                    .map_err(client::ClientError::from)?
                    .into_inner();
                // Streamed to stdout as it comes: an export can be larger than memory.
                use std::io::Write;
                let mut stdout = std::io::stdout().lock();
                while let Some(chunk) = stream.message().await.map_err(client::ClientError::from)? {
                    stdout
                        .write_all(chunk.text.as_bytes())
                        .context("cannot write to stdout")?;
                }
                stdout.flush().context("cannot write to stdout")?;
                String::new()
            }
            RunCommand::Exclude {
                id,
                worker,
                include,
            } => {
                let d = c
                    .exclude_worker(pb::ExcludeWorkerRequest {
                        run_id: id,
                        worker,
                        exclude: !include,
                    })
                    .await
                    .map_err(client::ClientError::from)?;
                client::format_detail(&d.into_inner())
            }
        };
        Ok(Outcome { stdout, code })
    })
}

/// `coordinator token add | list | revoke`.
pub fn token(args: TokenArgs) -> anyhow::Result<Outcome> {
    let open = |db: &PathBuf| store::open(db).with_context(|| format!("database {}", db.display()));
    let now = crate::service::now_ms();
    let stdout = match args.command {
        TokenCommand::Add {
            db,
            role,
            name,
            max_slots,
        } => {
            let conn = open(&db)?;
            let role = match role {
                RoleArg::Worker => Role::Worker,
                RoleArg::Admin => Role::Admin,
            };
            let token = store::add_token_with_slots(&conn, &name, role, max_slots, now)?;
            format!("{token}\n")
        }
        TokenCommand::List { db } => {
            let conn = open(&db)?;
            let mut out = format!(
                "{:<24} {:<7} {:>9}  {}\n",
                "name", "role", "max slots", "state"
            );
            for t in store::list_tokens(&conn)? {
                let state = t
                    .revoked_ms
                    .map_or_else(|| "live".to_string(), |ms| format!("revoked at {ms} ms"));
                out.push_str(&format!(
                    "{:<24} {:<7} {:>9}  {state}\n",
                    t.name, t.role, t.max_slots
                ));
            }
            out
        }
        TokenCommand::Revoke { db, name } => {
            let conn = open(&db)?;
            store::revoke_token(&conn, &name, now)?;
            format!("token {name} revoked\n")
        }
    };
    Ok(Outcome { stdout, code: 0 })
}

/// The runs a `run create` file asks for, by name: one run's table, or a plan (the
/// `[[runs]]` files of `coordinator local` and `examples/`), each of its runs in order, or
/// only those named in `only`. A plan is checked whole before anything is created. A run that
/// takes another's tuned values (`tuned_from`) is refused: those values exist only once that
/// run has finished, so on a cluster it is created then, with the values written in. Players'
/// `options_file`s are read from `dir` (the file's directory) and sent written out.
pub fn run_configs(
    text: &str,
    only: &[String],
    dir: &std::path::Path,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| anyhow::anyhow!("not TOML: {}", e.message()))?;
    if !table.contains_key("runs") {
        let name = table
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        if !only.is_empty() && only != [name.as_str()] {
            anyhow::bail!(
                "--run picks runs of a plan ([[runs]]); this file is the one run {name:?}"
            );
        }
        let names_a_file = ["first", "second"].iter().any(|p| {
            table
                .get(*p)
                .and_then(|v| v.as_table())
                .is_some_and(|t| t.contains_key(crate::options_file::KEY))
        });
        if !names_a_file {
            return Ok(vec![(name, text.to_string())]);
        }
        crate::options_file::resolve(&mut table, dir, "").map_err(|e| anyhow::anyhow!("{e}"))?;
        return Ok(vec![(name, toml::to_string(&table)?)]);
    }
    let mut plan = crate::local::plan::parse(text, 1.0, dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    plan.select(only)
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    if let Some(r) = plan.runs.iter().find(|r| r.tuned_from.is_some()) {
        let others: Vec<&str> = plan
            .runs
            .iter()
            .filter(|r| r.tuned_from.is_none())
            .map(|r| r.config.name.as_str())
            .collect();
        let pick = if others.is_empty() {
            String::new()
        } else {
            format!(
                ", or create the others now with {}",
                others
                    .iter()
                    .map(|n| format!("--run {n}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        anyhow::bail!(
            "run {:?} takes the tuned values of {:?} (tuned_from), which exist only once that \
             run has finished: run this plan with `coordinator local`, or create {:?} later \
             with the tuned values in its [first] options{pick}",
            r.config.name,
            r.tuned_from.as_deref().unwrap_or_default(),
            r.config.name
        );
    }
    plan.runs
        .into_iter()
        .map(|r| {
            let text = toml::to_string(&r.table)
                .map_err(|e| anyhow::anyhow!("run {:?}: {e}", r.config.name))?;
            Ok((r.config.name, text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::run_configs;

    const ONE: &str = "name = \"m\"\nkind = \"match\"\ngames = 20\n[limits]\nnodes = 500\n[[variants]]\nvariant = \"chess\"\n[first]\nengine = \"builtin\"\n";

    #[test]
    fn a_single_run_file_is_sent_as_written() {
        let runs = run_configs(ONE, &[], std::path::Path::new(".")).unwrap();
        assert_eq!(runs, vec![("m".to_string(), ONE.to_string())]);
        let e = run_configs(ONE, &["other".to_string()], std::path::Path::new(".")).unwrap_err();
        assert!(e.to_string().contains("one run \"m\""), "{e}");
    }

    #[test]
    fn a_single_run_naming_an_options_file_is_sent_with_the_options_written_out() {
        let dir = std::env::temp_dir().join(format!("run-configs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("w.txt"), "Tempo=19\n").unwrap();
        let text = format!("{ONE}options_file = \"w.txt\"\n");
        let runs = run_configs(&text, &[], &dir).unwrap();
        let config = crate::config::RunConfig::parse(&runs[0].1).unwrap();
        assert_eq!(
            config.first.options.get("Tempo"),
            Some(&toml::Value::Integer(19))
        );
        let e = run_configs(&text, &[], std::path::Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("first.options_file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn run_picks_the_runs_of_a_plan_that_need_no_tuned_values() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tune-engine.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let e = run_configs(&text, &[], std::path::Path::new(".")).unwrap_err();
        assert!(e.to_string().contains("--run tune-engine"), "{e}");
        let runs = run_configs(
            &text,
            &["tune-engine".to_string()],
            std::path::Path::new("."),
        )
        .unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].0, "tune-engine");
        let config = crate::config::RunConfig::parse(&runs[0].1).unwrap();
        assert_eq!(config.kind, crate::config::RunKind::Spsa);
        let e = run_configs(
            &text,
            &["tuned-vs-defaults".to_string()],
            std::path::Path::new("."),
        )
        .unwrap_err();
        assert!(e.to_string().contains("tuned_from"), "{e}");
        let e = run_configs(&text, &["nope".to_string()], std::path::Path::new(".")).unwrap_err();
        assert!(
            e.to_string().contains("no run \"nope\"")
                && e.to_string().contains("tune-engine, tuned-vs-defaults"),
            "{e}"
        );
    }

    #[test]
    fn every_shipped_plan_without_tuned_values_splits_into_its_runs() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut split = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let plan = crate::local::plan::parse(&text, 1.0, &crate::options_file::plan_dir(&path))
                .unwrap();
            match run_configs(&text, &[], &crate::options_file::plan_dir(&path)) {
                Ok(runs) => {
                    assert_eq!(runs.len(), plan.runs.len(), "{}", path.display());
                    for (name, toml) in runs {
                        let config = crate::config::RunConfig::parse(&toml).unwrap();
                        assert_eq!(config.name, name);
                    }
                    split += 1;
                }
                Err(e) => {
                    assert!(plan.runs.iter().any(|r| r.tuned_from.is_some()), "{e}");
                    assert!(e.to_string().contains("tuned_from"), "{e}");
                }
            }
        }
        assert!(split >= 3, "only {split} example plans split");
    }

    #[test]
    fn a_bad_plan_is_refused_before_anything_is_created() {
        let e = run_configs(
            "[[runs]]\nname = \"x\"\nkind = \"nope\"\n",
            &[],
            std::path::Path::new("."),
        )
        .unwrap_err();
        assert!(e.to_string().contains("kind"), "{e}");
        let e = run_configs("runs = [", &[], std::path::Path::new(".")).unwrap_err();
        assert!(e.to_string().contains("not TOML"), "{e}");
    }
}
