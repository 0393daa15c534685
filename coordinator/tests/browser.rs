//! The dashboard in a real browser: headless Chromium driven over WebDriver (Debian's
//! `chromium` and `chromium-driver`; `.ci/run` installs them). A coordinator on 127.0.0.1:0
//! with a finished run and a running one: the figures shown equal `ShowRun`'s, a figure
//! changes without a reload when results arrive, a pause is refused without the admin token
//! and done with it, the page fits a phone's width, and screenshots are saved.

mod common;

use common::*;
use coordinator::web::WebConfig;
use fantoccini::{Client, ClientBuilder, Locator};
use proto::v1 as pb;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const CHROMIUM: &str = "/usr/bin/chromium";
const DRIVER: &str = "/usr/bin/chromedriver";

/// chromedriver as a child process in a process group of its own, with the browsers it
/// starts: the whole group is killed on drop, also when the test fails half-way.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn driver() -> Driver {
    // A free loopback port for chromedriver (it cannot report one it picked itself).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(DRIVER)
        .process_group(0)
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let d = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    wait_until(
        "chromedriver listening",
        Duration::from_secs(30),
        || async move {
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .ok()
        },
    )
    .await;
    d
}

async fn browser(driver: &Driver) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": CHROMIUM,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000", "--no-first-run", "--disable-extensions",
                     "--disable-crash-reporter", "--disable-breakpad"],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a WebDriver session")
}

/// The text of `css`, retried while the page swaps in a fresh live part (an element found
/// just before a swap goes stale).
async fn text(c: &Client, css: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let got = match c.find(Locator::Css(css)).await {
            Ok(e) => e.text().await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match got {
            Ok(t) => return t,
            Err(e) => assert!(tokio::time::Instant::now() < deadline, "{css}: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Wait until the text of `css` satisfies `ok` (the page updates itself; no reload).
async fn wait_text(c: &Client, css: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let t = match c.find(Locator::Css(css)).await {
            Ok(e) => e.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if ok(&t) {
            return t;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: {css} still shows {t:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn screenshot(c: &Client, dir: &Path, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "{name} is not a PNG");
    std::fs::write(dir.join(name), png).expect("screenshot written");
}

fn elo_text(e: &pb::EloFigures) -> String {
    format!("{:+.1} [{:+.1}, {:+.1}]", e.elo, e.ci_low, e.ci_high)
}

/// Play `n` more pairs of run `run` as worker `box-live`.
async fn play_more(w: &mut Worker, wid: u64, n: u32) {
    let l = lease(w, wid, n).await.expect("a lease of the running run");
    play(w, wid, &l, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() || !Path::new(DRIVER).exists() {
        eprintln!(
            "SKIPPED: {CHROMIUM} or {DRIVER} missing (apt-get install chromium chromium-driver; .ci/run does)"
        );
        return;
    }
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let e = env();
    let server = Server::start_with_http(&e.db, timing(30_000), WebConfig::default()).await;
    let base = server.http.clone().unwrap();
    let mut admin = server.admin(&e.admin).await;

    // A finished run, then a running one with a few pairs played.
    let done = create(&mut admin, config("match", 16, "")).await;
    work(server.worker(&e.workers[0]).await, "box-a", 1).await;
    let running = create(
        &mut admin,
        config("sprt", 400, "[sprt]\nelo0 = 0\nelo1 = 10\n"),
    )
    .await;
    let mut w = server.worker(&e.workers[1]).await;
    let wid = register(&mut w, "box-live").await;
    play_more(&mut w, wid, 3).await;

    let d = driver().await;
    let c = browser(&d).await;

    // The runs page: both runs, with the figures `run show` gives.
    c.goto(&format!("{base}/")).await.unwrap();
    let finished = show(&mut admin, done).await;
    let row = format!("tr[data-run=\"{done}\"]");
    let figure = text(&c, &format!("{row} td[data-field=\"figure\"]")).await;
    assert_eq!(
        figure,
        format!("Elo {}", elo_text(finished.elo.as_ref().unwrap()))
    );
    assert_eq!(
        text(&c, &format!("{row} td[data-field=\"state\"]")).await,
        "finished"
    );
    let live_row = format!("tr[data-run=\"{running}\"]");
    assert_eq!(
        text(&c, &format!("{live_row} td[data-field=\"state\"]")).await,
        "active"
    );
    let now = show(&mut admin, running).await;
    let sprt = now.sprt.clone().unwrap();
    let llr = text(&c, &format!("{live_row} td[data-field=\"figure\"]")).await;
    assert!(
        llr.starts_with(&format!(
            "LLR {:.2} [{:.2}, {:.2}]",
            sprt.llr, sprt.lower_bound, sprt.upper_bound
        )),
        "{llr}"
    );
    // Filtering hides the other run.
    c.find(Locator::Css("#filter"))
        .await
        .unwrap()
        .send_keys("sprt")
        .await
        .unwrap();
    let hidden: bool = c
        .execute(
            &format!("return document.querySelector('{row}').style.display === 'none'"),
            vec![],
        )
        .await
        .unwrap()
        .as_bool()
        .unwrap_or(false);
    assert!(hidden, "the filter did not hide the finished run");
    screenshot(&c, &shots, "runs.png").await;

    // The running run's page.
    c.goto(&format!("{base}/runs/{running}")).await.unwrap();
    let s = now.summary.clone().unwrap();
    assert_eq!(
        text(&c, "#pairs-done").await,
        format!("{} / {}", s.pairs_done, s.pairs_total)
    );
    if let Some(e) = &now.elo {
        assert_eq!(text(&c, "#elo").await, elo_text(e));
    }
    assert_eq!(
        text(&c, "#llr").await,
        format!(
            "{:.2} [{:.2}, {:.2}]",
            sprt.llr, sprt.lower_bound, sprt.upper_bound
        )
    );
    screenshot(&c, &shots, "run-before.png").await;

    // Results arrive: the page follows without a reload.
    play_more(&mut w, wid, 4).await;
    let after = show(&mut admin, running).await.summary.unwrap();
    assert!(after.pairs_done > s.pairs_done);
    let want = format!("{} / {}", after.pairs_done, after.pairs_total);
    wait_text(&c, "#pairs-done", "live update", |t| t == want).await;

    // A pause without the token is refused; with it, done.
    c.find(Locator::Css("#pause"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let refused = wait_text(&c, "#action-status", "refusal shown", |t| {
        t.contains("refused")
    })
    .await;
    assert!(refused.contains("401"), "{refused}");
    assert_eq!(
        show(&mut admin, running).await.summary.unwrap().state,
        pb::RunState::Active as i32
    );
    c.find(Locator::Css("#admin-token"))
        .await
        .unwrap()
        .send_keys(&e.admin)
        .await
        .unwrap();
    c.find(Locator::Css("#pause"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "#action-status", "pause shown", |t| {
        t.contains("pause done")
    })
    .await;
    assert_eq!(
        show(&mut admin, running).await.summary.unwrap().state,
        pb::RunState::Paused as i32
    );
    wait_text(&c, "#state", "paused state shown", |t| t == "paused").await;
    screenshot(&c, &shots, "run-paused.png").await;

    // A larger budget from the page: the run stays paused and shows its new total.
    let games = (after.pairs_total + 10) * 2;
    c.find(Locator::Css("#add-games"))
        .await
        .unwrap()
        .send_keys(&games.to_string())
        .await
        .unwrap();
    c.find(Locator::Css("#extend"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "#action-status", "extend shown", |t| {
        t.contains("extend done")
    })
    .await;
    let grown = show(&mut admin, running).await.summary.unwrap();
    assert_eq!(grown.pairs_total, after.pairs_total + 10);
    assert_eq!(grown.state, pb::RunState::Paused as i32);
    let want = format!("{} / {}", grown.pairs_done, grown.pairs_total);
    wait_text(&c, "#pairs-done", "new total shown", |t| t == want).await;

    // A phone's width: nothing wider than the screen but the scrolling tables.
    c.set_window_size(390, 844).await.unwrap();
    c.refresh().await.unwrap();
    text(&c, "#pairs-done").await;
    let fits: bool = c
        .execute(
            "return document.documentElement.scrollWidth <= window.innerWidth + 1",
            vec![],
        )
        .await
        .unwrap()
        .as_bool()
        .unwrap_or(false);
    assert!(fits, "the run page is wider than a phone's screen");
    screenshot(&c, &shots, "run-phone.png").await;
    c.set_window_size(1280, 1000).await.unwrap();

    // The finished run and the workers page.
    c.goto(&format!("{base}/runs/{done}")).await.unwrap();
    assert_eq!(
        text(&c, "#elo").await,
        elo_text(finished.elo.as_ref().unwrap())
    );
    screenshot(&c, &shots, "run-finished.png").await;
    c.goto(&format!("{base}/workers")).await.unwrap();
    let workers = text(&c, "#workers").await;
    assert!(
        workers.contains("box-live") && workers.contains("box-a"),
        "{workers}"
    );
    screenshot(&c, &shots, "workers.png").await;

    c.close().await.unwrap();
    eprintln!("screenshots in {}", shots.display());
    server.shutdown().await;
}
