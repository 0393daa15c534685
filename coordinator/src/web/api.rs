//! JSON endpoints, server-sent events, admin actions, PGN download and metrics. Every
//! handler checks who may read or act first (see [`super::auth`]).

use super::auth::{self, Refusal};
use super::reader::ReadError;
use super::WebState;
use crate::config::RunConfig;
use crate::error::CoreError;
use crate::model::RunStatus;
use crate::report::json;
use crate::service::now_ms;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use proto::v1 as pb;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::{Stream, StreamExt};

pub(super) type S = State<Arc<WebState>>;

/// Why a request failed, as an HTTP status and a JSON `{"error": ...}` body.
#[derive(Debug)]
pub(super) enum ApiError {
    Refused(Refusal),
    Core(CoreError),
    Read(ReadError),
    NotFound(String),
    BadRequest(String),
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> Self {
        Self::Refused(r)
    }
}
impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        Self::Core(e)
    }
}
impl From<ReadError> for ApiError {
    fn from(e: ReadError) -> Self {
        Self::Read(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            ApiError::Refused(r) => return r.into_response(),
            ApiError::Core(e) => {
                let st = tonic::Status::from(e);
                let status = match st.code() {
                    tonic::Code::NotFound => StatusCode::NOT_FOUND,
                    tonic::Code::InvalidArgument | tonic::Code::OutOfRange => {
                        StatusCode::BAD_REQUEST
                    }
                    tonic::Code::FailedPrecondition | tonic::Code::AlreadyExists => {
                        StatusCode::CONFLICT
                    }
                    tonic::Code::PermissionDenied => StatusCode::FORBIDDEN,
                    tonic::Code::Unauthenticated => StatusCode::UNAUTHORIZED,
                    tonic::Code::ResourceExhausted => StatusCode::PAYLOAD_TOO_LARGE,
                    tonic::Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
                    _ => StatusCode::INTERNAL_SERVER_ERROR,
                };
                (status, st.message().to_string())
            }
            ApiError::Read(e) => {
                tracing::error!(error = %e, "dashboard read failed");
                (StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
            }
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, m),
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
        };
        (status, Json(json!({ "error": message }))).into_response()
    }
}

/// A run id from the path: digits only, or a 404 that says so.
pub(super) fn run_id(raw: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>()
        .map_err(|_| ApiError::NotFound(format!("no run {raw:?}: run ids are whole numbers")))
}

/// `variant/ruleset` of each entry of a run's config.
pub(super) fn variants(config_toml: &str) -> Vec<String> {
    RunConfig::parse(config_toml)
        .map(|c| {
            c.variants
                .iter()
                .map(|v| {
                    if v.ruleset.is_empty() {
                        v.variant.clone()
                    } else {
                        format!("{}/{}", v.variant, v.ruleset)
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every run's detail, newest first.
pub(super) async fn details(s: &WebState) -> Result<Vec<pb::RunDetail>, ApiError> {
    let details = s
        .core
        .call(|c| {
            c.list()
                .iter()
                .map(|summary| c.detail(summary.id))
                .collect::<Result<Vec<_>, _>>()
        })
        .await?;
    Ok(details.into_iter().map(pb::RunDetail::from).collect())
}

/// One run's detail.
pub(super) async fn detail(s: &WebState, id: u64) -> Result<pb::RunDetail, ApiError> {
    let d = s.core.call(move |c| c.detail(id)).await?;
    Ok(d.into())
}

/// Games a second of each run (0 unless active), in the order given.
pub(super) async fn rates(s: &WebState, details: &[pb::RunDetail]) -> Result<Vec<f64>, ApiError> {
    let active: Vec<(u64, u64)> = details
        .iter()
        .filter_map(|d| d.summary.as_ref())
        .filter(|s| s.state == pb::RunState::Active as i32)
        .map(|s| (s.run_id, s.pairs_done))
        .collect();
    let measured = s.reader.rates(active.clone(), now_ms()).await?;
    let by_id: std::collections::BTreeMap<u64, f64> =
        active.iter().map(|(id, _)| *id).zip(measured).collect();
    Ok(details
        .iter()
        .map(|d| {
            let id = d.summary.as_ref().map_or(0, |s| s.run_id);
            by_id.get(&id).copied().unwrap_or(0.0)
        })
        .collect())
}

/// The runs list as JSON: each run's summary, variants, games/s and key figures.
pub(super) async fn runs_json(s: &WebState) -> Result<Vec<Value>, ApiError> {
    let details = details(s).await?;
    let rates = rates(s, &details).await?;
    Ok(details
        .iter()
        .zip(rates)
        .map(|(d, rate)| {
            let mut v = json::summary(&d.summary.clone().unwrap_or_default());
            if let Some(map) = v.as_object_mut() {
                map.insert("variants".into(), json!(variants(&d.config_toml)));
                map.insert("games_per_second".into(), json!(rate));
                map.insert("elo".into(), json::elo(d.elo.as_ref()));
                map.insert("sprt".into(), json::sprt(d.sprt.as_ref()));
                map.insert(
                    "spsa_iterations".into(),
                    json!(d.spsa.first().map(|p| p.iterations)),
                );
            }
            v
        })
        .collect())
}

/// `GET /api/runs`.
pub(super) async fn runs(State(s): S, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    auth::may_read(&s, &headers)?;
    Ok(Json(json!({ "runs": runs_json(&s).await? })))
}

/// `GET /api/runs/{id}`.
pub(super) async fn run(
    State(s): S,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    auth::may_read(&s, &headers)?;
    let id = run_id(&id)?;
    let d = detail(&s, id).await?;
    let mut v = json::detail(&d);
    let rate = rates(&s, std::slice::from_ref(&d)).await?;
    if let Some(map) = v.as_object_mut() {
        map.insert("variants".into(), json!(variants(&d.config_toml)));
        map.insert(
            "games_per_second".into(),
            json!(rate.first().copied().unwrap_or(0.0)),
        );
    }
    Ok(Json(v))
}

/// `GET /api/runs/{id}/history`: the stored points, with Elo computed from each.
pub(super) async fn history(
    State(s): S,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    auth::may_read(&s, &headers)?;
    let id = run_id(&id)?;
    // Unknown runs are a 404, not an empty history.
    s.core.call(move |c| c.summary(id)).await?;
    let points = s.reader.history(id).await?;
    let points: Vec<Value> = points
        .iter()
        .map(|p| {
            let elo = stats::logistic_elo(&stats::Results::Pentanomial(p.penta())).ok();
            json!({
                "pairs": p.pairs,
                "games": 2 * p.pairs,
                "at_unix_ms": p.at_ms,
                "pentanomial": p.pentanomial,
                "elo": elo.as_ref().map(|e| e.elo).filter(|v| v.is_finite()),
                "elo_ci": elo.as_ref().map(|e| e.ci).filter(|c| c.iter().all(|v| v.is_finite())),
                "llr": p.llr,
                "theta": p.theta,
            })
        })
        .collect();
    Ok(Json(json!({ "run": id, "points": points })))
}

/// `GET /api/runs/{id}/leases`: the run's active leases.
pub(super) async fn leases(
    State(s): S,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    auth::may_read(&s, &headers)?;
    let id = run_id(&id)?;
    let leases = s
        .core
        .call(move |c| {
            c.summary(id)?;
            Ok(c.run_leases(id))
        })
        .await?;
    Ok(Json(json!({ "run": id, "leases": leases })))
}

/// `GET /api/workers`.
pub(super) async fn workers(State(s): S, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    auth::may_read(&s, &headers)?;
    let now = now_ms();
    let workers = s.core.call(move |c| Ok(c.worker_views(now))).await?;
    Ok(Json(json!({ "now_unix_ms": now, "workers": workers })))
}

/// The body of `POST /api/runs/{id}/exclude`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExcludeBody {
    worker: String,
    #[serde(default = "yes")]
    exclude: bool,
}

fn yes() -> bool {
    true
}

/// The body of `POST /api/runs/{id}/extend`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtendBody {
    games: u64,
}

/// `POST /api/runs/{id}/{pause|resume|stop|exclude|extend}` with an admin bearer token.
pub(super) async fn act(
    State(s): S,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let who = auth::may_act(&s, &headers)?;
    let id = run_id(&id)?;
    let to = match action.as_str() {
        "pause" => RunStatus::Paused,
        "resume" => RunStatus::Active,
        "stop" => RunStatus::Stopped,
        "extend" => {
            let req: ExtendBody = serde_json::from_slice(&body).map_err(|e| {
                ApiError::BadRequest(format!("extend needs a JSON body {{\"games\": N}}: {e}"))
            })?;
            let summary = s.core.call(move |c| c.extend_run(id, req.games)).await?;
            tracing::info!(run = id, games = req.games, by = %who, "dashboard budget raised");
            return Ok(Json(json::summary(&summary.into())));
        }
        "exclude" => {
            let req: ExcludeBody = serde_json::from_slice(&body).map_err(|e| {
                ApiError::BadRequest(format!(
                    "exclude needs a JSON body {{\"worker\": NAME, \"exclude\": true|false}}: {e}"
                ))
            })?;
            let worker = req.worker.clone();
            let d = s
                .core
                .call(move |c| c.exclude(id, &req.worker, req.exclude))
                .await?;
            tracing::info!(run = id, worker = %worker, by = %who, "dashboard exclusion changed");
            return Ok(Json(json::detail(&d.into())));
        }
        other => {
            return Err(ApiError::NotFound(format!(
                "no action {other:?}: pause, resume, stop, exclude or extend"
            )))
        }
    };
    let summary = s.core.call(move |c| c.set_status(id, to)).await?;
    tracing::info!(run = id, action = %action, by = %who, "dashboard action");
    Ok(Json(json::summary(&summary.into())))
}

/// `GET /api/events`: an event `change` (data: the commit generation) after commits, at
/// most one a second; pages refresh their live parts on it.
pub(super) async fn events(
    State(s): S,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    auth::may_read(&s, &headers)?;
    let changes = tokio_stream::wrappers::WatchStream::new(s.core.changes());
    let stream = changes.throttle(Duration::from_secs(1)).map(|generation| {
        Ok(Event::default()
            .event("change")
            .data(generation.to_string()))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// `GET /metrics`: Prometheus text.
pub(super) async fn metrics(State(s): S, headers: HeaderMap) -> Result<Response, ApiError> {
    auth::may_read(&s, &headers)?;
    let text = s.metrics.render(&s.core).await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response())
}

/// `GET /runs/{id}/pgn`: every stored game, streamed from the database.
pub(super) async fn pgn(
    State(s): S,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    auth::may_read(&s, &headers)?;
    let id = run_id(&id)?;
    if !s.core.call(move |c| Ok(c.has_run(id))).await? {
        return Err(CoreError::UnknownRun(id).into());
    }
    let chunks = s
        .exporter
        .spawn(id, |e| std::io::Error::other(e.to_string()));
    let body = Body::from_stream(chunks);
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-chess-pgn".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"run-{id}.pgn\""),
            ),
        ],
        body,
    )
        .into_response())
}

/// Anything else.
pub(super) async fn not_found() -> ApiError {
    ApiError::NotFound("no such page".into())
}
