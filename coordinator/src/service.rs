//! The two gRPC services over the core, and the conversions between protobuf and domain
//! types (all in this module).

use crate::actor::CoreHandle;
use crate::auth::principal;
use crate::core::{
    self as c, Core, Detail, GameFacts, Grant, PairReport, RunStatus, Summary, WorkerInfo,
};
use crate::error::CoreError;
use crate::metrics::Metrics;
use crate::model::EngineDecl;
use crate::pgn_export::{ExportError, Exporter};
use proto::v1 as pb;
use stats::study::{CastlingEvent, Milestone, MilestoneKind, Outcome};
use std::pin::Pin;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

// ----- conversions -----

impl TryFrom<pb::GameFacts> for GameFacts {
    type Error = CoreError;
    fn try_from(g: pb::GameFacts) -> Result<Self, CoreError> {
        let outcome = match pb::GameOutcome::try_from(g.outcome) {
            Ok(pb::GameOutcome::WhiteWin) => Outcome::WhiteWin,
            Ok(pb::GameOutcome::Draw) => Outcome::Draw,
            Ok(pb::GameOutcome::BlackWin) => Outcome::BlackWin,
            _ => {
                return Err(CoreError::BadReport(format!(
                    "game outcome {} is not a result",
                    g.outcome
                )))
            }
        };
        Ok(Self {
            outcome,
            first_is_white: g.first_is_white,
            termination: g.termination,
            plies: g.plies,
            castlings: g
                .castlings
                .into_iter()
                .map(|k| CastlingEvent {
                    side: c::side(k.white),
                    kind: k.kind,
                    move_number: k.move_number,
                })
                .collect(),
            ruleset: g.ruleset,
            variant: g.variant,
            milestones: g
                .milestones
                .into_iter()
                .map(milestone)
                .collect::<Result<_, _>>()?,
        })
    }
}

/// Longest milestone kind an error message repeats: every known id fits, and a hostile
/// worker's megabyte of kind is not echoed back or logged.
const MILESTONE_KIND_SHOWN: usize = 32;

/// A reported milestone; an unknown kind refuses the report (its id named, cut short).
fn milestone(m: pb::Milestone) -> Result<Milestone, CoreError> {
    let kind = MilestoneKind::from_id(&m.kind).ok_or_else(|| {
        let known: Vec<&str> = MilestoneKind::ALL.iter().map(|k| k.id()).collect();
        CoreError::BadReport(format!(
            "milestone kind {:?} is unknown (expected one of: {})",
            crate::facts::truncate(&m.kind, MILESTONE_KIND_SHOWN),
            known.join(", ")
        ))
    })?;
    Ok(Milestone {
        side: c::side(m.white),
        kind,
        move_number: m.move_number,
    })
}

impl TryFrom<pb::PairResult> for PairReport {
    type Error = CoreError;
    fn try_from(p: pb::PairResult) -> Result<Self, CoreError> {
        Ok(Self {
            index: p.index,
            games: p
                .games
                .into_iter()
                .map(GameFacts::try_from)
                .collect::<Result<_, _>>()?,
            pgn_gz: p.pgn_gz,
        })
    }
}

impl From<pb::RegisterRequest> for WorkerInfo {
    fn from(r: pb::RegisterRequest) -> Self {
        Self {
            name: r.name,
            cores: r.cores,
            memory_mb: r.memory_mb,
            version: r.version,
            bench_signature: r.bench_signature,
            variants: r.variants,
            engines: r
                .engines
                .into_iter()
                .map(|e| EngineDecl {
                    name: e.name,
                    sha256: e.sha256,
                    bench_signature: e.bench_signature,
                    network_variant: e.network_variant,
                })
                .collect(),
            features: r.features,
        }
    }
}

impl From<Grant> for pb::Lease {
    fn from(g: Grant) -> Self {
        let c = &g.config;
        let [first_options, second_options] = Core::player_options(c);
        let player = |p: &crate::config::PlayerConfig, options, fallback: &str| pb::Player {
            name: if p.name.is_empty() {
                fallback.to_string()
            } else {
                p.name.clone()
            },
            engine: p.engine.clone(),
            options,
            sha256: p.sha256.clone(),
        };
        let (first_name, second_name) = match c.kind {
            crate::config::RunKind::Spsa => ("theta+", "theta-"),
            _ => ("first", "second"),
        };
        pb::Lease {
            lease_id: g.lease.id,
            run_id: g.lease.run,
            run_kind: c.kind.to_string(),
            deadline_unix_ms: g.lease.deadline_ms,
            settings: Some(pb::GameSettings {
                nodes: c.limits.nodes,
                depth: c.limits.depth,
                movetime_ms: c.limits.movetime_ms,
                clock_base_ms: c.limits.tc.map_or(0, |t| t.base_ms),
                clock_inc_ms: c.limits.tc.map_or(0, |t| t.inc_ms),
                max_plies: c.limits.max_plies,
                book: c.book.clone(),
                adjudication: Some(pb::Adjudication {
                    enabled: c.adjudication.enabled,
                    resign_score_cp: c.adjudication.resign_score,
                    resign_moves: c.adjudication.resign_moves,
                    draw_after_move: c.adjudication.draw_after_move,
                    draw_moves: c.adjudication.draw_moves,
                    draw_score_cp: c.adjudication.draw_score,
                }),
            }),
            first: Some(player(
                &c.first,
                first_options.into_iter().collect(),
                first_name,
            )),
            second: Some(player(
                c.second(),
                second_options.into_iter().collect(),
                second_name,
            )),
            pairs: g
                .pairs
                .into_iter()
                .map(|p| (c.openings_for_pair(p.index), p))
                .map(|((opening, second_opening), p)| pb::PairTask {
                    index: p.index,
                    opening,
                    second_opening,
                    variant: p.variant,
                    ruleset: p.ruleset,
                    seed: p.seed,
                    first_options: p.first_options.into_iter().collect(),
                    second_options: p.second_options.into_iter().collect(),
                    book: p.book,
                })
                .collect(),
            upload_pgn: c.upload_pgn(),
        }
    }
}

fn run_state(s: RunStatus) -> pb::RunState {
    match s {
        RunStatus::Active => pb::RunState::Active,
        RunStatus::Paused => pb::RunState::Paused,
        RunStatus::Stopped => pb::RunState::Stopped,
        RunStatus::Finished => pb::RunState::Finished,
    }
}

impl From<Summary> for pb::RunSummary {
    fn from(s: Summary) -> Self {
        Self {
            run_id: s.id,
            name: s.name,
            kind: s.kind.to_string(),
            state: run_state(s.status) as i32,
            priority: s.priority,
            pairs_total: s.pairs_total,
            pairs_done: s.pairs_done,
            pairs_leased: s.pairs_leased,
            created_unix_ms: s.created_ms,
            finish_reason: s.finish_reason,
        }
    }
}

impl From<Detail> for pb::RunDetail {
    fn from(d: Detail) -> Self {
        let row_scores = d
            .by_row
            .iter()
            .map(|r| pb::RowScore {
                ruleset: r.row.clone(),
                pentanomial: r.pentanomial.to_vec(),
                wins: r.wdl[0],
                draws: r.wdl[1],
                losses: r.wdl[2],
                elo: r.elo.as_ref().map(|e| pb::EloFigures {
                    elo: e.elo,
                    ci_low: e.ci[0],
                    ci_high: e.ci[1],
                    los: e.los,
                    ..Default::default()
                }),
            })
            .collect();
        let elo = d.elo.map(|e| pb::EloFigures {
            elo: e.elo,
            ci_low: e.ci[0],
            ci_high: e.ci[1],
            los: e.los,
            nelo: d.nelo.as_ref().map_or(0.0, |n| n.nelo),
            nelo_ci_low: d.nelo.as_ref().map_or(0.0, |n| n.ci[0]),
            nelo_ci_high: d.nelo.as_ref().map_or(0.0, |n| n.ci[1]),
        });
        let sprt = d.sprt.map(|s| pb::SprtFigures {
            llr: s.llr,
            lower_bound: s.lower,
            upper_bound: s.upper,
            state: s.state.to_string(),
            elo0: s.params.elo0,
            elo1: s.params.elo1,
            model: s.params.model.to_string().to_lowercase(),
            counted_pairs: s.counted_pairs,
        });
        let study_json = d
            .study
            .as_ref()
            .and_then(|s| serde_json::to_string(s).ok())
            .unwrap_or_default();
        let (study, comparisons) = match d.study {
            Some(s) => (
                s.rulesets
                    .iter()
                    .map(|r| pb::RulesetRow {
                        ruleset: r.ruleset.clone(),
                        games: r.games,
                        white_wins: r.white_wins,
                        draws: r.draws,
                        black_wins: r.black_wins,
                        white_score: r.white_score,
                        white_score_low: r.white_score_ci[0],
                        white_score_high: r.white_score_ci[1],
                        draw_rate: r.draw_rate.rate,
                        mean_plies: r.plies.mean,
                        castling_share: r
                            .castling
                            .iter()
                            .map(|k| {
                                let side = match k.side {
                                    stats::study::Side::White => "white",
                                    stats::study::Side::Black => "black",
                                };
                                (format!("{side} {}", k.kind), k.games.rate)
                            })
                            .collect(),
                    })
                    .collect(),
                s.comparisons
                    .iter()
                    .map(|c| pb::ComparisonRow {
                        ruleset: c.ruleset.clone(),
                        baseline: c.baseline.clone(),
                        white_score_diff: c.white_score.estimate,
                        white_score_p: c.white_score.p_value,
                        draw_rate_diff: c.draw_rate.estimate,
                        draw_rate_p: c.draw_rate.p_value,
                    })
                    .collect(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        Self {
            summary: Some(d.summary.into()),
            pentanomial: d.pentanomial.to_vec(),
            wins: d.wdl[0],
            draws: d.wdl[1],
            losses: d.wdl[2],
            elo,
            sprt,
            spsa: d
                .spsa
                .into_iter()
                .map(|p| pb::SpsaParam {
                    name: p.name,
                    value: p.value,
                    start: p.start,
                    min: p.min,
                    max: p.max,
                    iterations: p.iterations,
                })
                .collect(),
            study,
            workers: d
                .workers
                .into_iter()
                .map(|w| pb::WorkerRow {
                    pairs: w.pentanomial.iter().sum(),
                    name: w.name,
                    pentanomial: w.pentanomial.to_vec(),
                    residual: w.residual.z,
                    flagged: w.residual.flagged,
                    excluded: w.excluded,
                    labels: w.labels,
                })
                .collect(),
            config_toml: d.config_toml,
            comparisons,
            study_json,
            row_scores,
        }
    }
}

// ----- worker service -----

/// The worker service.
#[derive(Debug, Clone)]
pub struct WorkerApi {
    core: CoreHandle,
}

impl WorkerApi {
    /// Over a core.
    pub fn new(core: CoreHandle) -> Self {
        Self { core }
    }
}

#[tonic::async_trait]
impl pb::worker_service_server::WorkerService for WorkerApi {
    async fn register(
        &self,
        req: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        let who = principal(&req)?;
        let info = WorkerInfo::from(req.into_inner());
        let major = info.version.split('.').next().unwrap_or("");
        if !info.version.is_empty() && major != "0" {
            return Err(CoreError::BadState(format!(
                "worker version {} is not supported (this coordinator speaks cluster.v1 with 0.x workers)",
                info.version
            ))
            .into());
        }
        let (id, timing) = self
            .core
            .call(move |core| Ok((core.register(&who, info, now_ms())?, core.timing())))
            .await?;
        tracing::info!(worker = id, "worker registered");
        Ok(Response::new(pb::RegisterResponse {
            worker_id: id,
            heartbeat_interval_ms: timing.heartbeat_interval_ms,
            lease_timeout_ms: timing.lease_timeout_ms,
        }))
    }

    async fn lease(
        &self,
        req: Request<pb::LeaseRequest>,
    ) -> Result<Response<pb::LeaseResponse>, Status> {
        let who = principal(&req)?;
        let r = req.into_inner();
        let (grant, timing) = self
            .core
            .call(move |core| {
                let g = core.lease(&who, r.worker_id, r.concurrency, r.max_pairs, now_ms())?;
                Ok((g, core.timing()))
            })
            .await?;
        Ok(Response::new(match grant {
            Some(g) => pb::LeaseResponse {
                lease: Some(g.into()),
                retry_after_ms: 0,
            },
            None => pb::LeaseResponse {
                lease: None,
                retry_after_ms: timing.idle_retry_ms,
            },
        }))
    }

    async fn heartbeat(
        &self,
        req: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        let who = principal(&req)?;
        let r = req.into_inner();
        let ids = r.lease_ids.clone();
        let states = self
            .core
            .call(move |core| core.heartbeat(&who, r.worker_id, &r.lease_ids, now_ms()))
            .await?;
        Ok(Response::new(pb::HeartbeatResponse {
            leases: ids
                .into_iter()
                .zip(states)
                .map(|(lease_id, s)| match s {
                    Ok(deadline) => pb::LeaseStatus {
                        lease_id,
                        valid: true,
                        deadline_unix_ms: deadline,
                        reason: String::new(),
                    },
                    Err(reason) => pb::LeaseStatus {
                        lease_id,
                        valid: false,
                        deadline_unix_ms: 0,
                        reason,
                    },
                })
                .collect(),
        }))
    }

    async fn submit(
        &self,
        req: Request<pb::SubmitRequest>,
    ) -> Result<Response<pb::SubmitResponse>, Status> {
        let who = principal(&req)?;
        let r = req.into_inner();
        let pairs = r
            .pairs
            .into_iter()
            .map(PairReport::try_from)
            .collect::<Result<Vec<_>, _>>()?;
        let (worker, lease, seq) = (r.worker_id, r.lease_id, r.seq);
        let out = self
            .core
            .call(move |core| core.submit(&who, worker, lease, seq, pairs, now_ms()))
            .await?;
        tracing::debug!(
            lease,
            seq,
            accepted = out.accepted,
            duplicate = out.duplicate,
            "report committed"
        );
        Ok(Response::new(pb::SubmitResponse {
            duplicate: out.duplicate,
            accepted_pairs: out.accepted,
            reported_pairs: out.reported,
            continue_lease: out.continue_lease,
        }))
    }

    async fn release(
        &self,
        req: Request<pb::ReleaseRequest>,
    ) -> Result<Response<pb::ReleaseResponse>, Status> {
        let who = principal(&req)?;
        let r = req.into_inner();
        let out = self
            .core
            .call(move |core| core.release(&who, r.worker_id, r.lease_id, &r.failure, now_ms()))
            .await?;
        Ok(Response::new(pb::ReleaseResponse {
            returned_pairs: out.returned,
            retry_after_ms: out.retry_after_ms,
        }))
    }
}

// ----- admin service -----

/// The admin service.
#[derive(Debug, Clone)]
pub struct AdminApi {
    core: CoreHandle,
    metrics: Metrics,
    exporter: Exporter,
}

impl AdminApi {
    /// Over a core; PGN exports read the database through `exporter`.
    pub fn new(core: CoreHandle, metrics: Metrics, exporter: Exporter) -> Self {
        Self {
            core,
            metrics,
            exporter,
        }
    }

    async fn set_status(&self, id: u64, to: RunStatus) -> Result<Response<pb::RunSummary>, Status> {
        let s = self.core.call(move |core| core.set_status(id, to)).await?;
        Ok(Response::new(s.into()))
    }
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl pb::admin_service_server::AdminService for AdminApi {
    async fn create_run(
        &self,
        req: Request<pb::CreateRunRequest>,
    ) -> Result<Response<pb::RunSummary>, Status> {
        let text = req.into_inner().config_toml;
        let s = self
            .core
            .call(move |core| core.create_run(&text, now_ms()))
            .await?;
        Ok(Response::new(s.into()))
    }

    async fn list_runs(
        &self,
        _req: Request<pb::ListRunsRequest>,
    ) -> Result<Response<pb::ListRunsResponse>, Status> {
        let runs = self.core.call(|core| Ok(core.list())).await?;
        Ok(Response::new(pb::ListRunsResponse {
            runs: runs.into_iter().map(Into::into).collect(),
        }))
    }

    async fn show_run(
        &self,
        req: Request<pb::RunRequest>,
    ) -> Result<Response<pb::RunDetail>, Status> {
        let id = req.into_inner().run_id;
        let d = self.core.call(move |core| core.detail(id)).await?;
        Ok(Response::new(d.into()))
    }

    async fn pause_run(
        &self,
        req: Request<pb::RunRequest>,
    ) -> Result<Response<pb::RunSummary>, Status> {
        self.set_status(req.into_inner().run_id, RunStatus::Paused)
            .await
    }

    async fn resume_run(
        &self,
        req: Request<pb::RunRequest>,
    ) -> Result<Response<pb::RunSummary>, Status> {
        self.set_status(req.into_inner().run_id, RunStatus::Active)
            .await
    }

    async fn stop_run(
        &self,
        req: Request<pb::RunRequest>,
    ) -> Result<Response<pb::RunSummary>, Status> {
        self.set_status(req.into_inner().run_id, RunStatus::Stopped)
            .await
    }

    async fn extend_run(
        &self,
        req: Request<pb::ExtendRunRequest>,
    ) -> Result<Response<pb::RunSummary>, Status> {
        let r = req.into_inner();
        let s = self
            .core
            .call(move |core| core.extend_run(r.run_id, r.games))
            .await?;
        Ok(Response::new(s.into()))
    }

    async fn exclude_worker(
        &self,
        req: Request<pb::ExcludeWorkerRequest>,
    ) -> Result<Response<pb::RunDetail>, Status> {
        let r = req.into_inner();
        let d = self
            .core
            .call(move |core| core.exclude(r.run_id, &r.worker, r.exclude))
            .await?;
        Ok(Response::new(d.into()))
    }

    type WatchRunStream = BoxStream<pb::RunProgress>;

    async fn watch_run(
        &self,
        req: Request<pb::RunRequest>,
    ) -> Result<Response<Self::WatchRunStream>, Status> {
        let id = req.into_inner().run_id;
        let core = self.core.clone();
        // Fail early for an unknown run.
        core.call(move |c| c.summary(id)).await?;
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        let mut changes = core.changes();
        tokio::spawn(async move {
            let mut last = None;
            loop {
                // Mark the current generation seen before reading, so a change made while we
                // read wakes us again, and our own reads never do.
                changes.borrow_and_update();
                let progress = core
                    .call(move |c| {
                        let d = c.detail(id)?;
                        Ok(pb::RunProgress {
                            llr: d.sprt.as_ref().map_or(0.0, |s| s.llr),
                            elo: d.elo.map_or(0.0, |e| e.elo),
                            summary: Some(d.summary.into()),
                        })
                    })
                    .await;
                let done = match &progress {
                    Ok(p) => p.summary.as_ref().is_some_and(|s| {
                        s.state == pb::RunState::Stopped as i32
                            || s.state == pb::RunState::Finished as i32
                    }),
                    Err(_) => true,
                };
                let send = match progress {
                    Ok(p) if last.as_ref() == Some(&p) => None,
                    Ok(p) => {
                        last = Some(p.clone());
                        Some(Ok(p))
                    }
                    Err(e) => Some(Err(Status::from(e))),
                };
                if let Some(item) = send {
                    if tx.send(item).await.is_err() {
                        break;
                    }
                }
                if done {
                    break;
                }
                // Wait for a change, or stop as soon as the client has gone.
                tokio::select! {
                    r = changes.changed() => if r.is_err() { break },
                    _ = tx.closed() => break,
                }
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    type ExportPgnStream = BoxStream<pb::PgnChunk>;

    async fn export_pgn(
        &self,
        req: Request<pb::RunRequest>,
    ) -> Result<Response<Self::ExportPgnStream>, Status> {
        let id = req.into_inner().run_id;
        if !self.core.call(move |core| Ok(core.has_run(id))).await? {
            return Err(CoreError::UnknownRun(id).into());
        }
        let chunks = self.exporter.spawn(id, |e: ExportError| {
            Status::from(CoreError::Internal(e.to_string()))
        });
        let stream = tokio_stream::StreamExt::map(chunks, |r| r.map(|text| pb::PgnChunk { text }));
        Ok(Response::new(Box::pin(stream)))
    }

    async fn verify_run(
        &self,
        req: Request<pb::RunRequest>,
    ) -> Result<Response<pb::VerifyRunResponse>, Status> {
        let id = req.into_inner().run_id;
        let db = self.exporter.db().to_path_buf();
        let v = tokio::task::spawn_blocking(move || crate::verify::verify(&db, id))
            .await
            .map_err(|e| Status::from(CoreError::Internal(e.to_string())))??;
        Ok(Response::new(pb::VerifyRunResponse {
            pairs: v.pairs,
            problems: v.problems,
        }))
    }

    async fn metrics(
        &self,
        _req: Request<pb::MetricsRequest>,
    ) -> Result<Response<pb::MetricsResponse>, Status> {
        let text = self.metrics.render(&self.core).await?;
        Ok(Response::new(pb::MetricsResponse { text }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::study::Side;

    fn facts(kind: &str) -> pb::GameFacts {
        pb::GameFacts {
            outcome: pb::GameOutcome::Draw as i32,
            first_is_white: true,
            termination: "threefold".into(),
            plies: 80,
            castlings: Vec::new(),
            ruleset: "normal".into(),
            variant: "latte".into(),
            milestones: vec![pb::Milestone {
                white: false,
                kind: kind.into(),
                move_number: 12,
            }],
        }
    }

    #[test]
    fn milestones_convert_by_id() {
        for kind in MilestoneKind::ALL {
            let g = GameFacts::try_from(facts(kind.id())).expect("known kind");
            assert_eq!(
                g.milestones,
                [Milestone {
                    side: Side::Black,
                    kind,
                    move_number: 12,
                }]
            );
        }
    }

    #[test]
    fn an_unknown_milestone_kind_is_an_invalid_argument_naming_it() {
        let e = GameFacts::try_from(facts("rights-lost-by-charm")).expect_err("unknown");
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        let text = e.to_string();
        assert!(text.contains("\"rights-lost-by-charm\""), "{text}");
        assert!(text.contains("king-corner"), "{text}");
        // A hostile megabyte of kind is named, not echoed.
        let e = GameFacts::try_from(facts(&"x".repeat(1 << 20))).expect_err("unknown");
        assert!(e.to_string().len() < 300, "{}", e.to_string().len());
    }

    fn grant(limits: &str) -> Grant {
        let config = crate::config::RunConfig::parse(&format!(
            "name = \"m\"\nkind = \"match\"\ngames = 2\n[limits]\n{limits}\n\
             [[variants]]\nvariant = \"chess\"\n[first]\n"
        ))
        .expect("valid");
        Grant {
            lease: crate::ledger::LeaseRecord {
                id: 1,
                run: 1,
                worker: 1,
                state: crate::ledger::LeaseState::Active,
                deadline_ms: 0,
                last_seq: 0,
                pairs: Default::default(),
                reported: Default::default(),
            },
            config,
            pairs: Vec::new(),
        }
    }

    #[test]
    fn a_clock_run_leases_its_clock_and_no_other_limit() {
        let settings = pb::Lease::from(grant("tc = \"10+0.1\""))
            .settings
            .expect("settings");
        assert_eq!(
            (settings.clock_base_ms, settings.clock_inc_ms),
            (10_000, 100)
        );
        assert_eq!(
            (settings.nodes, settings.depth, settings.movetime_ms),
            (0, 0, 0)
        );
        let settings = pb::Lease::from(grant("nodes = 500"))
            .settings
            .expect("settings");
        assert_eq!((settings.clock_base_ms, settings.clock_inc_ms), (0, 0));
        assert_eq!(settings.nodes, 500);
    }
}
