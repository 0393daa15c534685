//! Texel tuning of the evaluation's named weights (`engine tune-weights`): the parameters
//! SPSA tunes by games, fitted instead to labelled positions, as the square table is.
//!
//! SPSA moves some 80 weights at once by the noise of game results, and on this project's
//! machine a campaign of thousands of games moves them little. A stronger engine's evaluations
//! of a few hundred thousand quiet positions say much more per CPU second: the weights should
//! make our static evaluation, through the logistic curve, predict them.
//!
//! The evaluation is not linear in its weights (king danger grows with the square of the
//! attack, the piece-square shapes are scaled by `PstScale`, integer divisions round), so the
//! fit works on a linearisation: each weight's effect on each position's evaluation is
//! measured once by moving the weight and evaluating again (a finite difference, exact for the
//! many linear terms), the weights are fitted by Adam on that linear model, and the model is
//! measured again around the fitted weights for the next round. Every loss printed is the real
//! evaluation's, not the model's. The logistic scale is fitted once for the starting weights
//! and then held, so that the fit cannot rescale the whole evaluation (which the search's
//! margins, in centipawns, were tuned for): it can only move weights against one another.

use std::thread;

use super::fit::{best_scale, sigmoid, Adam};
use super::samples::{quiet_positions, Counts};
use super::TuneError;
use crate::board8::Board;
use crate::eval::{pst, PawnCache, SearchPosition};
use crate::params::{ParamSpec, Params};
use crate::types::Color;
use crate::variant::Rules;

/// The quiet positions of a data set with their labels, on either board (the 8x8 one's by
/// default).
pub struct Positions<P = Board> {
    boards: Vec<P>,
    result: Vec<f32>,
    game: Vec<u32>,
    /// What the reader counted.
    pub counts: Counts,
}

impl<P: SearchPosition> Positions<P> {
    /// Reads every line of `text` (`FEN [result]`) under `rules`, keeping the quiet positions
    /// as the square table's fit does.
    pub fn read(text: &str, rules: Rules, params: &Params) -> Result<Positions<P>, TuneError> {
        let (mut boards, mut result, mut game) = (Vec::new(), Vec::new(), Vec::new());
        let counts = quiet_positions(text, rules, params, |b, g, r| {
            boards.push(b);
            game.push(g);
            result.push(r);
        })?;
        Ok(Positions {
            boards,
            result,
            game,
            counts,
        })
    }

    /// Adds the positions of `other` after these (its games numbered after these games).
    pub fn append(&mut self, other: Positions<P>) {
        let games = self.counts.games;
        self.boards.extend(other.boards);
        self.result.extend(other.result);
        self.game.extend(other.game.iter().map(|g| g + games));
        self.counts.games += other.counts.games;
        self.counts.read += other.counts.read;
        self.counts.not_quiet += other.counts.not_quiet;
    }

    /// Positions kept.
    pub fn len(&self) -> usize {
        self.boards.len()
    }

    /// Whether none were kept.
    pub fn is_empty(&self) -> bool {
        self.boards.is_empty()
    }
}

/// Every position's evaluation under `params`, from White's side, in centipawns; the work is
/// split over `threads`.
pub fn evaluate_all<P: SearchPosition>(
    pos: &Positions<P>,
    params: &Params,
    threads: usize,
) -> Vec<f32> {
    let all: Vec<usize> = (0..pos.len()).collect();
    evaluate(pos, &all, params, threads)
}

/// The evaluation under `params`, from White's side, of the positions `indices` names, in
/// their order, split over `threads`: all of them, or only the training ones (each weight's
/// effect is measured on those alone; the held-out tenth would be evaluated for nothing).
fn evaluate<P: SearchPosition>(
    pos: &Positions<P>,
    indices: &[usize],
    params: &Params,
    threads: usize,
) -> Vec<f32> {
    let table = pst::Table::new(params);
    let chunk = indices.len().div_ceil(threads.max(1)).max(1);
    let mut out = vec![0.0f32; indices.len()];
    thread::scope(|s| {
        for (indices, out) in indices.chunks(chunk).zip(out.chunks_mut(chunk)) {
            let table = &table;
            s.spawn(move || {
                let mut pawns = PawnCache::new();
                for (&i, o) in indices.iter().zip(out.iter_mut()) {
                    let b = &pos.boards[i];
                    let e = b.evaluate_with(params, table, &mut pawns);
                    *o = if b.turn() == Color::White { e } else { -e } as f32;
                }
            });
        }
    });
    out
}

/// How the weights are fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightConfig {
    /// Linearisations: each measures every weight's effect around the current weights and
    /// fits them on it.
    pub rounds: usize,
    /// Adam's passes over the training positions per round.
    pub epochs: usize,
    /// Adam's step size, in the weights' own units.
    pub learning_rate: f64,
    /// Every `holdout`-th pair of games is kept out of training to measure the fit (0: none;
    /// see [`super::held_out_game`]).
    pub holdout: usize,
    /// Threads for the evaluations.
    pub threads: usize,
}

impl Default for WeightConfig {
    fn default() -> Self {
        WeightConfig {
            rounds: 3,
            epochs: 300,
            learning_rate: 0.5,
            holdout: 10,
            threads: 2,
        }
    }
}

/// The real losses of one set of weights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Losses {
    /// Mean squared error on the training positions.
    pub train: f64,
    /// Mean squared error on the held-out positions (0 without a hold-out).
    pub holdout: f64,
}

/// What one round did.
#[derive(Clone, Debug)]
pub struct Round {
    /// 1-based.
    pub round: usize,
    /// The weights' real losses after it.
    pub losses: Losses,
    /// Weights whose evaluation effect the data never saw (left as they were).
    pub unseen: Vec<&'static str>,
}

impl WeightConfig {
    fn held_out(&self, game: u32) -> bool {
        super::held_out_game(game, self.holdout)
    }

    /// The real losses, under scale `k`, of the evaluations `e` of `pos`'s positions (what
    /// [`evaluate_all`] gives for some weights).
    pub fn losses<P>(&self, pos: &Positions<P>, e: &[f32], k: f64) -> Losses {
        let (mut t, mut tn, mut h, mut hn) = (0.0, 0usize, 0.0, 0usize);
        for ((&r, &e), &g) in pos.result.iter().zip(e).zip(&pos.game) {
            let d = f64::from(r) - sigmoid(k, f64::from(e));
            if self.held_out(g) {
                h += d * d;
                hn += 1;
            } else {
                t += d * d;
                tn += 1;
            }
        }
        Losses {
            train: if tn == 0 { 0.0 } else { t / tn as f64 },
            holdout: if hn == 0 { 0.0 } else { h / hn as f64 },
        }
    }

    /// The scale under which the evaluations `e` of `pos`'s positions predict the training
    /// labels best.
    pub fn fit_scale<P>(&self, pos: &Positions<P>, e: &[f32]) -> f64 {
        best_scale(|k| self.losses(pos, e, k).train)
    }

    /// Fits the weights `specs` of `start` to `pos` under scale `k`, calling `report` after
    /// each round, and returns the weights of the round with the least held-out loss (`start`
    /// if none did better); the other parameters stay as `start` has them.
    pub fn fit<P: SearchPosition>(
        &self,
        pos: &Positions<P>,
        start: &Params,
        specs: &[&'static ParamSpec],
        k: f64,
        mut report: impl FnMut(&Round),
    ) -> Params {
        let mut params = start.clone();
        let train: Vec<usize> = (0..pos.len())
            .filter(|&i| !self.held_out(pos.game[i]))
            .collect();
        let n = train.len().max(1) as f64;
        let dk = k * std::f64::consts::LN_10 / 400.0;
        // The weights of the round that predicted the held-out games best (the training
        // positions' when nothing is held out): a later linearisation can fit the training
        // games' noise.
        // The evaluation of the current weights: what a round's losses are measured on and
        // the next round's linearisation starts from.
        let mut base = evaluate_all(pos, &params, self.threads);
        let mut best = (params.clone(), self.losses(pos, &base, k));
        let has_holdout = train.len() < pos.len();
        for round in 1..=self.rounds {
            // Each weight's effect on each training position, per unit of the weight.
            let mut slopes: Vec<Vec<f32>> = Vec::with_capacity(specs.len());
            let mut unseen = Vec::new();
            for spec in specs {
                let now = params.get(spec.name).unwrap_or(spec.default);
                let step = ((spec.max - spec.min) / 20).max(1);
                let moved = if now + step <= spec.max {
                    now + step
                } else {
                    now - step
                };
                let mut p = params.clone();
                // Within the declared range by construction.
                let _ = p.set(spec.name, i64::from(moved));
                let e = evaluate(pos, &train, &p, self.threads);
                let per = (moved - now) as f32;
                let s: Vec<f32> = train
                    .iter()
                    .zip(&e)
                    .map(|(&i, &moved)| (moved - base[i]) / per)
                    .collect();
                if s.iter().all(|&x| x == 0.0) {
                    unseen.push(spec.name);
                }
                slopes.push(s);
            }
            // Adam on the linear model, the weights as reals around their integer values.
            let w0: Vec<f64> = specs
                .iter()
                .map(|s| f64::from(params.get(s.name).unwrap_or(s.default)))
                .collect();
            let mut w = w0.clone();
            let mut adam = Adam::new(w.len(), self.learning_rate);
            let mut grad = vec![0.0f64; w.len()];
            let mut model = vec![0.0f64; train.len()];
            for epoch in 1..=self.epochs {
                for (t, &i) in train.iter().enumerate() {
                    let mut e = f64::from(base[i]);
                    for (j, s) in slopes.iter().enumerate() {
                        e += f64::from(s[t]) * (w[j] - w0[j]);
                    }
                    let p = sigmoid(k, e);
                    model[t] = -2.0 * (f64::from(pos.result[i]) - p) * p * (1.0 - p) * dk / n;
                }
                for (j, s) in slopes.iter().enumerate() {
                    grad[j] = s.iter().zip(&model).map(|(&x, &c)| f64::from(x) * c).sum();
                }
                adam.epoch(epoch);
                for (j, spec) in specs.iter().enumerate() {
                    let step = adam.step(j, grad[j]);
                    w[j] = (w[j] - step).clamp(f64::from(spec.min), f64::from(spec.max));
                }
            }
            for (j, spec) in specs.iter().enumerate() {
                if !unseen.contains(&spec.name) {
                    // Rounded and clamped above: always within range.
                    let _ = params.set(spec.name, w[j].round() as i64);
                }
            }
            base = evaluate_all(pos, &params, self.threads);
            let losses = self.losses(pos, &base, k);
            report(&Round {
                round,
                losses,
                unseen,
            });
            let better = if has_holdout {
                losses.holdout < best.1.holdout
            } else {
                losses.train < best.1.train
            };
            if better {
                best = (params.clone(), losses);
            }
        }
        best.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::variant::Variant;

    /// What [`fit_piece_up`] measured.
    struct PieceUp {
        params: Params,
        fitted: Params,
        before: Losses,
        rounds: Vec<Round>,
    }

    /// Fits `names` to 600 positions of `rules` (`fens`: a side a piece up, the other side
    /// so, and neither, labelled 1, 0 and ½, each under four placements `kings` of Black's
    /// king's rank, written `KING` in them) under a scale at which the piece's default value
    /// predicts far less than a sure win. (Each result differs from the line before, so each
    /// line is a game of its own: a fifth of them are held out.)
    fn fit_piece_up<P: SearchPosition>(
        rules: Rules,
        kings: [&str; 4],
        fens: [&str; 3],
        names: &[&str],
    ) -> PieceUp {
        let mut text = String::new();
        for i in 0..200 {
            for (fen, label) in fens.iter().zip(["1.0", "0.0", "0.5"]) {
                text.push_str(&format!(
                    "{} [{label}]\n",
                    fen.replace("KING", kings[i % 4])
                ));
            }
        }
        let params = Params::default();
        let pos = Positions::<P>::read(&text, rules, &params).expect("reads");
        assert_eq!(pos.len(), 600);
        let specs: Vec<&'static ParamSpec> = names
            .iter()
            .map(|n| Params::spec(n).expect("declared").1)
            .collect();
        let config = WeightConfig {
            rounds: 2,
            epochs: 200,
            learning_rate: 3.0,
            holdout: 5,
            threads: 2,
        };
        let k = 0.5;
        let before = config.losses(&pos, &evaluate_all(&pos, &params, 2), k);
        let mut rounds = Vec::new();
        let fitted = config.fit(&pos, &params, &specs, k, |r| rounds.push(r.clone()));
        assert_eq!(rounds.len(), 2);
        PieceUp {
            params,
            fitted,
            before,
            rounds,
        }
    }

    /// Positions a rook up for either side, labelled as a bigger edge than the default rook
    /// gives: the fit raises the rook's value, and only the weights asked for move. (A lone
    /// knight would not do: the evaluation scales king and knight against king to a draw, so
    /// its value is unseen there.)
    #[test]
    fn the_fit_moves_the_weights_the_labels_ask_for() {
        let PieceUp {
            params,
            fitted,
            before,
            rounds,
        } = fit_piece_up::<Board>(
            Rules::default_for(Variant::Chess),
            ["4k3", "3k4", "5k2", "2k5"],
            [
                "KING/8/8/8/8/R7/8/4K3 w - - 0 1",
                "KING/8/8/8/8/8/2r5/4K3 w - - 0 1",
                "KING/8/8/8/8/8/8/4K3 w - - 0 1",
            ],
            &["RookValueEg", "Tempo"],
        );
        assert!(fitted.rook_eg > params.rook_eg + 50, "{}", fitted.rook_eg);
        let after = rounds[1].losses;
        assert!(after.train < before.train / 2.0, "{before:?} -> {after:?}");
        assert!(
            after.holdout < before.holdout / 2.0,
            "{before:?} -> {after:?}"
        );
        // Nothing else moved.
        let mut expect = params.clone();
        expect.rook_eg = fitted.rook_eg;
        expect.tempo = fitted.tempo;
        assert_eq!(fitted, expect);
    }

    /// The same fit on the Gustavian board: a Secutor up, labelled as more than its default
    /// worth, raises the Secutor's value and nothing else.
    #[test]
    fn the_fit_reads_secutor_positions_on_their_own_board() {
        let PieceUp {
            params,
            fitted,
            before,
            rounds,
        } = fit_piece_up::<crate::gustavian::Position>(
            Rules::default_for(Variant::Secutor),
            ["4k5", "3k6", "5k4", "6k3"],
            [
                "KING/*8*/*8*/*8*/*8*/*8*/*8*/S3K5 w - - 0 1",
                "KING/*8*/*8*/*8*/*8*/*8*/*8*/4K4s w - - 0 1",
                "KING/*8*/*8*/*8*/*8*/*8*/*8*/4K5 w - - 0 1",
            ],
            &["SecutorValueEg"],
        );
        assert!(
            fitted.secutor_eg > params.secutor_eg + 50,
            "{}",
            fitted.secutor_eg
        );
        let after = rounds[1].losses;
        assert!(after.train < before.train, "{before:?} -> {after:?}");
        let mut expect = params.clone();
        expect.secutor_eg = fitted.secutor_eg;
        assert_eq!(fitted, expect);
    }
}
