//! The dashboard's HTTP endpoints against a real coordinator on 127.0.0.1:0: every page and
//! JSON endpoint, the figures they show against `ShowRun`'s, and who may read and act.

mod common;

use base64::Engine as _;
use common::*;
use coordinator::web::WebConfig;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use proto::v1 as pb;
use serde_json::Value;

struct Answer {
    status: u16,
    headers: hyper::HeaderMap,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

async fn http(method: Method, url: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut req = Request::builder().method(method).uri(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = client
        .request(req.body(Full::new(Bytes::from(body.to_string()))).unwrap())
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

async fn get(url: &str) -> Answer {
    http(Method::GET, url, &[], "").await
}

/// A finished match of 8 pairs played by the first worker token.
async fn finished_run(server: &Server, e: &Env) -> u64 {
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 16, "")).await;
    work(server.worker(&e.workers[0]).await, "box-a", 1).await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_and_json_show_the_runs_figures() {
    let e = env();
    let server = Server::start_with_http(&e.db, timing(30_000), WebConfig::default()).await;
    let base = server.http.clone().unwrap();
    let id = finished_run(&server, &e).await;
    let mut admin = server.admin(&e.admin).await;
    let shown = show(&mut admin, id).await;
    let summary = shown.summary.clone().unwrap();
    assert_eq!(summary.pairs_done, 8);

    // The runs list.
    let page = get(&format!("{base}/")).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<table id=\"runs\""), "{}", page.body);
    assert!(page.body.contains(&summary.name));
    assert!(page.body.contains("16 / 16 games"), "{}", page.body);
    let runs = get(&format!("{base}/api/runs")).await.json();
    let r = &runs["runs"][0];
    assert_eq!(r["id"], id);
    assert_eq!(r["pairs_done"], summary.pairs_done);
    assert_eq!(r["state"], "finished");
    assert_eq!(r["variants"][1], "latte/luft");
    let elo = shown.elo.unwrap();
    assert_eq!(r["elo"]["elo"].as_f64(), Some(elo.elo));

    // A run.
    let d = get(&format!("{base}/api/runs/{id}")).await.json();
    assert_eq!(d["pentanomial"], serde_json::json!(shown.pentanomial));
    assert_eq!(
        (
            d["wins"].as_u64(),
            d["draws"].as_u64(),
            d["losses"].as_u64()
        ),
        (Some(shown.wins), Some(shown.draws), Some(shown.losses))
    );
    assert_eq!(d["elo"]["ci"][0].as_f64(), Some(elo.ci_low));
    assert_eq!(d["study"].as_array().map(Vec::len), Some(shown.study.len()));
    assert_eq!(d["workers"][0]["name"], shown.workers[0].name);
    let page = get(&format!("{base}/runs/{id}")).await;
    assert_eq!(page.status, 200);
    let elo_text = format!("{:+.1} [{:+.1}, {:+.1}]", elo.elo, elo.ci_low, elo.ci_high);
    assert!(page.body.contains(&elo_text), "no {elo_text} in the page");
    assert!(page.body.contains("<svg"), "no chart");
    assert!(page.body.contains("id=\"pentanomial\""));
    let fragment = get(&format!("{base}/runs/{id}?fragment=1")).await;
    assert!(!fragment.body.contains("<html"));
    assert!(fragment.body.contains("id=\"pairs-done\""));

    // Its history: bounded, ordered, ending at the run's pairs.
    let h = get(&format!("{base}/api/runs/{id}/history")).await.json();
    let points = h["points"].as_array().unwrap();
    assert!(
        !points.is_empty() && points.len() <= 402,
        "{}",
        points.len()
    );
    let pairs: Vec<u64> = points.iter().filter_map(|p| p["pairs"].as_u64()).collect();
    assert!(pairs.windows(2).all(|w| w[0] < w[1]), "{pairs:?}");
    assert_eq!(pairs.last().copied(), Some(summary.pairs_done));
    let last = points.last().unwrap();
    assert_eq!(last["pentanomial"], serde_json::json!(shown.pentanomial));

    // Leases, workers, metrics, PGN, assets.
    let l = get(&format!("{base}/api/runs/{id}/leases")).await.json();
    assert_eq!(l["leases"].as_array().map(Vec::len), Some(0));
    let w = get(&format!("{base}/api/workers")).await.json();
    let worker = &w["workers"][0];
    assert_eq!(worker["label"], "box-a");
    assert_eq!(worker["token"], shown.workers[0].name.as_str());
    assert!(
        worker["games_per_minute"].as_f64().unwrap_or(0.0) > 0.0,
        "{worker}"
    );
    let page = get(&format!("{base}/workers")).await;
    assert!(page.body.contains("box-a") && page.body.contains("<table id=\"workers\""));
    let m = get(&format!("{base}/metrics")).await;
    assert_eq!(m.status, 200);
    assert!(m.body.contains("cluster_games_total 16"), "{}", m.body);
    let pgn = get(&format!("{base}/runs/{id}/pgn")).await;
    assert_eq!(pgn.status, 200);
    assert!(pgn.headers["content-disposition"]
        .to_str()
        .unwrap()
        .contains(&format!("run-{id}.pgn")));
    let js = get(&format!("{base}/assets/dashboard.js")).await;
    assert_eq!(js.status, 200);
    assert!(js.headers["content-type"]
        .to_str()
        .unwrap()
        .contains("javascript"));
    // Nothing is loaded from another host.
    let page = get(&format!("{base}/runs/{id}")).await;
    for needle in ["https://", "src=\"http", "href=\"http"] {
        assert!(!page.body.contains(needle), "{needle} in the page");
    }

    // Bad input: named, never a panic.
    for (url, status) in [
        (format!("{base}/api/runs/999"), 404),
        (format!("{base}/api/runs/abc"), 404),
        (format!("{base}/runs/999"), 404),
        (format!("{base}/api/runs/999/history"), 404),
        (format!("{base}/assets/nothing.js"), 404),
        (format!("{base}/no/such/page"), 404),
    ] {
        let a = get(&url).await;
        assert_eq!(a.status, status, "{url}: {}", a.body);
    }
    let a = get(&format!("{base}/api/runs/999")).await;
    assert!(
        a.json()["error"].as_str().unwrap().contains("999"),
        "{}",
        a.body
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_need_an_admin_bearer_token_from_this_site() {
    let e = env();
    let server = Server::start_with_http(&e.db, timing(30_000), WebConfig::default()).await;
    let base = server.http.clone().unwrap();
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 40, "")).await;
    let pause = format!("{base}/api/runs/{id}/pause");
    let admin_bearer = format!("Bearer {}", e.admin);
    let worker_bearer = format!("Bearer {}", e.workers[0]);
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("x:{}", e.admin))
    );
    let state = |d: pb::RunDetail| d.summary.unwrap().state;

    // Refused: no token, a worker's token, a wrong token, basic authentication, another site.
    for (headers, status) in [
        (vec![], 401),
        (vec![("authorization", worker_bearer.as_str())], 403),
        (vec![("authorization", "Bearer nope")], 401),
        (vec![("authorization", basic.as_str())], 401),
        (
            vec![
                ("authorization", admin_bearer.as_str()),
                ("origin", "http://evil.example"),
            ],
            403,
        ),
        (
            vec![
                ("authorization", admin_bearer.as_str()),
                ("sec-fetch-site", "cross-site"),
            ],
            403,
        ),
    ] {
        let a = http(Method::POST, &pause, &headers, "").await;
        assert_eq!(a.status, status, "{headers:?}: {}", a.body);
        // No basic-authentication challenge: a browser would pop up a login dialog.
        assert!(!a.headers.contains_key("www-authenticate"), "{headers:?}");
        assert_eq!(
            state(show(&mut admin, id).await),
            pb::RunState::Active as i32,
            "{headers:?} paused the run"
        );
    }
    // Accepted from this site or from a script.
    let host = base.trim_start_matches("http://").to_string();
    let origin = base.clone();
    let a = http(
        Method::POST,
        &pause,
        &[
            ("authorization", admin_bearer.as_str()),
            ("origin", origin.as_str()),
            ("host", host.as_str()),
        ],
        "",
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.json()["state"], "paused");
    assert_eq!(
        state(show(&mut admin, id).await),
        pb::RunState::Paused as i32
    );
    let auth = [("authorization", admin_bearer.as_str())];
    let a = http(
        Method::POST,
        &format!("{base}/api/runs/{id}/resume"),
        &auth,
        "",
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        state(show(&mut admin, id).await),
        pb::RunState::Active as i32
    );

    // Exclusion: a named worker, with a clear error for a bad body.
    let exclude = format!("{base}/api/runs/{id}/exclude");
    let a = http(Method::POST, &exclude, &auth, "{\"who\": 1}").await;
    assert_eq!(a.status, 400, "{}", a.body);
    assert!(a.json()["error"].as_str().unwrap().contains("worker"));
    let a = http(Method::POST, &exclude, &auth, "{\"worker\": \"nobody\"}").await;
    assert_eq!(a.status, 400, "{}", a.body);
    assert!(a.json()["error"].as_str().unwrap().contains("nobody"));
    let mut w = server.worker(&e.workers[1]).await;
    let wid = register(&mut w, "box-b").await;
    let a = http(Method::POST, &exclude, &auth, "{\"worker\": \"box1\"}").await;
    assert_eq!(a.status, 200, "{}", a.body);
    // An excluded token is given no more of the run.
    assert!(lease(&mut w, wid, 1).await.is_none());

    // A larger budget: a body that names the games, more than the run has.
    let extend = format!("{base}/api/runs/{id}/extend");
    let a = http(Method::POST, &extend, &auth, "{\"games\": \"many\"}").await;
    assert_eq!(a.status, 400, "{}", a.body);
    assert!(a.json()["error"].as_str().unwrap().contains("games"));
    let a = http(Method::POST, &extend, &auth, "{\"games\": 40}").await;
    assert_eq!(a.status, 400, "{}", a.body);
    assert!(a.json()["error"].as_str().unwrap().contains("must be more"));
    let a = http(Method::POST, &extend, &[], "{\"games\": 60}").await;
    assert_eq!(a.status, 401, "{}", a.body);
    let a = http(Method::POST, &extend, &auth, "{\"games\": 60}").await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        show(&mut admin, id).await.summary.map(|s| s.pairs_total),
        Some(30)
    );
    let a = http(
        Method::POST,
        &format!("{base}/api/runs/{id}/explode"),
        &auth,
        "",
    )
    .await;
    assert_eq!(a.status, 404, "{}", a.body);
    let a = http(
        Method::POST,
        &format!("{base}/api/runs/77/pause"),
        &auth,
        "",
    )
    .await;
    assert_eq!(a.status, 404, "{}", a.body);
    // Stop ends it.
    let a = http(
        Method::POST,
        &format!("{base}/api/runs/{id}/stop"),
        &auth,
        "",
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        state(show(&mut admin, id).await),
        pb::RunState::Stopped as i32
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_can_require_a_token() {
    let e = env();
    let web = WebConfig {
        read_requires_token: true,
        ..Default::default()
    };
    let server = Server::start_with_http(&e.db, timing(30_000), web).await;
    let base = server.http.clone().unwrap();
    let basic = |token: &str| {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("me:{token}"))
        )
    };
    for path in ["/", "/api/runs", "/workers", "/metrics", "/api/events"] {
        let a = get(&format!("{base}{path}")).await;
        assert_eq!(a.status, 401, "{path}");
        assert!(a.headers.contains_key("www-authenticate"), "{path}");
        let a = http(
            Method::GET,
            &format!("{base}{path}"),
            &[("authorization", &basic("wrong"))],
            "",
        )
        .await;
        assert_eq!(a.status, 401, "{path}");
    }
    // Any live token reads: a worker's as a basic password, an admin's as a bearer token.
    let a = http(
        Method::GET,
        &format!("{base}/api/runs"),
        &[("authorization", &basic(&e.workers[0]))],
        "",
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let bearer = format!("Bearer {}", e.admin);
    let a = http(
        Method::GET,
        &format!("{base}/"),
        &[("authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!(a.status, 200);
    // Assets are not secret: the login prompt's page still has its style.
    assert_eq!(
        get(&format!("{base}/assets/dashboard.css")).await.status,
        200
    );
    server.shutdown().await;
}

/// Pages left open (each holds a connection for its live events) cannot make the dashboard
/// hold more than its limit; a further client waits and is served once one closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_connections_are_capped() {
    let e = env();
    let web = WebConfig {
        max_connections: 2,
        ..Default::default()
    };
    let server = Server::start_with_http(&e.db, timing(30_000), web).await;
    let base = server.http.clone().unwrap();
    let addr = base.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let url = format!("{base}/api/runs");
    let third = tokio::spawn(async move { get(&url).await.status });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!third.is_finished(), "served beyond the connection limit");
    drop(held.pop());
    let status = tokio::time::timeout(std::time::Duration::from_secs(20), third)
        .await
        .expect("served once a connection closes")
        .unwrap();
    assert_eq!(status, 200);
    drop(held);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn studies_are_lined_up_on_the_compare_page_and_bad_queries_are_named() {
    let e = env();
    let server = Server::start_with_http(&e.db, timing(30_000), WebConfig::default()).await;
    let base = server.http.clone().unwrap();
    let mut admin = server.admin(&e.admin).await;
    let study = "[study]\nbaseline = \"normal\"\n";
    let a = create(&mut admin, config("study", 200, study)).await;
    let b = create(&mut admin, config("study", 200, study)).await;
    let m = create(&mut admin, config("match", 8, "")).await;
    work(server.worker(&e.workers[0]).await, "box-a", 0).await;

    // A study's page leads with its tables; the Elo and pentanomial of an engine playing
    // itself are not shown, a match's are.
    let page = get(&format!("{base}/runs/{a}")).await;
    assert!(page.body.contains("Did each side castle?"), "{}", page.body);
    assert!(
        page.body.contains("Sizing: games for intervals"),
        "{}",
        page.body
    );
    for absent in [
        "Pentanomial of first",
        "Elo of first",
        "Elo over games",
        "First by rule-set",
    ] {
        assert!(!page.body.contains(absent), "{absent} on a study's page");
    }
    let page = get(&format!("{base}/runs/{m}")).await;
    assert!(page.body.contains("Pentanomial of first"));
    // The match plays two rule-sets: first's results under each.
    assert!(
        page.body.contains("First by rule-set") && page.body.contains("<td class=\"l\">luft</td>"),
        "{}",
        page.body
    );

    // The runs list links the latte studies side by side.
    let page = get(&format!("{base}/")).await;
    let link = format!("/compare?runs={a},{b}");
    assert!(page.body.contains(&link), "{}", page.body);
    let page = get(&format!("{base}{link}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("<table id=\"compared\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("Across strengths"), "{}", page.body);
    assert!(
        page.body.contains("The baseline (normal) in every study"),
        "{}",
        page.body
    );
    let fragment = get(&format!("{base}{link}&fragment=1")).await;
    assert!(!fragment.body.contains("<html") && fragment.body.contains("Across strengths"));

    // Each bad query is refused with what is wrong in it.
    let nine: Vec<String> = (1..=9).map(|i| i.to_string()).collect();
    for (query, status, says) in [
        (String::new(), 400, "give the study runs".to_string()),
        (format!("?runs={a}"), 400, "two or more".to_string()),
        (
            format!("?runs={a},x7"),
            400,
            "x7\\\" is not a run id".to_string(),
        ),
        (
            format!("?runs={a},{a}"),
            400,
            format!("run {a} is given twice"),
        ),
        (
            format!("?runs={a},{m}"),
            400,
            format!("run {m} is a match run"),
        ),
        (format!("?runs={a},999"), 404, "999".to_string()),
        (
            format!("?runs={}", nine.join(",")),
            400,
            "at most 8".to_string(),
        ),
    ] {
        let r = get(&format!("{base}/compare{query}")).await;
        assert_eq!(r.status, status, "{query}: {}", r.body);
        assert!(r.body.contains(&says), "{query}: {}", r.body);
    }
    server.shutdown().await;
}
