//! The fit: the logistic curve's scale for the evaluation as it is, then the table by Adam on
//! the mean squared error between results and predictions.

use super::samples::{Samples, ENTRIES, SQUARE_ENTRIES};
use crate::eval::squares::{Phase, SquareTable, ROLES, SQUARES};

/// Where the per-role offsets start in the fitted vector: after the mg and eg entries come
/// one mg and one eg offset per role. An offset adds to every square of its role alike, which
/// is a change of the role's material value: the fit may move material through them (games of
/// self-play convert a piece up more surely than the evaluation's scale says), but material is
/// SPSA's to tune by games, so the offsets are reported and dropped, and the table keeps only
/// how squares differ. Without them the table's every knight square rose by 100.
const OFFSETS: usize = 2 * ENTRIES;

/// The role whose material offset flat entry `e` carries: a square's role; none for a king
/// cell (an offset there would move material through the cells of one king offset).
#[inline]
fn material_role(e: usize) -> Option<usize> {
    (e < SQUARE_ENTRIES).then_some(e / SQUARES)
}

/// The predicted score of an evaluation `e` (centipawns, White's side) under scale `k`.
#[inline]
pub(super) fn sigmoid(k: f64, e: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * e / 400.0))
}

/// Mean squared error of the samples whose index `keep` accepts, each evaluated by `eval`.
fn loss(s: &Samples, k: f64, keep: impl Fn(usize) -> bool, eval: impl Fn(usize) -> f64) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for i in (0..s.len()).filter(|&i| keep(i)) {
        let d = f64::from(s.result[i]) - sigmoid(k, eval(i));
        sum += d * d;
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// The scale `k` that makes the evaluation without the table predict the results best (a
/// golden-section search of the loss, which is unimodal in `k`), so that the table is fitted
/// to correct the evaluation, not to rescale it.
pub fn fit_scale(s: &Samples) -> f64 {
    best_scale(|k| loss(s, k, |_| true, |i| f64::from(s.base[i])))
}

/// The logistic scale in [0.05, 5] where `loss` is least, by golden-section search (a loss of
/// the scale alone, for fixed evaluations, is unimodal in it): both fits hold this scale.
pub(super) fn best_scale(loss: impl Fn(f64) -> f64) -> f64 {
    let (mut a, mut b) = (0.05f64, 5.0f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let c = b - g * (b - a);
        let d = a + g * (b - a);
        if loss(c) < loss(d) {
            b = d;
        } else {
            a = c;
        }
    }
    (a + b) / 2.0
}

/// Adam's moments of a vector of values, the optimiser of both fits.
pub(super) struct Adam {
    m: Vec<f64>,
    v: Vec<f64>,
    learning_rate: f64,
    /// (1 - beta1^t, 1 - beta2^t) of the current epoch t: the moments' bias corrections.
    corrections: (f64, f64),
}

impl Adam {
    const BETA1: f64 = 0.9;
    const BETA2: f64 = 0.999;
    const EPS: f64 = 1e-8;

    /// Moments at zero for `n` values.
    pub(super) fn new(n: usize, learning_rate: f64) -> Adam {
        Adam {
            m: vec![0.0; n],
            v: vec![0.0; n],
            learning_rate,
            corrections: (1.0, 1.0),
        }
    }

    /// Starts epoch `epoch` (1-based).
    pub(super) fn epoch(&mut self, epoch: usize) {
        self.corrections = (
            1.0 - Self::BETA1.powi(epoch as i32),
            1.0 - Self::BETA2.powi(epoch as i32),
        );
    }

    /// The step to take from value `j` given its gradient `g` (subtract it).
    #[inline]
    pub(super) fn step(&mut self, j: usize, g: f64) -> f64 {
        let (b1, b2) = self.corrections;
        self.m[j] = Self::BETA1 * self.m[j] + (1.0 - Self::BETA1) * g;
        self.v[j] = Self::BETA2 * self.v[j] + (1.0 - Self::BETA2) * g * g;
        self.learning_rate * (self.m[j] / b1) / ((self.v[j] / b2).sqrt() + Self::EPS)
    }
}

/// How the table is fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct FitConfig {
    /// Passes over the training positions.
    pub epochs: usize,
    /// Adam's step size, in centipawns.
    pub learning_rate: f64,
    /// Weight of the L2 penalty on the table's values (per centipawn squared), which pulls
    /// entries the data barely sees towards zero (entries no position uses stay at zero
    /// anyway). On 610,000 positions of self-play (300 epochs), held-out losses were 0.10857
    /// without it, with 23 entries of 150 or more (kings and queens on squares they rarely
    /// reach), 0.10912 at the default 1e-9 with none, 0.10982 at 1e-8: the default gives up
    /// a little fit to keep rarely seen squares from deciding moves.
    pub l2: f64,
    /// The positions of every `holdout`-th pair of games are kept out of training to measure
    /// the fit (0: none; see [`super::held_out_game`]): whole games, since a game's positions
    /// share its result.
    pub holdout: usize,
    /// No value goes beyond this many centipawns.
    pub limit: f64,
    /// Fold the material the fit asked for (the per-role offsets fitted beside the table's
    /// entries) into the table instead of dropping it: each role's offsets are added to its
    /// every square. Right when the labels are a stronger engine's evaluations rather than
    /// self-play results: the table then carries the variant's own material beside the
    /// values SPSA tuned for every variant.
    pub keep_material: bool,
}

impl Default for FitConfig {
    fn default() -> Self {
        FitConfig {
            epochs: 400,
            learning_rate: 1.0,
            l2: 1e-9,
            holdout: 10,
            limit: 200.0,
            keep_material: false,
        }
    }
}

/// The losses at one point of the fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Passes done.
    pub epoch: usize,
    /// Mean squared error on the training positions.
    pub train: f64,
    /// Mean squared error on the held-out positions (the training loss without them).
    pub holdout: f64,
}

/// A fitted table and how the fit went.
#[derive(Clone, Debug)]
pub struct Fit {
    /// The table, rounded to whole centipawns.
    pub table: SquareTable,
    /// The change of each role's (mg, eg) material value the data asked for beside the
    /// table: in the table with [`FitConfig::keep_material`], else only reported.
    pub offsets: [(f64, f64); ROLES],
    /// The logistic scale used.
    pub k: f64,
    /// The losses before the first pass (with the starting table).
    pub start: Progress,
    /// The losses after the last pass (with the rounded table).
    pub end: Progress,
}

impl FitConfig {
    fn held_out(&self, s: &Samples, i: usize) -> bool {
        super::held_out_game(s.game[i], self.holdout)
    }

    /// Fits a table to `s` from `start` with the scale `k`, calling `report` every `every`
    /// epochs (0: never).
    pub fn fit(
        &self,
        s: &Samples,
        k: f64,
        start: &SquareTable,
        every: usize,
        mut report: impl FnMut(Progress),
    ) -> Fit {
        let mut w = flatten(start);
        w.resize(OFFSETS + 2 * ROLES, 0.0);
        let progress = |w: &[f64], epoch: usize| Progress {
            epoch,
            train: loss(s, k, |i| !self.held_out(s, i), |i| eval(s, w, i)),
            holdout: if self.holdout > 0 {
                loss(s, k, |i| self.held_out(s, i), |i| eval(s, w, i))
            } else {
                0.0
            },
        };
        let first = progress(&w, 0);
        let mut adam = Adam::new(w.len(), self.learning_rate);
        let train = (0..s.len())
            .filter(|&i| !self.held_out(s, i))
            .count()
            .max(1) as f64;
        let dk = k * std::f64::consts::LN_10 / 400.0;
        let mut grad = vec![0.0; w.len()];
        for epoch in 1..=self.epochs {
            grad.iter_mut().for_each(|g| *g = 0.0);
            for i in (0..s.len()).filter(|&i| !self.held_out(s, i)) {
                let p = sigmoid(k, eval(s, &w, i));
                // d(r - p)^2 / de, averaged over the training positions.
                let c = -2.0 * (f64::from(s.result[i]) - p) * p * (1.0 - p) * dk / train;
                let mg = f64::from(s.mg_share[i]);
                let c = c * s.table_scale;
                for (e, sign) in s.entries_of(i) {
                    let (g_mg, g_eg) = (c * f64::from(sign) * mg, c * f64::from(sign) * (1.0 - mg));
                    grad[e] += g_mg;
                    grad[ENTRIES + e] += g_eg;
                    if let Some(role) = material_role(e) {
                        grad[OFFSETS + role] += g_mg;
                        grad[OFFSETS + ROLES + role] += g_eg;
                    }
                }
            }
            adam.epoch(epoch);
            for j in 0..w.len() {
                let penalty = if j < OFFSETS {
                    2.0 * self.l2 * w[j]
                } else {
                    0.0
                };
                let step = adam.step(j, grad[j] + penalty);
                w[j] = (w[j] - step).clamp(-self.limit, self.limit);
            }
            if every > 0 && epoch % every == 0 {
                report(progress(&w, epoch));
            }
        }
        let mut offsets = [(0.0, 0.0); ROLES];
        for (r, o) in offsets.iter_mut().enumerate() {
            *o = (w[OFFSETS + r], w[OFFSETS + ROLES + r]);
        }
        if self.keep_material {
            for (j, x) in w[..OFFSETS].iter_mut().enumerate() {
                if let Some(role) = material_role(j % ENTRIES) {
                    *x += if j >= ENTRIES {
                        offsets[role].1
                    } else {
                        offsets[role].0
                    };
                }
            }
        }
        w.truncate(OFFSETS);
        w.iter_mut().for_each(|x| *x = x.round());
        let table = unflatten(&w);
        Fit {
            offsets,
            end: progress(&w, self.epochs),
            start: first,
            table,
            k,
        }
    }
}

/// Sample `i`'s evaluation with the table `w` (mg entries, then eg entries, then the
/// offsets if `w` holds them).
#[inline]
fn eval(s: &Samples, w: &[f64], i: usize) -> f64 {
    let mg = f64::from(s.mg_share[i]);
    let mut e = f64::from(s.base[i]);
    let offsets = w.get(OFFSETS..).filter(|o| o.len() == 2 * ROLES);
    for (j, sign) in s.entries_of(i) {
        let (mut m, mut g) = (w[j], w[ENTRIES + j]);
        if let (Some(o), Some(role)) = (offsets, material_role(j)) {
            m += o[role];
            g += o[ROLES + role];
        }
        e += f64::from(sign) * (mg * m + (1.0 - mg) * g) * s.table_scale;
    }
    e
}

/// The table as the fit's vector: every part's middle-game values, then every part's
/// end-game values (the order of `samples::ENTRIES`).
fn flatten(t: &SquareTable) -> Vec<f64> {
    [Phase::Mg, Phase::Eg]
        .into_iter()
        .flat_map(|phase| t.parts(phase).into_iter().flatten())
        .map(|&x| f64::from(x))
        .collect()
}

/// The table of a fit's vector (rounded values), laid out as [`flatten`] lays it.
fn unflatten(w: &[f64]) -> SquareTable {
    let mut t = SquareTable::ZERO;
    let mut values = w.iter();
    for phase in [Phase::Mg, Phase::Eg] {
        for part in t.parts_mut(phase) {
            for (slot, &x) in part.iter_mut().zip(values.by_ref()) {
                *slot = x as i16;
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::variant::{Rules, Variant};

    /// Positions where a White knight on one square wins and on another loses, whatever the
    /// rest: the fit must learn that difference, and the held-out loss must fall with it.
    #[test]
    fn the_fit_learns_a_square_the_results_favour() {
        let mut text = String::new();
        for i in 0..40 {
            // Knight on f3 (index 21): White wins; on a3 (16): Black wins. Kings vary.
            let king = ["4k3", "3k4", "5k2", "2k5"][i % 4];
            text.push_str(&format!("{king}/8/8/8/8/5N2/8/4K3 w - - 0 1 [1.0]\n"));
            text.push_str(&format!("{king}/8/8/8/8/N7/8/4K3 w - - 0 1 [0.0]\n"));
        }
        let s = Samples::read(
            &text,
            Rules::default_for(Variant::Chess),
            &Params::default(),
        )
        .expect("reads");
        assert_eq!(s.len(), 80);
        // The material is level in every position, so no scale of the base predicts the
        // results: use the scale of a typical evaluation.
        let k = 1.0;
        let config = FitConfig {
            epochs: 300,
            learning_rate: 2.0,
            holdout: 5,
            ..FitConfig::default()
        };
        let mut seen = Vec::new();
        let fit = config.fit(&s, k, &SquareTable::ZERO, 100, |p| seen.push(p.epoch));
        assert_eq!(seen, vec![100, 200, 300]);
        let (f3, a3) = (fit.table.eg[1][21], fit.table.eg[1][16]);
        assert!(f3 > 20 && a3 < -20, "knight f3 {f3}, a3 {a3}");
        assert!(fit.end.train < fit.start.train / 2.0, "{:?}", fit);
        assert!(fit.end.holdout < fit.start.holdout / 2.0, "{:?}", fit);
        // Entries no position uses have no gradient: they stay at zero.
        assert_eq!(fit.table.mg[4], [0; SQUARES]);
    }

    /// Positions a White knight up, labelled as won more surely than the evaluation's knight
    /// predicts: the fit asks for more knight. The same fit either drops that ask or adds it
    /// to every knight square, and only the kept one predicts the positions as the fit did. (Entries and offsets share each position's gradient, so the dropped table
    /// still holds some of the knight's worth on the squares seen: it is not material-free.)
    #[test]
    fn the_material_asked_for_is_kept_in_the_table_only_when_told() {
        let mut text = String::new();
        let squares = ["5N2", "N7", "3N4", "6N1", "1N6"];
        for i in 0..50 {
            let king = ["4k3", "3k4", "5k2", "2k5", "6k1"][i % 5];
            let knight = squares[(i / 5) % squares.len()];
            text.push_str(&format!("{king}/8/8/8/8/{knight}/8/4K3 w - - 0 1 [0.99]\n"));
        }
        let s = Samples::read(
            &text,
            Rules::default_for(Variant::Chess),
            &Params::default(),
        )
        .expect("reads");
        let fit = |keep_material| {
            FitConfig {
                epochs: 300,
                learning_rate: 2.0,
                holdout: 5,
                keep_material,
                ..FitConfig::default()
            }
            .fit(&s, 0.5, &SquareTable::ZERO, 0, |_| {})
        };
        let (dropped, kept) = (fit(false), fit(true));
        assert_eq!(dropped.offsets, kept.offsets, "one fit, folded or not");
        let (mg, eg) = kept.offsets[1];
        assert!(
            mg > 20.0 && eg > 20.0,
            "more knight asked for: {:?}",
            kept.offsets
        );
        for (sq, (d, k)) in dropped.table.eg[1]
            .iter()
            .zip(&kept.table.eg[1])
            .enumerate()
        {
            let added = f64::from(k - d);
            assert!(
                (added - eg).abs() <= 1.0,
                "knight eg {sq}: {d} -> {k}, asked {eg}"
            );
        }
        // (One result throughout is one game, so nothing is held out: the training loss.)
        assert!(kept.end.train < dropped.end.train, "{kept:?} {dropped:?}");
    }

    #[test]
    fn the_scale_fits_evaluations_that_predict_results() {
        // Positions a knight up win, positions level draw: a finite, positive scale.
        let mut text = String::new();
        for _ in 0..10 {
            text.push_str("4k3/8/8/8/8/5N2/8/4K3 w - - 0 1 [1.0]\n");
            text.push_str("4k3/8/8/8/8/8/8/4K3 w - - 0 1 [0.5]\n");
        }
        let s = Samples::read(
            &text,
            Rules::default_for(Variant::Chess),
            &Params::default(),
        )
        .expect("reads");
        let k = fit_scale(&s);
        assert!(k > 1.0, "a knight's worth predicts a win: {k}");
    }
}

#[cfg(test)]
mod model_tests {
    use super::*;
    use crate::board8::Board;
    use crate::eval::{PawnCache, SearchPosition};
    use crate::params::Params;
    use crate::position::Position;
    use crate::types::Color;
    use crate::variant::{Rules, Variant};

    /// A table with a value on every entry (a fixed pseudo-random pattern within ±60), so that
    /// a mismatch of square, colour or phase between the fit and the engine shows.
    /// The fit's model of the evaluation (the base without the table plus the table's entries
    /// tapered) is the engine's evaluation with its table, up to the integer divisions' rounding:
    /// otherwise the fit would tune a table for an evaluation the engine does not have. Checked
    /// with the shipped table and with a table of values everywhere (the shipped one may be
    /// all zeros, which any orientation of the squares would match).
    #[test]
    fn the_fit_models_the_engine_evaluation_with_its_table() {
        let rules = Rules::default_for(Variant::Chess);
        let shipped = crate::board8::square_table(rules).expect("chess has a table");
        check_model(rules, &CHESS_FENS, shipped);
        let table = crate::board8::square_table_testing::patterned_table();
        crate::board8::square_table_testing::with_table(table, || {
            check_model(rules, &CHESS_FENS, table)
        });
    }

    /// The same of Latte's table, which its fit reads with Latte's evaluation (its own
    /// material, no network): the shipped table has values everywhere it was fitted.
    #[test]
    fn the_fit_models_latte_evaluation_with_its_table() {
        let rules = Rules::default_for(Variant::Latte);
        let shipped = crate::board8::square_table(rules).expect("Latte has a table");
        assert!(!shipped.is_zero(), "Latte's shipped table is fitted");
        let fens = [
            "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQkq - 0 1",
            "rr1qk1rr/nbbp2b1/p1p3bp/8/1NPpP3/PP5P/2BP2NN/RR1QKBRR w KQkq - 0 15",
            "rrkq2rr/nb2n1b1/pp3npp/3p2n1/1N6/PPP1N1RP/1BB1P2N/RRNQK2R w KQ - 0 13",
            "3qknrr/3ppb2/6pp/2p2p2/Q7/2PBP1bP/3K2B1/1R4RR b k - 1 22",
            "rrn1k1rr/n1bn4/pp4pp/2pP4/6Pq/PP6/NRBPNR1N/R2QK2R w KQ - 0 17",
            "2n3k1/2N2b2/3p1np1/5pp1/P1PN4/3PN1Pr/2BK4/8 w - - 3 32",
            // Kings on the queen side, which read the table mirrored by file.
            "rr3k2/6b1/ppp5/4b1R1/NP1pPn2/PN1P3q/2B5/RR2KN2 w Q - 1 28",
            "R7/3k4/5p2/4pPp1/2r3r1/4K3/8/6R1 w - - 6 66",
        ];
        check_model(rules, &fens, shipped);
    }

    const CHESS_FENS: [&str; 10] = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R b KQ - 3 9",
        "8/5pk1/6p1/3R4/8/6P1/r4P1K/8 w - - 0 40",
        "2r3k1/1q3ppp/p2p4/1p1Np3/4P3/1P3Q2/P4PPP/3R2K1 w - - 0 28",
        // Kings on the queen side, which read the table mirrored by file.
        "2kr1b1r/ppp2ppp/2np1n2/4p3/4P3/2NP1N2/PPP2PPP/2KR1B1R w - - 0 8",
        "3k4/ppp5/8/8/8/8/5PPP/4K3 b - - 0 30",
        // Pieces on the king's zone with safe checks; passed pawns with both kings near.
        "r1b2rk1/ppp2pp1/2n4p/3qP1N1/3P4/2PB4/P4PPP/R2QK2R w KQ - 0 12",
        "8/5k2/1P6/3K4/5p2/8/6P1/8 w - - 0 50",
        // The side to move attacks a defended knight (the threats of the side to move);
        // a passer blocked, one free.
        "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4",
        "8/2k5/1p6/1P2K3/5p2/8/6P1/8 b - - 0 50",
    ];

    fn check_model(rules: Rules, fens: &[&str], table: &SquareTable) {
        let text: String = fens.iter().map(|f| format!("{f} [0.5]\n")).collect();
        let params = Params::default();
        let s = Samples::read(&text, rules, &params).expect("reads");
        assert_eq!(s.len(), fens.len(), "all quiet");
        let mut w = flatten(table);
        w.resize(OFFSETS + 2 * ROLES, 0.0);
        let mut pawns = PawnCache::new();
        for (i, fen) in fens.iter().enumerate() {
            let board = Board::from_fen(rules, fen).expect("fen");
            let e = board.evaluate(&params, &mut pawns);
            let white = if board.turn() == Color::White { e } else { -e };
            let model = eval(&s, &w, i);
            assert!(
                (f64::from(white) - model).abs() <= 2.0,
                "{fen}: engine {white}, model {model}"
            );
        }
    }
}
