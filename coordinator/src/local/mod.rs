//! `coordinator local PLAN.toml`: the whole cluster on one machine. A coordinator on the
//! embedded database in a state folder, listening on loopback, N local workers, the plan's
//! runs one after the other with progress bars, and at the end the reports. The state folder
//! keeps everything, so running the same command again after Ctrl-C resumes where it stood.

pub mod pins;
pub mod plan;
mod progress;
pub mod report;
pub mod resume;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use proto::v1 as pb;
use tokio::sync::watch;

use crate::cli::Outcome;
use crate::client::{self, AdminClient};
use crate::store::{self, Role};
use crate::ServeConfig;

/// Arguments of `coordinator local`.
#[derive(Debug, clap::Args)]
pub struct LocalArgs {
    /// The plan: runs under `[[runs]]` (see examples/quickstart.toml).
    pub config: PathBuf,
    /// Local workers, one game each at a time (default: all cores).
    #[arg(long)]
    pub workers: Option<usize>,
    /// State folder with the database and the reports (default: `.cluster-local/<plan name>`).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Multiply every game budget by this (for a quick trial of a plan).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// SPRT bounds for every SPRT run of the plan, as `ELO0,ELO1` in the unit of the run's
    /// model (e.g. `0,10` for a change expected to be small), in place of the plan's own.
    /// The default state folder's name records them, so a test with other bounds starts
    /// afresh instead of being refused as a changed run.
    #[arg(long, value_name = "ELO0,ELO1", value_parser = parse_bounds)]
    pub sprt_bounds: Option<(f64, f64)>,
    /// A seed for every run of the plan in place of its own (openings, per-pair seeds, SPSA
    /// perturbations): an independent repeat of a test instead of the same games again. The
    /// default state folder's name records it, as it records `--sprt-bounds`.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Play only the plan's run with this name (repeat for several), e.g. one variant of
    /// `examples/match-engines.toml`; the others are neither played nor reported.
    #[arg(long = "run", value_name = "NAME")]
    pub only: Vec<String>,
    /// No progress bars (plain progress lines instead, as when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,
    /// Where the live dashboard listens (its URL is printed at start).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub http_listen: std::net::SocketAddr,
    /// No dashboard.
    #[arg(long)]
    pub no_http: bool,
    /// An external engine the plan's runs may name (repeatable), as for `worker --engine`:
    /// e.g. `--engine stockfish=/usr/games/stockfish` for a run with `engine = "stockfish"`.
    #[arg(long = "engine", value_name = "NAME=PATH")]
    pub engines: Vec<worker::cluster::engines::EngineArg>,
}

fn state_name(s: i32) -> pb::RunState {
    pb::RunState::try_from(s).unwrap_or(pb::RunState::Unspecified)
}

/// `ELO0,ELO1` of `--sprt-bounds`: two numbers (their order is checked with the plan).
fn parse_bounds(text: &str) -> Result<(f64, f64), String> {
    let bad = || format!("{text:?} is not ELO0,ELO1 (two numbers, e.g. 0,10)");
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let a: f64 = a.trim().parse().map_err(|_| bad())?;
    let b: f64 = b.trim().parse().map_err(|_| bad())?;
    Ok((a, b))
}

/// What `--engine` declared, as the start of a session says it: a program, or our engine with
/// a network file, with the digest the runs are pinned to.
fn declared_line(e: &worker::cluster::engines::DeclaredEngine) -> String {
    let sha = e.sha256().get(..12).unwrap_or(e.sha256());
    match e.network() {
        Some(n) => format!(
            "engine {}: our engine with the {} network of {} (sha256 {sha})",
            e.name(),
            n.variant,
            e.path().display()
        ),
        None => format!("engine {}: {} (sha256 {sha})", e.name(), e.path().display()),
    }
}

fn default_state(
    config: &Path,
    scale: f64,
    bounds: Option<(f64, f64)>,
    seed: Option<u64>,
) -> PathBuf {
    let mut name = config
        .file_stem()
        .map_or_else(|| "plan".into(), |s| s.to_string_lossy().into_owned());
    if scale != 1.0 {
        name = format!("{name}-x{scale}");
    }
    if let Some((e0, e1)) = bounds {
        name = format!("{name}-sprt{e0},{e1}");
    }
    if let Some(seed) = seed {
        name = format!("{name}-seed{seed}");
    }
    PathBuf::from(".cluster-local").join(name)
}

/// Runs a plan to completion (or until Ctrl-C) and writes its reports.
pub fn run(args: LocalArgs) -> anyhow::Result<Outcome> {
    let text = std::fs::read_to_string(&args.config)
        .with_context(|| format!("cannot read {}", args.config.display()))?;
    let mut plan = plan::parse(
        &text,
        args.scale,
        &crate::options_file::plan_dir(&args.config),
    )
    .with_context(|| format!("in {}", args.config.display()))?;
    plan.select(&args.only)
        .with_context(|| format!("--run, in {}", args.config.display()))?;
    if let Some((elo0, elo1)) = args.sprt_bounds {
        plan.set_sprt_bounds(elo0, elo1)
            .with_context(|| format!("in {}", args.config.display()))?;
    }
    if let Some(seed) = args.seed {
        plan.set_seed(seed)
            .with_context(|| format!("in {}", args.config.display()))?;
    }
    let state = args
        .state
        .clone()
        .unwrap_or_else(|| default_state(&args.config, args.scale, args.sprt_bounds, args.seed));
    std::fs::create_dir_all(&state)
        .with_context(|| format!("cannot create {}", state.display()))?;
    let db = state.join("cluster.db");
    let engines = worker::cluster::engines::Engines::declare(&args.engines).context("--engine")?;
    for e in engines.iter() {
        eprintln!("{}", declared_line(e));
    }
    pins::pin(&mut plan, &engines)?;
    let workers = args
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);

    // Fresh tokens for this session (the database keeps only hashes, so a resumed session
    // revokes the last one's and makes new ones under the same names).
    let (admin_token, worker_token) = {
        let conn = store::open(&db).with_context(|| format!("database {}", db.display()))?;
        let now = crate::service::now_ms();
        for name in ["local-admin", "local-worker"] {
            match store::revoke_token(&conn, name, now) {
                Ok(()) | Err(store::TokenError::Unknown(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let slots = u32::try_from(workers).unwrap_or(u32::MAX).max(1);
        (
            store::add_token(&conn, "local-admin", Role::Admin, now)?,
            store::add_token_with_slots(&conn, "local-worker", Role::Worker, slots, now)?,
        )
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.context("cannot listen on loopback")?;
        let url = format!("http://{}", listener.local_addr()?);
        let (stop_server, server_stopped) = tokio::sync::oneshot::channel::<()>();
        let http = if args.no_http {
            None
        } else {
            let l = tokio::net::TcpListener::bind(args.http_listen)
                .await
                .with_context(|| format!("cannot listen on {} for the dashboard (--http-listen)", args.http_listen))?;
            eprintln!("dashboard: http://{}/", l.local_addr()?);
            Some(l)
        };
        let server = tokio::spawn(crate::serve(ServeConfig::new(&db), listener, http, async move {
            let _ = server_stopped.await;
        }));
        let mut admin = connect(&url, &admin_token).await?;

        let (stage_tx, stage) = watch::channel(0u8);
        let mut pool = tokio::task::JoinSet::new();
        for i in 0..workers {
            let config = worker::cluster::ClusterConfig {
                url: url.clone(),
                ca: None,
                token: worker_token.clone(),
                concurrency: 1,
                name: format!("local-{}", i + 1),
                spool: state.join(format!("spool-{}.log", i + 1)),
                book_dir: PathBuf::from("."),
                exit_when_idle: false,
                engines: engines.clone(),
                report_linger: worker::cluster::DEFAULT_REPORT_LINGER,
            };
            pool.spawn(worker::cluster::run(config, stage.clone()));
        }

        let played = tokio::select! {
            r = play_plan(&mut admin, &plan, args.quiet, workers, &state) => Some(r),
            _ = crate::cli_cluster::shutdown_signal() => None,
        };
        // Workers finish the games under way and submit them, then stop.
        let _ = stage_tx.send(1);
        let drain = async {
            while let Some(r) = pool.join_next().await {
                if let Ok(Err(e)) = r {
                    tracing::warn!(error = %e, "local worker stopped with an error");
                }
            }
        };
        if tokio::time::timeout(Duration::from_secs(120), drain).await.is_err() {
            let _ = stage_tx.send(2);
            pool.abort_all();
        }
        let ids = match played {
            None => {
                let mut stdout = format!(
                    "interrupted: finished games are saved in {}; run the same command again to resume\n",
                    state.display()
                );
                // Where each run stands: stopping a long SPRT or SPSA early is common, and its
                // figures so far are what the user stopped it to see.
                if let Ok(list) = admin.list_runs(pb::ListRunsRequest {}).await {
                    for r in list.into_inner().runs.iter().rev() {
                        if let Ok(d) = show(&mut admin, r.run_id).await {
                            stdout.push_str(&format!("\nrun {:?} so far:\n", r.name));
                            stdout.push_str(&client::format_detail(&d));
                        }
                    }
                }
                let _ = stop_server.send(());
                let _ = server.await;
                return Ok(Outcome { stdout, code: 130 });
            }
            Some(r) => r?,
        };
        let mut runs = Vec::new();
        for (id, tuned_from, pace) in ids {
            let detail = show(&mut admin, id).await?;
            runs.push((id, detail, tuned_from, pace));
        }
        let _ = stop_server.send(());
        match server.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => bail!("coordinator: {e}"),
            Err(e) => bail!("coordinator task: {e}"),
        }

        let conn = store::open(&db).with_context(|| format!("database {}", db.display()))?;
        let mut data = Vec::new();
        for (id, detail, tuned_from, pace) in runs {
            let pairs = store::pair_scores(&conn, id)?.into_iter().map(|(_, s)| s).collect();
            let spsa_thetas = store::spsa_history(&conn, id)?
                .iter()
                .filter_map(|row| serde_json::from_str::<stats::spsa::SpsaUpdate>(row).ok())
                .map(|u| (u.iteration, u.theta))
                .collect();
            data.push(report::RunData { detail, pairs, spsa_thetas, tuned_from, pace });
        }
        let written = report::write(&state, &plan.title, &data).with_context(|| format!("cannot write reports into {}", state.display()))?;
        Ok(Outcome {
            stdout: format!(
                "{}\nreports: {} and {}\n",
                written.text,
                written.html.display(),
                written.json.display()
            ),
            code: 0,
        })
    })
}

async fn connect(url: &str, token: &str) -> anyhow::Result<AdminClient> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match client::admin(url, token, None).await {
            Ok(mut c) => {
                if c.list_runs(pb::ListRunsRequest {}).await.is_ok() {
                    return Ok(c);
                }
            }
            Err(e) if Instant::now() >= deadline => {
                return Err(e).context("the local coordinator did not start")
            }
            Err(_) => {}
        }
        if Instant::now() >= deadline {
            bail!("the local coordinator did not answer within 20 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn show(admin: &mut AdminClient, id: u64) -> anyhow::Result<pb::RunDetail> {
    Ok(admin
        .show_run(pb::RunRequest { run_id: id })
        .await
        .map_err(client::ClientError::from)?
        .into_inner())
}

/// Creates (or finds, when resuming) each run in turn and waits for it to finish.
/// A run of the plan once played: its id, the run it took tuned values from, and how fast
/// its games went in this session (none when it played no games now).
type Played = (u64, Option<String>, Option<crate::report::study::Pace>);

async fn play_plan(
    admin: &mut AdminClient,
    plan: &plan::Plan,
    quiet: bool,
    workers: usize,
    state: &Path,
) -> anyhow::Result<Vec<Played>> {
    let mut ids: Vec<Played> = Vec::new();
    for (run_no, planned) in (1..).zip(&plan.runs) {
        let existing = admin
            .list_runs(pb::ListRunsRequest {})
            .await
            .map_err(client::ClientError::from)?
            .into_inner()
            .runs;
        let id = match existing.iter().find(|r| r.name == planned.config.name) {
            Some(r) => r.run_id,
            None => {
                let config_toml = match &planned.tuned_from {
                    None => {
                        toml::to_string(&planned.table).context("cannot write the run config")?
                    }
                    Some(source) => {
                        // Played now, or (with --run) finished in an earlier session.
                        let played_now = ids
                            .iter()
                            .zip(&plan.runs)
                            .find(|(_, p)| &p.config.name == source)
                            .map(|(i, _)| i.0);
                        let finished_before = existing
                            .iter()
                            .find(|r| {
                                &r.name == source && state_name(r.state) == pb::RunState::Finished
                            })
                            .map(|r| r.run_id);
                        let Some(source_id) = played_now.or(finished_before) else {
                            bail!(
                                "run {:?} needs the values of {source:?}, which neither ran now \
                                 nor finished in {} (add --run {source})",
                                planned.config.name,
                                state.display()
                            );
                        };
                        let d = show(admin, source_id).await?;
                        let values: Vec<(String, f64, f64)> = d
                            .spsa
                            .iter()
                            .map(|p| (p.name.clone(), p.value, p.start))
                            .collect();
                        plan::with_tuned_values(planned, &values)?
                    }
                };
                admin
                    .create_run(pb::CreateRunRequest { config_toml })
                    .await
                    .map_err(client::ClientError::from)
                    .with_context(|| format!("run {:?}", planned.config.name))?
                    .into_inner()
                    .run_id
            }
        };
        let d = show(admin, id).await?;
        // A run found by name may have been played with other builds (a new one holds the
        // pins it was just created with).
        pins::check_resumed(planned, &d.config_toml, state)?;
        // ... and with the settings the plan gives now, but for a larger budget.
        if let resume::Resumed::Grows { from, to } = resume::check(planned, &d.config_toml, state)?
        {
            admin
                .extend_run(pb::ExtendRunRequest {
                    run_id: id,
                    games: to,
                })
                .await
                .map_err(client::ClientError::from)
                .with_context(|| {
                    format!(
                        "run {:?} has {from} games in {} and the plan now asks for {to}",
                        planned.config.name,
                        state.display()
                    )
                })?;
            eprintln!(
                "run {:?}: budget raised from {from} to {to} games, as the plan now says",
                planned.config.name
            );
        }
        if d.summary
            .as_ref()
            .is_some_and(|s| state_name(s.state) == pb::RunState::Paused)
        {
            admin
                .resume_run(pb::RunRequest { run_id: id })
                .await
                .map_err(client::ClientError::from)?;
        }
        let games_before = d.summary.as_ref().map_or(0, |s| s.pairs_done * 2);
        let started = std::time::Instant::now();
        follow(admin, id, run_no, quiet).await?;
        let games_after = show(admin, id)
            .await?
            .summary
            .map_or(games_before, |s| s.pairs_done * 2);
        let core_minutes = started.elapsed().as_secs_f64() / 60.0 * workers as f64;
        let played = games_after.saturating_sub(games_before);
        let pace = (played > 0 && core_minutes > 0.0).then(|| crate::report::study::Pace {
            games_per_core_minute: played as f64 / core_minutes,
            cores: workers,
        });
        ids.push((id, planned.tuned_from.clone(), pace));
    }
    Ok(ids)
}

/// One line of live figures: Elo, LLR or the SPSA parameters.
fn live_figures(d: &pb::RunDetail) -> String {
    if let Some(figures) = progress::sprt_figures(d) {
        return figures;
    }
    if !d.spsa.is_empty() {
        let shown: Vec<String> = d
            .spsa
            .iter()
            .take(4)
            .map(|p| format!("{} {:.0}", p.name, p.value))
            .collect();
        return format!(
            "θ {}{}",
            shown.join(", "),
            if d.spsa.len() > 4 { ", ..." } else { "" }
        );
    }
    match &d.elo {
        Some(e) => format!("Elo {:+.1} [{:+.1}, {:+.1}]", e.elo, e.ci_low, e.ci_high),
        None => String::new(),
    }
}

/// Polls a run until it ends, drawing its progress: a bar on a terminal, else (or with
/// `--quiet`) a plain line on stderr as games end (`progress::Ticker`), so logs show progress.
async fn follow(
    admin: &mut AdminClient,
    id: u64,
    run_no: usize,
    quiet: bool,
) -> anyhow::Result<()> {
    let plain = progress::plain_wanted(quiet);
    let d = show(admin, id).await?;
    let s = d.summary.clone().unwrap_or_default();
    let bar = ProgressBar::new(s.pairs_total * 2);
    if plain {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>14} [{bar:30}] {pos}/{len} games {per_sec} ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_prefix(s.name.clone());
    let start_done = s.pairs_done;
    bar.set_position(start_done * 2);
    bar.reset_eta();
    let mut ticker = progress::Ticker::new(start_done * 2);
    loop {
        let d = show(admin, id).await?;
        let s = d.summary.clone().unwrap_or_default();
        bar.set_length(s.pairs_total * 2);
        bar.set_position(s.pairs_done * 2);
        bar.set_message(live_figures(&d));
        let session = ticker.session(s.pairs_done * 2);
        match state_name(s.state) {
            pb::RunState::Finished | pb::RunState::Stopped => {
                bar.finish_with_message(format!("{} {}", s.finish_reason, live_figures(&d)));
                if plain {
                    eprintln!("{}", progress::finish_line(run_no, &d, session));
                }
                // An SPSA run's values are what it was for: shown as it ends, not only in
                // the summary after the whole plan.
                eprint!("{}", client::format_spsa(&d.spsa));
                return Ok(());
            }
            _ => {
                if plain && ticker.due(s.pairs_done * 2) {
                    eprintln!("{}", progress::progress_line(run_no, &d, session));
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{default_state, parse_bounds};
    use std::path::Path;

    #[test]
    fn sprt_bounds_read_two_numbers_or_say_what_they_expect() {
        assert_eq!(parse_bounds("0,10"), Ok((0.0, 10.0)));
        assert_eq!(parse_bounds("-2.5, 1"), Ok((-2.5, 1.0)));
        for bad in ["", "10", "0;10", "a,b", "0,10,20"] {
            let e = parse_bounds(bad).unwrap_err();
            assert!(e.contains("ELO0,ELO1"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_default_state_folder_names_scale_bounds_and_seed() {
        let plan = Path::new("examples/sprt-engines.toml");
        assert_eq!(
            default_state(plan, 1.0, None, None),
            Path::new(".cluster-local/sprt-engines")
        );
        assert_eq!(
            default_state(plan, 0.5, Some((0.0, 10.0)), None),
            Path::new(".cluster-local/sprt-engines-x0.5-sprt0,10")
        );
        assert_eq!(
            default_state(plan, 1.0, Some((0.0, 10.0)), Some(103)),
            Path::new(".cluster-local/sprt-engines-sprt0,10-seed103")
        );
    }
}
