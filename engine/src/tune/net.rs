//! The fit of the evaluation's small network ([`crate::board8::net`]) to labelled positions: the
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
use crate::board8::net::{inputs, Net, INPUTS, OUTPUT_LIMIT, OUTPUT_SCALE, WEIGHT_LIMIT, WIDTHS};
use crate::board8::Board;
use crate::eval::{PawnCache, SearchPosition};
use crate::params::Params;
use crate::position::Position;
use crate::types::Color;
use crate::variant::{Rules, Variant};

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

/// The network in floats while it is fitted, of any width (the engine's is the shipped
/// file's; a fit of another width writes a file the engine builds at that width).
#[derive(Clone, Debug)]
pub struct FloatNet {
    /// Hidden units a view.
    hidden: usize,
    /// Input weights, `INPUTS` rows of `hidden`.
    pub input: Vec<f32>,
    /// Hidden biases.
    pub bias: Vec<f32>,
    /// Output weights: the side to move's `hidden` units, then the other side's, which the fit
    /// holds at the side to move's negated. The output is then the same whichever side is to
    /// move (one view's worth less the other's): a network free to weigh the two views apart
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
    /// `hidden` units a view, small random input weights, a zero output (the network starts
    /// adding nothing); a width [`Net`] is not built for is refused.
    pub fn new(hidden: usize, seed: u64) -> Result<FloatNet, TuneError> {
        if !WIDTHS.contains(&hidden) {
            return Err(TuneError::NetWidth(hidden));
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        Ok(FloatNet {
            hidden,
            input: (0..INPUTS * hidden)
                .map(|_| rng.gen_range(-0.05..0.05))
                .collect(),
            bias: vec![0.5; hidden],
            output: vec![0.0; 2 * hidden],
            output_bias: 0.0,
        })
    }

    /// Hidden units a view.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    fn params(&self) -> usize {
        self.input.len() + self.bias.len() + self.output.len() + 1
    }

    /// The hidden layer's sums for one view (`out` holds `hidden`).
    fn sums(&self, inputs: &[u16], out: &mut [f32]) {
        out.copy_from_slice(&self.bias);
        for &f in inputs {
            let row = &self.input[f as usize * self.hidden..][..self.hidden];
            for (o, w) in out.iter_mut().zip(row) {
                *o += w;
            }
        }
    }

    /// Adds to `grad` (laid out as [`FloatNet::params`]: input rows, biases, output weights,
    /// output bias) the gradient of the squared error on the samples `indices` of `s` under
    /// scale `k`: the evaluation plus this network against each label.
    fn gradient(&self, s: &NetSamples, k: f64, indices: &[usize], grad: &mut [f32]) {
        let hidden = self.hidden;
        let (ib, ob) = (INPUTS * hidden, INPUTS * hidden + hidden);
        let slope = (10f64.ln() * k / 400.0) as f32;
        let (mut w, mut b) = (vec![0.0f32; hidden], vec![0.0f32; hidden]);
        let mut back = vec![0.0f32; hidden];
        for &i in indices {
            let (wv, bv) = s.views(i);
            self.sums(wv, &mut w);
            self.sums(bv, &mut b);
            let white = s.white_to_move[i];
            let (stm, other, stm_in, other_in) = if white {
                (&w[..], &b[..], wv, bv)
            } else {
                (&b[..], &w[..], bv, wv)
            };
            let out = self.output_of(stm, other);
            let sign = if white { 1.0 } else { -1.0 };
            let e = s.base[i] + sign * out;
            let p = 1.0 / (1.0 + 10f32.powf(-(k as f32) * e / 400.0));
            // d loss / d out (the output in centipawns, the side to move's).
            let g = 2.0 * (p - s.result[i]) * p * (1.0 - p) * slope * sign * OUTPUT_SCALE;
            grad[ob + 2 * hidden] += g;
            for (view, sums, inputs) in [(0, stm, stm_in), (1, other, other_in)] {
                // d loss / d each unit's sum, zero where the clip holds it.
                for j in 0..hidden {
                    let a = sums[j];
                    grad[ob + view * hidden + j] += g * a.clamp(0.0, 1.0);
                    back[j] = if a > 0.0 && a < 1.0 {
                        g * self.output[view * hidden + j]
                    } else {
                        0.0
                    };
                }
                for j in 0..hidden {
                    grad[ib + j] += back[j];
                }
                for &f in inputs {
                    let row = &mut grad[f as usize * hidden..][..hidden];
                    for (r, h) in row.iter_mut().zip(&back) {
                        *r += h;
                    }
                }
            }
        }
    }

    /// The network's output in centipawns for the side to move, given both views' sums.
    fn output_of(&self, stm: &[f32], other: &[f32]) -> f32 {
        let (own, theirs) = self.output.split_at(self.hidden);
        let mut sum = self.output_bias;
        for j in 0..self.hidden {
            sum += own[j] * stm[j].clamp(0.0, 1.0);
            sum += theirs[j] * other[j].clamp(0.0, 1.0);
        }
        sum * OUTPUT_SCALE
    }

    /// The network quantised as the engine reads it, at width `H` (`None`: not this
    /// network's width).
    pub fn quantised<const H: usize>(&self) -> Option<Box<Net<H>>> {
        (H == self.hidden)
            .then(|| Net::from_floats(&self.input, &self.bias, &self.output, self.output_bias))
    }
}

/// A fixed-point network of whatever width the fit chose: what the fit reads of it.
pub trait FixedPoint {
    /// Its losses on `s` under `config` and scale `k`, as the engine would read it.
    fn losses(&self, config: &NetConfig, s: &NetSamples, k: f64) -> NetLosses;
    /// The Rust source of `engine/src/board8/tables/<variant>_net.rs` under `header`.
    fn source(&self, variant: Variant, header: &[String]) -> String;
    /// The network file of it for `variant` (`crate::board8::net_file`).
    fn file_bytes(&self, variant: Variant) -> Vec<u8>;
    /// Hidden units a view.
    fn hidden(&self) -> usize;
}

impl<const H: usize> FixedPoint for Net<H> {
    fn losses(&self, config: &NetConfig, s: &NetSamples, k: f64) -> NetLosses {
        config.quantised_losses(s, k, self)
    }

    fn source(&self, variant: Variant, header: &[String]) -> String {
        Net::source(self, variant, header)
    }

    fn file_bytes(&self, variant: Variant) -> Vec<u8> {
        crate::board8::net_file::to_bytes(self, variant)
    }

    fn hidden(&self) -> usize {
        H
    }
}

impl FloatNet {
    /// This network in fixed point at its own width.
    pub fn fixed_point(&self) -> Box<dyn FixedPoint> {
        fn at<const H: usize>(net: &FloatNet) -> Option<Box<dyn FixedPoint>> {
            net.quantised::<H>().map(|n| n as Box<dyn FixedPoint>)
        }
        // One arm per entry of `WIDTHS`, the widths `new` admits (a test builds each).
        None.or_else(|| at::<8>(self))
            .or_else(|| at::<16>(self))
            .or_else(|| at::<32>(self))
            .or_else(|| at::<64>(self))
            .or_else(|| at::<128>(self))
            .or_else(|| at::<256>(self))
            .expect("FloatNet::new admits only the widths of WIDTHS")
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
    /// Threads a batch's gradient and an epoch's losses are split over (a fit is the same for
    /// the same seed and threads; one thread sums in the order of the positions).
    pub threads: usize,
}

impl NetConfig {
    fn held_out(&self, s: &NetSamples, i: usize) -> bool {
        super::held_out_game(s.game[i], self.holdout)
    }

    /// The losses of `net` (none: the evaluation alone) on `s` under scale `k`.
    pub fn losses(&self, s: &NetSamples, k: f64, net: Option<&FloatNet>) -> NetLosses {
        let width = net.map_or(0, FloatNet::hidden);
        self.losses_by(s, k, || {
            let (mut w, mut b) = (vec![0.0; width], vec![0.0; width]);
            move |stm: &[u16], other: &[u16]| match net {
                Some(net) => {
                    net.sums(stm, &mut w);
                    net.sums(other, &mut b);
                    f64::from(net.output_of(&w, &b))
                }
                None => 0.0,
            }
        })
    }

    /// The losses of the fixed-point network the engine would read.
    pub fn quantised_losses<const H: usize>(
        &self,
        s: &NetSamples,
        k: f64,
        net: &Net<H>,
    ) -> NetLosses {
        self.losses_by(s, k, || {
            |stm: &[u16], other: &[u16]| f64::from(net.evaluate_inputs(stm, other))
        })
    }

    /// The losses on `s` of the evaluation plus the output that `output` makes (the side to
    /// move's, given its view's inputs and the other's): one output per thread, each over a
    /// contiguous part of the positions, the parts' sums added in order.
    fn losses_by<F: FnMut(&[u16], &[u16]) -> f64>(
        &self,
        s: &NetSamples,
        k: f64,
        output: impl Fn() -> F + Sync,
    ) -> NetLosses {
        let part = |range: std::ops::Range<usize>| {
            let mut output = output();
            let (mut sums, mut counts) = ([0.0f64; 2], [0usize; 2]);
            for i in range {
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
            (sums, counts)
        };
        let size = s.len().div_ceil(self.threads.max(1)).max(1);
        let starts: Vec<usize> = (0..s.len()).step_by(size).collect();
        let parts: Vec<([f64; 2], [usize; 2])> = if starts.len() <= 1 {
            vec![part(0..s.len())]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = starts
                    .iter()
                    .map(|&a| {
                        let part = &part;
                        scope.spawn(move || part(a..(a + size).min(s.len())))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            })
        };
        let (mut sums, mut counts) = ([0.0f64; 2], [0usize; 2]);
        for (part_sums, part_counts) in parts {
            for h in 0..2 {
                sums[h] += part_sums[h];
                counts[h] += part_counts[h];
            }
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

    /// Fits a network of `hidden` units a view to `s` under scale `k`, calling `report` after
    /// each epoch; returns the network of the epoch with the least held-out loss (the last
    /// one with no hold-out). A width [`Net`] is not built for is refused.
    pub fn fit(
        &self,
        hidden: usize,
        s: &NetSamples,
        k: f64,
        mut report: impl FnMut(usize, NetLosses),
    ) -> Result<NetFit, TuneError> {
        let mut net = FloatNet::new(hidden, self.seed)?;
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
        let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
        let mut step = 0i32;
        let (ib, ob) = (INPUTS * hidden, INPUTS * hidden + hidden);
        // The other threads' parts of a batch's gradient.
        let mut partial = vec![vec![0.0f32; n]; self.threads.max(1) - 1];
        for epoch in 1..=self.epochs {
            // Fisher-Yates.
            for i in (1..order.len()).rev() {
                let j = rng.gen_range(0..=i);
                order.swap(i, j);
            }
            for batch in order.chunks(self.batch) {
                // Each thread sums the gradient of a contiguous part of the batch; the parts
                // are added in order, so a fit is the same for the same seed and threads.
                let part = batch.len().div_ceil(self.threads.max(1));
                if part >= batch.len() {
                    grad.fill(0.0);
                    net.gradient(s, k, batch, &mut grad);
                } else {
                    std::thread::scope(|scope| {
                        let mut sums = std::iter::once(&mut grad).chain(partial.iter_mut());
                        for (indices, sum) in batch.chunks(part).zip(&mut sums) {
                            let net = &net;
                            scope.spawn(move || {
                                sum.fill(0.0);
                                net.gradient(s, k, indices, sum);
                            });
                        }
                    });
                    let parts = batch.chunks(part).len();
                    for sum in &partial[..parts - 1] {
                        grad.iter_mut().zip(sum).for_each(|(g, x)| *g += x);
                    }
                }
                step += 1;
                let (c1, c2) = (1.0 - b1.powi(step), 1.0 - b2.powi(step));
                let lr = self.learning_rate as f32;
                let scale = 1.0 / batch.len() as f32;
                // The other view's output weights are the side to move's negated, and there is
                // no output bias (see `FloatNet`): one step on the tied weight, by the sum of
                // both gradients.
                for j in 0..hidden {
                    grad[ob + j] -= grad[ob + hidden + j];
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
                let (stm, other) = net.output.split_at_mut(hidden);
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
        Ok(best)
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
    use crate::board8::net::HIDDEN;
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

    /// A fit of `epochs` with no hold-out, in small steps of few positions.
    fn config(epochs: usize) -> NetConfig {
        NetConfig {
            epochs,
            learning_rate: 0.01,
            batch: 64,
            holdout: 0,
            seed: 1,
            threads: 1,
        }
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
        let engine_width = |net: &FloatNet| net.quantised::<HIDDEN>().expect("the engine's width");
        let net = engine_width(&FloatNet::new(HIDDEN, 3).expect("the engine's width"));
        let mut fixed = FloatNet::new(HIDDEN, 3).expect("the engine's width");
        fixed
            .output
            .iter_mut()
            .enumerate()
            .for_each(|(j, w)| *w = (j as f32 - 60.0) / 50.0);
        let net2 = engine_width(&fixed);
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
    /// evaluation's alone, and the fixed-point network keeps what the floats learned (at a
    /// width other than the engine's: the fit and its fixed point do not depend on it).
    #[test]
    fn the_fit_learns_the_labels_and_survives_fixed_point() {
        let s = samples();
        let k = fit_scale(&s);
        let config = config(40);
        let before = config.losses(&s, k, None);
        let NetFit {
            net,
            losses: after,
            epoch,
        } = config.fit(16, &s, k, |_, _| {}).expect("a width of WIDTHS");
        assert_eq!(epoch, 40, "with no hold-out the last epoch is kept");
        assert!(after.train < before.train / 2.0, "{before:?} -> {after:?}");
        assert_eq!(net.output.len(), 2 * 16);
        for j in 0..16 {
            assert_eq!(net.output[16 + j], -net.output[j], "unit {j}");
        }
        assert_eq!(net.output_bias, 0.0);
        let fixed = net.fixed_point().losses(&config, &s, k);
        assert!(
            (fixed.train - after.train).abs() < after.train / 10.0 + 1e-4,
            "{after:?} vs {fixed:?}"
        );
    }

    /// Every width `tune-net` admits has a fixed-point build: its losses are the floats' (to
    /// the rounding of the weights) and its file declares the width the engine then takes.
    #[test]
    fn every_width_the_fit_admits_is_built_in_fixed_point() {
        let s = samples();
        let k = fit_scale(&s);
        let config = config(0);
        let base = config.losses(&s, k, None);
        for width in WIDTHS {
            let mut net = FloatNet::new(width, 5).expect("a width of WIDTHS");
            let half = net.output.len() / 2;
            let (own, theirs) = net.output.split_at_mut(half);
            for (j, (o, t)) in own.iter_mut().zip(theirs).enumerate() {
                *o = (j % 7) as f32 / 20.0 - 0.15;
                *t = -*o;
            }
            let float = config.losses(&s, k, Some(&net));
            assert_ne!(float.train, base.train, "width {width} adds something");
            let fixed = net.fixed_point();
            let q = fixed.losses(&config, &s, k);
            assert!(
                (q.train - float.train).abs() < float.train / 20.0,
                "width {width}: {float:?} vs {q:?}"
            );
            for (variant, name) in [(Variant::Chess, "CHESS"), (Variant::Latte, "LATTE")] {
                let source = fixed.source(variant, &["a header".into()]);
                let declared = format!("pub(crate) const {name}_NET_HIDDEN: usize = {width};");
                assert!(source.lines().any(|l| l == declared), "width {width}");
                let static_line = format!("static {name}_NET: Net = Net {{");
                assert!(source.lines().any(|l| l == static_line), "width {width}");
                assert!(source.starts_with("// a header\n"), "width {width}");
            }
        }
        let net = FloatNet::new(32, 1).expect("a width of WIDTHS");
        assert!(net.quantised::<64>().is_none(), "a build of another width");
    }

    /// A width the engine has no build for is refused by name, by the network and the fit.
    #[test]
    fn a_width_the_engine_cannot_build_is_refused() {
        for width in [0, 48, 512] {
            let err = FloatNet::new(width, 1).expect_err("not a width of WIDTHS");
            assert!(matches!(err, TuneError::NetWidth(w) if w == width), "{err}");
            assert!(
                err.to_string().contains(&format!("--hidden {width}:")),
                "{err}"
            );
        }
        let config = config(1);
        let fit = config.fit(48, &samples(), 1.0, |_, _| {});
        assert!(matches!(fit, Err(TuneError::NetWidth(48))));
    }

    /// A batch's gradient split over threads is the sum over the batch still: the fit
    /// learns as with one thread, to the rounding of the order its parts are added in, and is
    /// the same each time for the same seed and threads.
    #[test]
    fn a_fit_over_threads_learns_as_one_thread_and_repeats() {
        let s = samples();
        let k = fit_scale(&s);
        let fit = |threads: usize| {
            let config = NetConfig {
                threads,
                ..config(12)
            };
            config.fit(16, &s, k, |_, _| {}).expect("a width of WIDTHS")
        };
        let one = fit(1);
        let three = fit(3);
        assert!(
            (three.losses.train - one.losses.train).abs() < one.losses.train / 100.0,
            "{:?} vs {:?}",
            one.losses,
            three.losses
        );
        assert_ne!(
            one.net.input, three.net.input,
            "the parts were summed apart"
        );
        assert_eq!(
            three.net.input,
            fit(3).net.input,
            "the same seed and threads"
        );
        // The losses summed in three parts are the losses summed in one.
        let losses = |threads: usize| {
            let config = NetConfig {
                threads,
                ..config(0)
            };
            config.losses(&s, k, Some(&three.net))
        };
        let (one_part, three_parts) = (losses(1), losses(3));
        assert!((one_part.train - three_parts.train).abs() < 1e-12);
        assert_ne!(one_part.train, 0.0);
    }
}
