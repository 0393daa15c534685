//! Shared by the integration tests: the coordinator booted for real on 127.0.0.1:0 with a
//! temporary database, and synthetic workers that play no games and report made-up pairs.
#![allow(dead_code, unreachable_pub)]

use coordinator::client::Bearer;
use coordinator::core::Timing;
use coordinator::store::{self, Role};
use coordinator::ServeConfig;
use proto::v1 as pb;
use proto::v1::admin_service_client::AdminServiceClient;
use proto::v1::worker_service_client::WorkerServiceClient;
use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::Code;

pub type Worker = WorkerServiceClient<InterceptedService<Channel, Bearer>>;
pub type Admin = AdminServiceClient<InterceptedService<Channel, Bearer>>;

/// Poll `check` until it returns `Some`, or fail after `timeout`.
pub async fn wait_until<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub struct Server {
    pub url: String,
    /// The dashboard's base URL (`http://127.0.0.1:PORT`) when started with one.
    pub http: Option<String>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), coordinator::server::ServeError>>>,
}

impl Server {
    pub async fn start(db: &Path, timing: Timing) -> Self {
        Self::start_with_limits(db, timing, coordinator::limits::Limits::default()).await
    }

    pub async fn start_with_limits(
        db: &Path,
        timing: Timing,
        limits: coordinator::limits::Limits,
    ) -> Self {
        Self::start_full(db, timing, limits, None).await
    }

    /// With the dashboard on 127.0.0.1:0.
    pub async fn start_with_http(
        db: &Path,
        timing: Timing,
        web: coordinator::web::WebConfig,
    ) -> Self {
        Self::start_full(
            db,
            timing,
            coordinator::limits::Limits::default(),
            Some(web),
        )
        .await
    }

    pub async fn start_full(
        db: &Path,
        timing: Timing,
        limits: coordinator::limits::Limits,
        web: Option<coordinator::web::WebConfig>,
    ) -> Self {
        // The coordinator's log in the test output when RUST_LOG asks for it.
        if std::env::var_os("RUST_LOG").is_some() {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
                .with_test_writer()
                .try_init();
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mut config = ServeConfig::new(db);
        config.timing = timing;
        config.sweep_interval = Duration::from_millis(100);
        config.limits = limits;
        let mut http = None;
        let mut http_listener = None;
        if let Some(web) = web {
            config.web = web;
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            http = Some(format!("http://{}", l.local_addr().unwrap()));
            http_listener = Some(l);
        }
        let (stop, rx) = oneshot::channel();
        let task = tokio::spawn(coordinator::serve(config, listener, http_listener, async {
            let _ = rx.await;
        }));
        let s = Self {
            url,
            http,
            stop: Some(stop),
            task: Some(task),
        };
        // Ready when the health service answers.
        let url = s.url.clone();
        wait_until("server ready", Duration::from_secs(20), || {
            let url = url.clone();
            async move {
                let ch = Channel::from_shared(url).ok()?.connect().await.ok()?;
                let mut h = tonic_health::pb::health_client::HealthClient::new(ch);
                h.check(tonic_health::pb::HealthCheckRequest {
                    service: String::new(),
                })
                .await
                .ok()
            }
        })
        .await;
        s
    }

    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap().unwrap();
        }
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url.clone())
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    pub async fn worker(&self, token: &str) -> Worker {
        WorkerServiceClient::with_interceptor(self.channel().await, Bearer::new(token).unwrap())
    }

    pub async fn admin(&self, token: &str) -> Admin {
        AdminServiceClient::with_interceptor(self.channel().await, Bearer::new(token).unwrap())
    }
}

pub struct Env {
    pub _dir: tempfile::TempDir,
    pub db: PathBuf,
    pub admin: String,
    pub workers: Vec<String>,
}

pub fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cluster.db");
    let conn = store::open(&db).unwrap();
    let admin = store::add_token(&conn, "ops", Role::Admin, 0).unwrap();
    let workers = (0..3)
        .map(|i| store::add_token(&conn, &format!("box{i}"), Role::Worker, 0).unwrap())
        .collect();
    Env {
        _dir: dir,
        db,
        admin,
        workers,
    }
}

pub fn timing(lease_ms: u64) -> Timing {
    Timing {
        lease_timeout_ms: lease_ms,
        heartbeat_interval_ms: lease_ms / 3,
        idle_retry_ms: 50,
    }
}

pub fn config(kind: &str, games: u64, extra: &str) -> String {
    format!(
        r#"
name = "{kind} test"
kind = "{kind}"
games = {games}
seed = 7
batch_seconds = 1

[limits]
nodes = 500

[[variants]]
variant = "latte"
ruleset = "normal"

[[variants]]
variant = "latte"
ruleset = "luft"

[first]
engine = "builtin"
{extra}
"#
    )
}

/// [`config`] with chess (rule-set `normal`) in place of Latte `luft`: a run that mixes
/// variants whose rule-set ids coincide.
pub fn mixed_config(kind: &str, games: u64, extra: &str) -> String {
    config(kind, games, extra).replace(
        "[[variants]]\nvariant = \"latte\"\nruleset = \"luft\"",
        "[[variants]]\nvariant = \"chess\"\nruleset = \"normal\"",
    )
}

pub fn gz(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// A made-up pair: outcomes from the index, `bias` > 0 favours `first`.
pub fn synthetic(task: &pb::PairTask, bias: u64, pgn: bool) -> pb::PairResult {
    let h = task.index.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33;
    let game = |first_is_white: bool, k: u64| {
        let r = (h >> (k * 3)) % (3 + bias);
        // 0: first wins, 1: draw, 2: first loses, >= 3: first wins.
        let first_wins = r == 0 || r >= 3;
        let outcome = match (r, first_is_white) {
            (1, _) => pb::GameOutcome::Draw,
            (_, true) if first_wins => pb::GameOutcome::WhiteWin,
            (_, false) if first_wins => pb::GameOutcome::BlackWin,
            (_, true) => pb::GameOutcome::BlackWin,
            (_, false) => pb::GameOutcome::WhiteWin,
        };
        pb::GameFacts {
            outcome: outcome as i32,
            first_is_white,
            termination: "checkmate".into(),
            plies: 40 + (h % 50) as u32,
            castlings: vec![pb::Castling {
                white: true,
                kind: if task.ruleset == "luft" {
                    "luft-king"
                } else {
                    "king"
                }
                .into(),
                move_number: 8,
            }],
            ruleset: task.ruleset.clone(),
            variant: task.variant.clone(),
            milestones: Vec::new(),
        }
    };
    pb::PairResult {
        index: task.index,
        games: vec![game(true, 0), game(false, 1)],
        pgn_gz: if pgn {
            gz(&format!(
                "[Event \"pair {i}\"]\n[Round \"{i}.1\"]\n\n1. e4 *\n\n[Event \"pair {i}\"]\n[Round \"{i}.2\"]\n\n1. d4 *\n",
                i = task.index
            ))
        } else {
            Vec::new()
        },
    }
}

pub async fn register(w: &mut Worker, name: &str) -> u64 {
    w.register(pb::RegisterRequest {
        name: name.into(),
        cores: 2,
        version: "0.1.0".into(),
        variants: vec!["latte".into(), "chess".into()],
        features: proto::features::declared(),
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .worker_id
}

pub async fn lease(w: &mut Worker, id: u64, max_pairs: u32) -> Option<pb::Lease> {
    w.lease(pb::LeaseRequest {
        worker_id: id,
        concurrency: 2,
        max_pairs,
    })
    .await
    .unwrap()
    .into_inner()
    .lease
}

/// Play a lease to the end, reporting after every pair (incremental reports). Returns the
/// number of reports.
pub async fn play(w: &mut Worker, id: u64, l: &pb::Lease, bias: u64) -> u64 {
    let mut seq = 0;
    for task in &l.pairs {
        seq += 1;
        let r = w
            .submit(pb::SubmitRequest {
                worker_id: id,
                lease_id: l.lease_id,
                seq,
                pairs: vec![synthetic(task, bias, l.upload_pgn)],
            })
            .await;
        match r {
            Ok(r) if r.get_ref().continue_lease => {}
            Ok(_) => break,
            // The run ended under us (an SPRT decided): the lease was revoked.
            Err(s) if s.code() == Code::FailedPrecondition => break,
            Err(s) => panic!("submit failed: {s}"),
        }
    }
    seq
}

/// Work until no run has anything left.
pub async fn work(mut w: Worker, name: &str, bias: u64) -> u64 {
    let id = register(&mut w, name).await;
    let mut pairs = 0;
    let mut idle = 0;
    while idle < 5 {
        match lease(&mut w, id, 3).await {
            Some(l) => {
                idle = 0;
                play(&mut w, id, &l, bias).await;
                pairs += l.pairs.len() as u64;
            }
            None => {
                idle += 1;
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        }
    }
    pairs
}

pub async fn show(a: &mut Admin, id: u64) -> pb::RunDetail {
    a.show_run(pb::RunRequest { run_id: id })
        .await
        .unwrap()
        .into_inner()
}

/// Every stored PGN of a run, as the admin API streams it.
pub async fn pgn_text(a: &mut Admin, id: u64) -> String {
    let mut stream = a
        .export_pgn(pb::RunRequest { run_id: id })
        .await
        .unwrap()
        .into_inner();
    let mut text = String::new();
    while let Some(c) = stream.message().await.unwrap() {
        text.push_str(&c.text);
    }
    text
}

/// [`config`] of an SPRT run of `games` at most, testing 0 against 10 logistic Elo.
pub fn sprt_config(games: u64) -> String {
    config(
        "sprt",
        games,
        "[sprt]\nelo0 = 0\nelo1 = 10\nmodel = \"logistic\"\n",
    )
}

pub async fn create(a: &mut Admin, text: String) -> u64 {
    a.create_run(pb::CreateRunRequest { config_toml: text })
        .await
        .unwrap()
        .into_inner()
        .run_id
}

pub fn assert_exact(d: &pb::RunDetail) {
    let s = d.summary.as_ref().unwrap();
    assert_eq!(s.pairs_done, s.pairs_total, "{s:?}");
    assert_eq!(s.state, pb::RunState::Finished as i32, "{s:?}");
    assert_eq!(d.pentanomial.iter().sum::<u64>(), s.pairs_total);
    assert_eq!(d.wins + d.draws + d.losses, 2 * s.pairs_total);
}
