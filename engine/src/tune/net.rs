//! The fit of the evaluation's small network ([`crate::eval::net`]) to labelled positions: the
//! residual the whole evaluation (table included) leaves, learned by a hidden layer over the
//! pieces' squares seen from each side.
//!
//! The learned table is linear in its features: a knight on f5 is worth the same whatever
//! else stands on the board. The hidden layer's units each read every piece at once and are
//! clipped, so the network can learn what depends on combinations (a bishop pair with the
//! pawns on one colour, a king shelter with the queen still on). Its inputs are the 768
//! (side, role, square) cells of each side's view, its king's wing mirrored as the table's.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::fit::sigmoid;
use super::samples::{quiet_positions, Counts};
use super::TuneError;
use crate::board8::net::{inputs, Net, HIDDEN, INPUTS, OUTPUT_LIMIT, OUTPUT_SCALE, WEIGHT_LIMIT};
use crate::board8::Board;
use crate::eval::{PawnCache, SearchPosition};
use crate::params::Params;
use crate::position::Position;
use crate::types::Color;
use crate::variant::Rules;

/// The quiet positions of a data set for the network's fit.
#[derive(Clone, Debug, Default)]
pub struct NetSamples {
    /// The whole evaluation, from White's side, in centipawns.
    pub base: Vec<f32>,
    /// The game's result (or the label) from White's side.
    pub result: Vec<f32>,
    /// Whether White is to move.
    pub white_to_move: Vec<bool>,
    /// The active inputs, White's view then Black's, per sample.
    pub inputs: Vec<u16>,
    /// Per sample: where its inputs start, and where Black's view starts.
    pub offsets: Vec<(u32, u32)>,
    /// The game each sample came from (the hold-out splits by it).
    pub game: Vec<u32>,
    /// What the reader counted (games, lines, positions not quiet).
    pub counts: Counts,
}

impl NetSamples {
    /// Positions kept.
    pub fn len(&self) -> usize {
        self.base.len()
    }

    /// Whether none were kept.
    pub fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// Reads the quiet positions of `text`, evaluated under `params` without the network
    /// (`NetScale` 0): the base it is fitted to correct.
    pub fn read(text: &str, rules: Rules, params: &Params) -> Result<NetSamples, TuneError> {
        let mut base = params.clone();
        base.net_scale = 0;
        let mut pawns = PawnCache::new();
        let mut out = NetSamples::default();
        let counts = quiet_positions(text, rules, &base, |board, game, result| {
            out.push(&board, &base, &mut pawns, game, result);
        })?;
        out.counts = counts;
        Ok(out)
    }

    /// Adds `other`'s samples after these.
    pub fn append(&mut self, other: NetSamples) {
        let shift = self.inputs.len() as u32;
        self.base.extend(other.base);
        self.result.extend(other.result);
        self.white_to_move.extend(other.white_to_move);
        self.inputs.extend(other.inputs);
        self.offsets
            .extend(other.offsets.iter().map(|(a, b)| (a + shift, b + shift)));
        let games = self.counts.games;
        self.game.extend(other.game.iter().map(|g| g + games));
        self.counts.games += other.counts.games;
        self.counts.read += other.counts.read;
        self.counts.not_quiet += other.counts.not_quiet;
    }

    fn push(&mut self, board: &Board, p: &Params, pawns: &mut PawnCache, game: u32, result: f32) {
        let eval = board.evaluate(p, pawns);
        let white = board.turn() == Color::White;
        self.base.push(if white { eval } else { -eval } as f32);
        self.result.push(result);
        self.white_to_move.push(white);
        self.game.push(game);
        let start = self.inputs.len() as u32;
        inputs(board, Color::White, &mut |f| self.inputs.push(f as u16));
        let mid = self.inputs.len() as u32;
        inputs(board, Color::Black, &mut |f| self.inputs.push(f as u16));
        self.offsets.push((start, mid));
    }

    /// Sample `i`'s inputs: White's view, Black's view.
    fn views(&self, i: usize) -> (&[u16], &[u16]) {
        let (start, mid) = self.offsets[i];
        let end = self
            .offsets
            .get(i + 1)
            .map_or(self.inputs.len(), |o| o.0 as usize);
        (
            &self.inputs[start as usize..mid as usize],
            &self.inputs[mid as usize..end],
        )
    }
}

/// The network in floats while it is fitted.
#[derive(Clone, Debug)]
pub struct FloatNet {
    /// Input weights, `INPUTS` rows of `HIDDEN`.
    pub input: Vec<f32>,
    /// Hidden biases.
    pub bias: Vec<f32>,
    /// Output weights: the side to move's units, then the other side's, which the fit holds
    /// at the side to move's negated. The output is then the same whichever side is to move
    /// (one view's worth less the other's): a network free to weigh the two views apart
    /// learned a bonus for the move that varies by position (the evaluation plus the
    /// evaluation with the other side to move: 90 cp on average, 28 to 147 from the tenth to
    /// the ninetieth percentile, against 76 +- 10 without it), which null-move pruning and
    /// every margin read as the position's worth, and lost its SPRTs (-37.6 Elo in 232 games,
    /// trained on game positions alone; -89 in the first 40 with the positions off them).
    pub output: Vec<f32>,
    /// Output bias: zero, for the same reason (it would be a constant bonus for the move).
    pub output_bias: f32,
}

impl FloatNet {
    /// Small random input weights, a zero output (the network starts adding nothing).
    pub fn new(seed: u64) -> FloatNet {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        FloatNet {
            input: (0..INPUTS * HIDDEN)
                .map(|_| rng.gen_range(-0.05..0.05))
                .collect(),
            bias: vec![0.5; HIDDEN],
            output: vec![0.0; 2 * HIDDEN],
            output_bias: 0.0,
        }
    }

    fn params(&self) -> usize {
        self.input.len() + self.bias.len() + self.output.len() + 1
    }

    /// The hidden layer's sums for one view.
    fn sums(&self, inputs: &[u16], out: &mut [f32; HIDDEN]) {
        out.copy_from_slice(&self.bias);
        for &f in inputs {
            let row = &self.input[f as usize * HIDDEN..][..HIDDEN];
            for (o, w) in out.iter_mut().zip(row) {
                *o += w;
            }
        }
    }

    /// The network's output in centipawns for the side to move, given both views' sums.
    fn output_of(&self, stm: &[f32; HIDDEN], other: &[f32; HIDDEN]) -> f32 {
        let mut sum = self.output_bias;
        for j in 0..HIDDEN {
            sum += self.output[j] * stm[j].clamp(0.0, 1.0);
            sum += self.output[HIDDEN + j] * other[j].clamp(0.0, 1.0);
        }
        sum * OUTPUT_SCALE
    }

    /// The network quantised as the engine reads it.
    pub fn quantised(&self) -> Box<Net> {
        Net::from_floats(&self.input, &self.bias, &self.output, self.output_bias)
    }
}

/// The losses of a fit.
#[derive(Clone, Copy, Debug)]
pub struct NetLosses {
    /// On the positions trained on.
    pub train: f64,
    /// On the held-out games.
    pub holdout: f64,
}

/// What a fit returns: the network of its best epoch, which the written file's header names
/// (a fit of 24 epochs may keep the 18th's weights).
#[derive(Clone, Debug)]
pub struct NetFit {
    /// The float network.
    pub net: FloatNet,
    /// Its losses.
    pub losses: NetLosses,
    /// The epoch it is from (0: the starting weights, no epoch bettered them).
    pub epoch: usize,
}

/// How the network is fitted.
#[derive(Clone, Debug)]
pub struct NetConfig {
    /// Passes over the training positions.
    pub epochs: usize,
    /// Adam's step size.
    pub learning_rate: f64,
    /// Positions per step.
    pub batch: usize,
    /// Every `holdout`-th pair of games held out (0: none; see [`super::held_out_game`]).
    pub holdout: usize,
    /// The random seed of the first weights and of the order of the positions.
    pub seed: u64,
}

impl NetConfig {
    fn held_out(&self, s: &NetSamples, i: usize) -> bool {
        super::held_out_game(s.game[i], self.holdout)
    }

    /// The losses of `net` (none: the evaluation alone) on `s` under scale `k`.
    pub fn losses(&self, s: &NetSamples, k: f64, net: Option<&FloatNet>) -> NetLosses {
        let (mut w, mut b) = ([0.0; HIDDEN], [0.0; HIDDEN]);
        self.losses_by(s, k, |stm, other| match net {
            Some(net) => {
                net.sums(stm, &mut w);
                net.sums(other, &mut b);
                f64::from(net.output_of(&w, &b))
            }
            None => 0.0,
        })
    }

    /// The losses of the fixed-point network the engine would read.
    pub fn quantised_losses(&self, s: &NetSamples, k: f64, net: &Net) -> NetLosses {
        self.losses_by(s, k, |stm, other| {
            f64::from(net.evaluate_inputs(stm, other))
        })
    }

    /// The losses on `s` of the evaluation plus `output` (the side to move's, given its view's
    /// inputs and the other's).
    fn losses_by(
        &self,
        s: &NetSamples,
        k: f64,
        mut output: impl FnMut(&[u16], &[u16]) -> f64,
    ) -> NetLosses {
        let (mut sums, mut counts) = ([0.0f64; 2], [0usize; 2]);
        for i in 0..s.len() {
            let (wv, bv) = s.views(i);
            let e = f64::from(s.base[i])
                + if s.white_to_move[i] {
                    output(wv, bv)
                } else {
                    -output(bv, wv)
                };
            let d = f64::from(s.result[i]) - sigmoid(k, e);
            let h = usize::from(self.held_out(s, i));
            sums[h] += d * d;
            counts[h] += 1;
        }
        let mean = |h: usize| {
            if counts[h] == 0 {
                0.0
            } else {
                sums[h] / counts[h] as f64
            }
        };
        NetLosses {
            train: mean(0),
            holdout: mean(1),
        }
    }

    /// Fits a network to `s` under scale `k`, calling `report` after each epoch; returns
    /// the network of the epoch with the least held-out loss (the last one with no hold-out).
    pub fn fit(&self, s: &NetSamples, k: f64, mut report: impl FnMut(usize, NetLosses)) -> NetFit {
        let mut net = FloatNet::new(self.seed);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed ^ 0x9e37_79b9);
        let mut order: Vec<usize> = (0..s.len()).filter(|&i| !self.held_out(s, i)).collect();
        let n = net.params();
        let (mut m, mut v) = (vec![0.0f32; n], vec![0.0f32; n]);
        let mut grad = vec![0.0f32; n];
        let mut best = NetFit {
            losses: self.losses(s, k, Some(&net)),
            net: net.clone(),
            epoch: 0,
        };
        let slope = (10f64.ln() * k / 400.0) as f32;
        let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
        let mut step = 0i32;
        let (ib, ob) = (INPUTS * HIDDEN, INPUTS * HIDDEN + HIDDEN);
        for epoch in 1..=self.epochs {
            // Fisher-Yates.
            for i in (1..order.len()).rev() {
                let j = rng.gen_range(0..=i);
                order.swap(i, j);
            }
            for batch in order.chunks(self.batch) {
                grad.iter_mut().for_each(|g| *g = 0.0);
                let (mut w, mut b) = ([0.0f32; HIDDEN], [0.0f32; HIDDEN]);
                for &i in batch {
                    let (wv, bv) = s.views(i);
                    net.sums(wv, &mut w);
                    net.sums(bv, &mut b);
                    let white = s.white_to_move[i];
                    let (stm, other, stm_in, other_in) = if white {
                        (&w, &b, wv, bv)
                    } else {
                        (&b, &w, bv, wv)
                    };
                    let out = net.output_of(stm, other);
                    let sign = if white { 1.0 } else { -1.0 };
                    let e = s.base[i] + sign * out;
                    let p = 1.0 / (1.0 + 10f32.powf(-(k as f32) * e / 400.0));
                    // d loss / d out (the output in centipawns, the side to move's).
                    let g = 2.0 * (p - s.result[i]) * p * (1.0 - p) * slope * sign * OUTPUT_SCALE;
                    grad[ob + 2 * HIDDEN] += g;
                    for (view, sums, inputs) in [(0, stm, stm_in), (1, other, other_in)] {
                        let mut hidden = [0.0f32; HIDDEN];
                        for j in 0..HIDDEN {
                            let a = sums[j];
                            grad[ob + view * HIDDEN + j] += g * a.clamp(0.0, 1.0);
                            if a > 0.0 && a < 1.0 {
                                hidden[j] = g * net.output[view * HIDDEN + j];
                            }
                        }
                        for j in 0..HIDDEN {
                            grad[ib + j] += hidden[j];
                        }
                        for &f in inputs {
                            let row = &mut grad[f as usize * HIDDEN..][..HIDDEN];
                            for (r, h) in row.iter_mut().zip(&hidden) {
                                *r += h;
                            }
                        }
                    }
                }
                step += 1;
                let (c1, c2) = (1.0 - b1.powi(step), 1.0 - b2.powi(step));
                let lr = self.learning_rate as f32;
                let scale = 1.0 / batch.len() as f32;
                // The other view's output weights are the side to move's negated, and there is
                // no output bias (see `FloatNet`): one step on the tied weight, by the sum of
                // both gradients.
                for j in 0..HIDDEN {
                    grad[ob + j] -= grad[ob + HIDDEN + j];
                }
                let mut update = |j: usize, value: &mut f32| {
                    let g = grad[j] * scale;
                    m[j] = b1 * m[j] + (1.0 - b1) * g;
                    v[j] = b2 * v[j] + (1.0 - b2) * g * g;
                    *value -= lr * (m[j] / c1) / ((v[j] / c2).sqrt() + eps);
                };
                for (j, x) in net.input.iter_mut().enumerate() {
                    update(j, x);
                    *x = x.clamp(-WEIGHT_LIMIT, WEIGHT_LIMIT);
                }
                for (j, x) in net.bias.iter_mut().enumerate() {
                    update(ib + j, x);
                    *x = x.clamp(-WEIGHT_LIMIT, WEIGHT_LIMIT);
                }
                let (stm, other) = net.output.split_at_mut(HIDDEN);
                for (j, (x, y)) in stm.iter_mut().zip(other).enumerate() {
                    update(ob + j, x);
                    *x = x.clamp(-OUTPUT_LIMIT, OUTPUT_LIMIT);
                    *y = -*x;
                }
            }
            let losses = self.losses(s, k, Some(&net));
            report(epoch, losses);
            if losses.holdout < best.losses.holdout || self.holdout == 0 {
                best = NetFit {
                    net: net.clone(),
                    losses,
                    epoch,
                };
            }
        }
        best
    }
}

/// The logistic scale under which the evaluation alone predicts the labels best.
pub fn fit_scale(s: &NetSamples) -> f64 {
    super::fit::best_scale(|k| {
        let mut sum = 0.0;
        for i in 0..s.len() {
            let d = f64::from(s.result[i]) - sigmoid(k, f64::from(s.base[i]));
            sum += d * d;
        }
        sum / s.len().max(1) as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    /// Positions of a few openings and endings, each with a label that a piece's square
    /// decides (a white knight on the rim loses, in the centre wins), which the evaluation
    /// does not know as strongly: something for the network to learn.
    fn text() -> String {
        let fens = [
            ("4k3/8/8/8/3N4/8/8/4K3 w - - 0 1", "0.9"),
            ("4k3/8/8/8/8/8/8/N3K3 w - - 0 1", "0.2"),
            ("4k3/8/8/8/8/7N/8/4K3 b - - 0 1", "0.25"),
            ("4k3/8/8/4N3/8/8/8/4K3 b - - 0 1", "0.85"),
            ("r3k3/8/8/8/8/8/8/4K2R w - - 0 1", "0.5"),
            ("4k3/pp6/8/8/8/8/6PP/4K3 w - - 0 1", "0.5"),
        ];
        let mut out = String::new();
        for i in 0..1200 {
            let (fen, label) = fens[i % fens.len()];
            out.push_str(&format!("{fen} [{label}]\n"));
        }
        out
    }

    fn samples() -> NetSamples {
        let rules = Rules::default_for(Variant::Chess);
        NetSamples::read(&text(), rules, &Params::default()).expect("positions read")
    }

    /// The fit reads a position's inputs as the engine's network does: the fixed-point
    /// network's output from a sample's views is its output from the board.
    #[test]
    fn the_fit_and_the_engine_read_the_same_inputs() {
        let rules = Rules::default_for(Variant::Chess);
        let s = samples();
        let net = FloatNet::new(3).quantised();
        let mut fixed = FloatNet::new(3);
        fixed
            .output
            .iter_mut()
            .enumerate()
            .for_each(|(j, w)| *w = (j as f32 - 60.0) / 50.0);
        let net2 = fixed.quantised();
        for (i, line) in text().lines().take(6).enumerate() {
            let fen = line.split(" [").next().expect("fen");
            let board = Board::from_fen(rules, fen).expect("fen");
            let (w, b) = s.views(i);
            let (stm, other) = if s.white_to_move[i] { (w, b) } else { (b, w) };
            assert_eq!(
                net.evaluate_inputs(stm, other),
                net.evaluate(&board),
                "{fen}"
            );
            assert_eq!(
                net2.evaluate_inputs(stm, other),
                net2.evaluate(&board),
                "{fen}"
            );
            assert_ne!(net2.evaluate(&board), 0, "{fen}");
        }
    }

    /// The fit learns what the labels say: its training loss falls well below the
    /// evaluation's alone, and the fixed-point network keeps what the floats learned.
    #[test]
    fn the_fit_learns_the_labels_and_survives_fixed_point() {
        let s = samples();
        let k = fit_scale(&s);
        let config = NetConfig {
            epochs: 40,
            learning_rate: 0.01,
            batch: 64,
            holdout: 0,
            seed: 1,
        };
        let before = config.losses(&s, k, None);
        let NetFit {
            net,
            losses: after,
            epoch,
        } = config.fit(&s, k, |_, _| {});
        assert_eq!(epoch, 40, "with no hold-out the last epoch is kept");
        assert!(after.train < before.train / 2.0, "{before:?} -> {after:?}");
        for j in 0..HIDDEN {
            assert_eq!(net.output[HIDDEN + j], -net.output[j], "unit {j}");
        }
        assert_eq!(net.output_bias, 0.0);
        let fixed = config.quantised_losses(&s, k, &net.quantised());
        assert!(
            (fixed.train - after.train).abs() < after.train / 10.0 + 1e-4,
            "{after:?} vs {fixed:?}"
        );
    }
}
