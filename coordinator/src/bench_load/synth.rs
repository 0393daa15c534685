//! Made-up pair results that pass the coordinator's checks (`crate::facts`): the pair's
//! variant and rule-set in both games, castling kinds of that rule-set, a termination that fits
//! the result, plies within the run's limit, `first` White in the first game only.

use crate::facts::castling_kinds;
use engine::Rules;
use proto::v1 as pb;
use rand::Rng;
use std::io::Write;

/// A pair result and `first`'s score over it in half points (0..=4), as the coordinator
/// will count it.
#[derive(Debug, Clone)]
pub struct SyntheticPair {
    /// What the worker reports.
    pub result: pb::PairResult,
    /// `first`'s half points over the two games.
    pub half_points: u8,
}

/// Builds synthetic pairs; holds one compressed PGN every uploaded pair carries, so that no
/// pair costs a compression.
#[derive(Debug, Clone)]
pub struct Synth {
    pgn_gz: Vec<u8>,
}

impl Default for Synth {
    fn default() -> Self {
        Self::new()
    }
}

const DECISIVE: [&str; 2] = ["checkmate", "resign-adjudication"];
const DRAWN: [&str; 3] = ["threefold", "draw-adjudication", "fifty-moves"];

impl Synth {
    /// A generator with a PGN of about the size a real pair has (two games of 60 moves).
    pub fn new() -> Self {
        let mut text = String::new();
        for round in 1..=2 {
            text.push_str(&format!(
                "[Event \"bench-load\"]\n[Round \"{round}\"]\n[Result \"1/2-1/2\"]\n\n"
            ));
            for mv in 1..=60 {
                text.push_str(&format!("{mv}. Nf3 {{+0.{:02}/12}} Nf6 ", mv % 97));
            }
            text.push_str("1/2-1/2\n\n");
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing into a Vec cannot fail.
        let _ = gz.write_all(text.as_bytes());
        Self {
            pgn_gz: gz.finish().unwrap_or_default(),
        }
    }

    /// One pair of `task`: results drawn from `rng` (about 30% wins, 40% draws, 30% losses
    /// per game), plies within `max_plies` (0: no limit).
    pub fn pair(
        &self,
        task: &pb::PairTask,
        max_plies: u32,
        upload_pgn: bool,
        rng: &mut impl Rng,
    ) -> SyntheticPair {
        let ruleset = (!task.ruleset.is_empty()).then_some(task.ruleset.as_str());
        // An unknown variant gets no castlings: the coordinator refuses the pair either way.
        let kinds = Rules::parse(&task.variant, ruleset)
            .map(castling_kinds)
            .unwrap_or_default();
        let mut half_points = 0;
        let mut games = Vec::with_capacity(2);
        for first_is_white in [true, false] {
            // first's points in half points: 2 win, 1 draw, 0 loss.
            let first = match rng.gen_range(0..10) {
                0..=2 => 2u8,
                3..=6 => 1,
                _ => 0,
            };
            half_points += first;
            let white = if first_is_white { first } else { 2 - first };
            let outcome = match white {
                2 => pb::GameOutcome::WhiteWin,
                1 => pb::GameOutcome::Draw,
                _ => pb::GameOutcome::BlackWin,
            };
            let termination = if first == 1 {
                DRAWN[rng.gen_range(0..DRAWN.len())]
            } else {
                DECISIVE[rng.gen_range(0..DECISIVE.len())]
            };
            let cap = if max_plies > 0 { max_plies } else { 400 };
            let plies = rng.gen_range(20..=200u32).min(cap);
            let mut castlings = Vec::new();
            for white in [true, false] {
                if !kinds.is_empty() && rng.gen_bool(0.7) {
                    castlings.push(pb::Castling {
                        white,
                        kind: kinds[rng.gen_range(0..kinds.len())].to_string(),
                        move_number: rng.gen_range(1..=(plies / 2).clamp(1, 30)),
                    });
                }
            }
            games.push(pb::GameFacts {
                outcome: outcome as i32,
                first_is_white,
                termination: termination.to_string(),
                plies,
                castlings,
                ruleset: task.ruleset.clone(),
                variant: task.variant.clone(),
                milestones: Vec::new(),
            });
        }
        SyntheticPair {
            result: pb::PairResult {
                index: task.index,
                games,
                pgn_gz: if upload_pgn {
                    self.pgn_gz.clone()
                } else {
                    Vec::new()
                },
            },
            half_points,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;
    use crate::model::PairReport;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn synthetic_pairs_pass_the_coordinators_checks() {
        let config = RunConfig::parse(
            r#"
name = "t"
kind = "match"
games = 4000
[limits]
nodes = 10
max_plies = 120
[[variants]]
variant = "latte"
ruleset = "normal"
[[variants]]
variant = "latte"
ruleset = "both"
[[variants]]
variant = "secutor"
ruleset = "extended"
[[variants]]
variant = "chess"
[first]
engine = "builtin"
"#,
        )
        .unwrap();
        let synth = Synth::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for index in 0..2000 {
            let entry = config.entry_for_pair(index);
            let task = pb::PairTask {
                index,
                variant: entry.variant.clone(),
                ruleset: entry.ruleset.clone(),
                ..Default::default()
            };
            let p = synth.pair(&task, config.limits.max_plies, index % 2 == 0, &mut rng);
            let report = PairReport::try_from(p.result).unwrap();
            let score = crate::facts::check_pair(&config, &report).unwrap();
            assert_eq!(score.half_points(), p.half_points);
        }
    }
}
