//! Admin client used by `coordinator run ...`, and the text shown by `run show`.

use proto::v1 as pb;
use proto::v1::admin_service_client::AdminServiceClient;
use std::fmt::Write;
use std::path::Path;
use thiserror::Error;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

/// Why a client call failed.
#[derive(Debug, Error)]
pub enum ClientError {
    /// Bad URL, unreachable server, TLS setup.
    #[error("cannot connect to {url}: {message}")]
    Connect {
        /// Server URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The token cannot be sent as metadata.
    #[error("the token contains characters that cannot be sent")]
    BadToken,
    /// The server refused.
    #[error("{}: {}", code_name(.0.code()), .0.message())]
    Status(#[from] Status),
}

fn code_name(c: tonic::Code) -> String {
    format!("{c:?}").to_lowercase()
}

/// Adds `authorization: Bearer <token>` to every request.
#[derive(Clone, Debug)]
pub struct Bearer(MetadataValue<tonic::metadata::Ascii>);

impl Bearer {
    /// For a token.
    pub fn new(token: &str) -> Result<Self, ClientError> {
        format!("Bearer {token}")
            .parse()
            .map(Self)
            .map_err(|_| ClientError::BadToken)
    }
}

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        req.metadata_mut().insert("authorization", self.0.clone());
        Ok(req)
    }
}

/// An authenticated admin client.
pub type AdminClient = AdminServiceClient<InterceptedService<Channel, Bearer>>;

/// Open a channel to `url` (`http://` or `https://`; `ca` is a PEM root for self-signed
/// servers).
pub async fn channel(url: &str, ca: Option<&Path>) -> Result<Channel, ClientError> {
    let err = |message: String| ClientError::Connect {
        url: url.to_string(),
        message,
    };
    let mut ep = Endpoint::from_shared(url.to_string()).map_err(|e| err(e.to_string()))?;
    if url.starts_with("https://") {
        let mut tls = ClientTlsConfig::new().with_enabled_roots();
        if let Some(ca) = ca {
            let pem = std::fs::read(ca).map_err(|e| err(format!("{}: {e}", ca.display())))?;
            tls = tls.ca_certificate(Certificate::from_pem(pem));
        }
        ep = ep.tls_config(tls).map_err(|e| err(e.to_string()))?;
    }
    ep.connect().await.map_err(|e| err(format!("{e}")))
}

/// Connect an admin client.
pub async fn admin(url: &str, token: &str, ca: Option<&Path>) -> Result<AdminClient, ClientError> {
    let ch = channel(url, ca).await?;
    Ok(
        AdminServiceClient::with_interceptor(ch, Bearer::new(token)?)
            .max_decoding_message_size(proto::MAX_MESSAGE_BYTES),
    )
}

/// A run state as the command line prints it.
pub fn state_name(s: i32) -> &'static str {
    match pb::RunState::try_from(s) {
        Ok(pb::RunState::Active) => "active",
        Ok(pb::RunState::Paused) => "paused",
        Ok(pb::RunState::Stopped) => "stopped",
        Ok(pb::RunState::Finished) => "finished",
        _ => "?",
    }
}

/// Whether `d` is an SPRT that played its whole budget without a decision: finished, but
/// the test's own state still says "continue". Shown as such, with how to give it more
/// games: a test whose effect sits near the middle of its bounds stays undecided longest
/// and is exactly the one worth growing (the run grows in place, its pairs continuing the
/// same sequence), and "finished ... continue" alone reads as a contradiction.
pub fn sprt_ran_out(d: &pb::RunDetail) -> bool {
    let finished_by_budget = d.summary.as_ref().is_some_and(|r| {
        r.state == pb::RunState::Finished as i32
            && r.finish_reason == crate::extend::ALL_PAIRS_PLAYED
    });
    let undecided = stats::SprtState::Continue.to_string();
    finished_by_budget && d.sprt.as_ref().is_some_and(|p| p.state == undecided)
}

/// One line per run.
pub fn format_list(runs: &[pb::RunSummary]) -> String {
    let mut s = format!(
        "{:>4}  {:<6} {:<9} {:>4}  {:>15}  {}\n",
        "id", "kind", "state", "prio", "pairs done/all", "name"
    );
    for r in runs {
        let _ = writeln!(
            s,
            "{:>4}  {:<6} {:<9} {:>4}  {:>15}  {}",
            r.run_id,
            r.kind,
            state_name(r.state),
            r.priority,
            format!("{}/{}", r.pairs_done, r.pairs_total),
            r.name
        );
    }
    s
}

/// The `run show` report.
pub fn format_detail(d: &pb::RunDetail) -> String {
    let mut s = String::new();
    if let Some(r) = &d.summary {
        let _ = writeln!(
            s,
            "run {}: {} ({}, {})",
            r.run_id,
            r.name,
            r.kind,
            state_name(r.state)
        );
        let _ = writeln!(
            s,
            "pairs: {} done, {} leased, {} planned{}",
            r.pairs_done,
            r.pairs_leased,
            r.pairs_total,
            if r.finish_reason.is_empty() {
                String::new()
            } else if r.state == proto::v1::RunState::Paused as i32 {
                // The run paused itself: the reason says why (`paused: ...`).
                format!("; {}", r.finish_reason)
            } else {
                format!("; finished: {}", r.finish_reason)
            }
        );
    }
    // A study is one engine playing itself under several rule-sets: "first"'s W/D/L,
    // pentanomial and Elo against itself are noise about zero, so only the game count shows.
    let is_study = d.summary.as_ref().is_some_and(|r| r.kind == "study");
    if is_study {
        let _ = writeln!(s, "games: {}", d.wins + d.draws + d.losses);
    } else {
        let _ = writeln!(
            s,
            "games: W {} D {} L {}   pentanomial {:?}",
            d.wins, d.draws, d.losses, d.pentanomial
        );
    }
    if let Some(e) = d.elo.as_ref().filter(|_| !is_study) {
        let _ = writeln!(
            s,
            "Elo {:+.2} [{:+.2}, {:+.2}] (95%), LOS {:.1}%, nElo {:+.2} [{:+.2}, {:+.2}]",
            e.elo,
            e.ci_low,
            e.ci_high,
            100.0 * e.los,
            e.nelo,
            e.nelo_ci_low,
            e.nelo_ci_high
        );
    }
    if let Some(p) = &d.sprt {
        let ran_out = sprt_ran_out(d);
        let verdict = if ran_out {
            "undecided: its games ran out before the LLR reached a bound"
        } else {
            p.state.as_str()
        };
        let _ = writeln!(
            s,
            "SPRT {} <{}, {}>: LLR {:.3} [{:.3}, {:.3}] over {} pairs: {verdict}",
            p.model, p.elo0, p.elo1, p.llr, p.lower_bound, p.upper_bound, p.counted_pairs
        );
        if let Some(r) = d.summary.as_ref().filter(|_| ran_out) {
            let _ = writeln!(
                s,
                "  to play on: `coordinator run extend {} --games N`, or a larger `games` in a \
                 `coordinator local` plan (the same command then grows the run)",
                r.run_id
            );
        }
    }
    if !is_study {
        s.push_str(&format_row_scores(&d.row_scores));
    }
    s.push_str(&format_spsa(&d.spsa));
    if !d.study.is_empty() {
        let _ = writeln!(
            s,
            "{:<10} {:>6} {:>6} {:>6} {:>6}  {:>22}  {:>6}  {:>6}",
            "rule-set", "games", "1-0", "1/2", "0-1", "White score (95%)", "draws", "plies"
        );
        for r in &d.study {
            let _ = writeln!(
                s,
                "{:<10} {:>6} {:>6} {:>6} {:>6}  {:>6.3} [{:.3}, {:.3}]  {:>5.1}%  {:>6.1}",
                r.ruleset,
                r.games,
                r.white_wins,
                r.draws,
                r.black_wins,
                r.white_score,
                r.white_score_low,
                r.white_score_high,
                100.0 * r.draw_rate,
                r.mean_plies
            );
        }
        for c in &d.comparisons {
            let _ = writeln!(
                s,
                "  {} vs {}: White score {:+.3} (p {:.3}), draw rate {:+.3} (p {:.3})",
                c.ruleset,
                c.baseline,
                c.white_score_diff,
                c.white_score_p,
                c.draw_rate_diff,
                c.draw_rate_p
            );
        }
    }
    if !d.workers.is_empty() {
        let _ = writeln!(s, "workers:");
        for w in &d.workers {
            let _ = writeln!(
                s,
                "  {:<20} {:>6} pairs {:?} residual {:+.2}{}{}{}",
                w.name,
                w.pairs,
                w.pentanomial,
                w.residual,
                if w.flagged { "  FLAGGED" } else { "" },
                if w.excluded { "  excluded" } else { "" },
                if w.labels.is_empty() {
                    String::new()
                } else {
                    format!("  machines: {}", w.labels.join(", "))
                }
            );
        }
    }
    s
}

/// A rule-set row's W/D/L as the statistics count them.
pub fn row_trinomial(r: &pb::RowScore) -> stats::Trinomial {
    stats::Trinomial {
        wins: r.wins,
        draws: r.draws,
        losses: r.losses,
    }
}

/// `first`'s results under each study row of a run that mixes them (a test over chess, Latte
/// and Secutor: did one variant pay for another's gain?). Empty when there are none.
pub fn format_row_scores(rows: &[pb::RowScore]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let width = rows
        .iter()
        .map(|r| r.ruleset.len())
        .max()
        .unwrap_or(0)
        .max(8);
    let _ = writeln!(s, "by rule-set (first's games):");
    for r in rows {
        let elo = r.elo.as_ref().map_or_else(String::new, |e| {
            format!("  Elo {:+.1} [{:+.1}, {:+.1}]", e.elo, e.ci_low, e.ci_high)
        });
        let score = row_trinomial(r)
            .score()
            .map_or_else(String::new, |s| format!("  {:.1}%", 100.0 * s));
        let _ = writeln!(
            s,
            "  {:<width$}  W {} D {} L {}  pentanomial {:?}{score}{elo}",
            r.ruleset, r.wins, r.draws, r.losses, r.pentanomial
        );
    }
    s
}

/// The tuned values as a run's `options = { ... }` table, rounded as the engine's integer
/// parameters take them: pasted into `[runs.first]` of an SPRT plan, they test the tune
/// against the defaults (typing thirteen values by hand from the table above invites a slip).
/// An SPSA run's parameters (each value with its start and range, then all of them as a
/// run's options table); empty for a run without any.
pub fn format_spsa(params: &[pb::SpsaParam]) -> String {
    let mut s = String::new();
    let Some(first) = params.first() else {
        return s;
    };
    let _ = writeln!(s, "SPSA after {} pairs:", first.iterations);
    for p in params {
        let _ = writeln!(
            s,
            "  {:<24} {:>12.4}  (start {}, range [{}, {}])",
            p.name, p.value, p.start, p.min, p.max
        );
    }
    let _ = writeln!(s, "  as a run's options: {}", spsa_options(params));
    s
}

fn spsa_options(params: &[pb::SpsaParam]) -> String {
    let bare = |n: &str| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let fields: Vec<String> = params
        .iter()
        .map(|p| {
            let name = if bare(&p.name) {
                p.name.clone()
            } else {
                format!("{:?}", p.name)
            };
            // `as` saturates: no wrap on an absurd value.
            format!("{name} = {}", p.value.round() as i64)
        })
        .collect();
    format!("options = {{ {} }}", fields.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuned_values_print_as_an_options_table_a_plan_reads() {
        let param = |name: &str, value: f64| pb::SpsaParam {
            name: name.into(),
            value,
            ..Default::default()
        };
        let line = spsa_options(&[param("Tempo", 13.56), param("Use NNUE", -0.4)]);
        assert_eq!(line, r#"options = { Tempo = 14, "Use NNUE" = 0 }"#);
        // It is TOML: a plan's options table reads it back.
        let table: toml::Table = toml::from_str(&line).expect("TOML");
        assert_eq!(table["options"]["Tempo"].as_integer(), Some(14));
    }

    /// What `coordinator local` prints as an SPSA run ends, and `run show` in its detail:
    /// every parameter's value with its start, then the options line; nothing for other runs.
    #[test]
    fn spsa_values_list_each_parameter_and_the_options_line() {
        let param = |name: &str, start: f64, value: f64| pb::SpsaParam {
            name: name.into(),
            start,
            value,
            min: 1.0,
            max: 10.0,
            iterations: 300,
        };
        let text = format_spsa(&[param("LmpBase", 3.0, 4.3672), param("RfpMargin", 7.0, 7.5)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "SPSA after 300 pairs:");
        assert!(lines[1].starts_with("  LmpBase ") && lines[1].contains(" 4.3672  (start 3,"));
        assert!(lines[2].starts_with("  RfpMargin ") && lines[2].contains("range [1, 10]"));
        assert_eq!(
            lines[3],
            "  as a run's options: options = { LmpBase = 4, RfpMargin = 8 }"
        );
        assert_eq!(lines.len(), 4);
        assert_eq!(format_spsa(&[]), "");
    }

    /// An SPRT that played its budget without a decision says so and how to grow it; one that
    /// decided, or is still playing, shows the test's own state.
    #[test]
    fn an_sprt_out_of_games_reads_as_undecided_with_how_to_play_on() {
        let detail = |state: pb::RunState, reason: &str, sprt: &str| pb::RunDetail {
            summary: Some(pb::RunSummary {
                run_id: 7,
                kind: "sprt".into(),
                state: state as i32,
                finish_reason: reason.into(),
                ..Default::default()
            }),
            sprt: Some(pb::SprtFigures {
                state: sprt.into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let spent = detail(
            pb::RunState::Finished,
            crate::extend::ALL_PAIRS_PLAYED,
            "continue",
        );
        assert!(sprt_ran_out(&spent));
        let shown = format_detail(&spent);
        assert!(
            shown.contains("pairs: undecided: its games ran out"),
            "{shown}"
        );
        assert!(
            shown.contains("coordinator run extend 7 --games N"),
            "{shown}"
        );
        for other in [
            detail(pb::RunState::Active, "", "continue"),
            detail(pb::RunState::Finished, "sprt accepted", "accepted"),
            detail(pb::RunState::Stopped, "stopped", "continue"),
        ] {
            assert!(!sprt_ran_out(&other));
            let shown = format_detail(&other);
            assert!(
                !shown.contains("undecided") && !shown.contains("extend"),
                "{shown}"
            );
        }
    }

    #[test]
    fn a_study_shows_no_elo_of_an_engine_against_itself() {
        let mut d = pb::RunDetail {
            summary: Some(pb::RunSummary {
                kind: "match".into(),
                ..Default::default()
            }),
            wins: 3,
            draws: 2,
            losses: 1,
            elo: Some(Default::default()),
            ..Default::default()
        };
        let shown = format_detail(&d);
        assert!(
            shown.contains("pentanomial") && shown.contains("Elo"),
            "{shown}"
        );
        if let Some(s) = d.summary.as_mut() {
            s.kind = "study".into();
        }
        let shown = format_detail(&d);
        assert!(shown.contains("games: 6"), "{shown}");
        assert!(
            !shown.contains("pentanomial") && !shown.contains("Elo"),
            "{shown}"
        );
    }
}
