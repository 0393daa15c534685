//! Small networks on top of chess's and Latte's evaluations: one hidden layer over the
//! pieces' squares seen from each side, whose output (weighted by `NetScale`) the evaluation
//! adds after everything else. Fitted by `engine tune-net` ([`crate::tune::net`]) to a
//! stronger engine's evaluations, as the residual the whole evaluation, learned table
//! included, leaves; the weights are integers, so the sum is exact and the bench
//! deterministic.
//!
//! The learned table is linear: a knight on f5 adds the same whatever stands beside it. Each
//! hidden unit reads every piece at once and is clipped to [0, 1], so the output can depend on
//! combinations the table's parts cannot name. On 448,815 labelled chess positions the held-out
//! loss of the evaluation alone, 0.01382, fell to 0.01261 with 16 units a view, 0.01231 with
//! 32, 0.01160 with 64 and 0.01111 with 128 (fourteen epochs each): 64 is the cost and gain
//! chosen while the sums are made afresh at each evaluation (some 1,100 instructions).
//!
//! At full weight the network lost every SPRT it played (-38 to -56 Elo; `docs/strength.md`):
//! it fits the noise of the labels as well as their sense, and what it adds to a position is
//! partly that noise, which costs a search more than the better prediction gains. At half
//! weight (`NetScale` 50) the noise costs a quarter as much and the sense half: so weighed it
//! won its SPRT by 26.7 Elo (`examples/sprt-net.toml`).
//! Refitted on 1,026,654 positions (those positions' games, positions one to three random
//! moves off them as a search tree holds, labelled alike), the same 64 units won another
//! +12.6 Elo by SPRT.
//!
//! Latte has a network of its own (`tables/latte_net.rs`, one for its four rule-sets), fitted
//! the same way to Stockfish's classical evaluations of Latte positions on top of Latte's own
//! table; the two share one width, since the board keeps one width of sums.
//!
//! The board keeps each view's hidden sums ([`Accumulator`]) as it keeps its piece-square
//! sums: `make` adds and takes away the rows of the pieces that moved (a view is summed afresh
//! only when its king crosses between the d and e files, which mirrors every input), `unmake`
//! restores the sums it saved, and an evaluation reads them instead of summing some thirty rows
//! of each view afresh.

use super::{Board, Square};
use crate::eval::squares::king_side;
use crate::position::Position;
use crate::types::{Color, Piece, Role};
use crate::variant::Variant;

/// Inputs of one view: (own or enemy, role, square) cells.
pub const INPUTS: usize = 2 * 6 * 64;
/// Hidden units per view: the shipped network's width, which its file declares (so that a
/// fit of another width, `engine tune-net --hidden N`, is one file to write and one build).
pub const HIDDEN: usize = super::tables::CHESS_NET_HIDDEN;
/// The widths `engine tune-net` can fit and write: each is a build of [`Net`] the fit checks
/// its fixed-point loss with, and each keeps the output's sum within an `i32`.
pub const WIDTHS: [usize; 6] = [8, 16, 32, 64, 128, 256];
/// The float network's output unit, in centipawns.
pub const OUTPUT_SCALE: f32 = 100.0;
/// Fixed-point one of the hidden layer's weights and activations.
pub const QA: i32 = 256;
/// Fixed-point one of the output weights, per centipawn.
pub const QB: i32 = 16;
/// No input weight or bias beyond this (in the float unit), so that a view's sum of at most
/// 44 pieces (Latte's start) and a bias stays within an `i16`: 45 * 2 * 256 < 32767.
pub const WEIGHT_LIMIT: f32 = 2.0;
/// No output weight beyond this (in the float unit): 128 units of at most `QA` each, times
/// `OUTPUT_LIMIT * OUTPUT_SCALE * QB`, stays within an `i32`.
pub const OUTPUT_LIMIT: f32 = 10.0;

/// The largest input weight or hidden bias in fixed point: the fit's clamp, and what a network
/// file's reader and any change of a network keep to.
pub const MAX_INPUT: i32 = WEIGHT_LIMIT as i32 * QA;
/// The largest output weight in fixed point (see [`MAX_INPUT`]).
pub const MAX_OUTPUT: i32 = OUTPUT_LIMIT as i32 * OUTPUT_SCALE as i32 * QB;
/// The largest output bias in fixed point: as many centipawns as the largest output weight.
pub const MAX_OUTPUT_BIAS: i32 = MAX_OUTPUT * QA;

const _: () = assert!(45 * MAX_INPUT < i16::MAX as i32);
/// Whether the output's sum of `hidden` units a view stays within an `i32`: each unit is at
/// most `QA`, each weight at most `OUTPUT_LIMIT * OUTPUT_SCALE * QB`, and the bias at most
/// as much as one unit's full weight.
pub const fn width_fits(hidden: usize) -> bool {
    (2 * hidden as i64 + 1)
        * (QA as i64)
        * (OUTPUT_LIMIT as i64)
        * (OUTPUT_SCALE as i64)
        * (QB as i64)
        < i32::MAX as i64
}

// Every width the fit writes fits, and the shipped one is among them (so that `tune-net`'s
// default, the shipped width, is one it can fit).
const _: () = {
    let (mut i, mut shipped) = (0, false);
    while i < WIDTHS.len() {
        assert!(width_fits(WIDTHS[i]));
        shipped |= WIDTHS[i] == HIDDEN;
        i += 1;
    }
    assert!(shipped, "the shipped network's width is not one of WIDTHS");
};

/// The input of `color`'s `role` on `sq` in the view of `view`, whose king stands on file
/// `king_file`: the square seen from `view`'s side, mirrored by file when its king stands on
/// a..d (as the learned table reads it).
#[inline(always)]
pub fn feature(view: Color, king_file: u8, color: Color, role: Role, sq: Square) -> usize {
    let relative = king_side(sq.relative(view).index(), king_file);
    let side = usize::from(color != view);
    (side * 6 + role.index()) * 64 + relative
}

/// Hands each input of `view`'s view of `board` to `add`: what the engine sums and the fit
/// stores, from one list.
#[inline]
pub fn inputs(board: &Board, view: Color, add: &mut dyn FnMut(usize)) {
    let king = board.king_of(view).file_index();
    for color in [Color::White, Color::Black] {
        for &role in &Role::ALL[..=Role::King.index()] {
            for sq in board.pieces(color, role) {
                add(feature(view, king, color, role, sq));
            }
        }
    }
}

/// The network in fixed point, as the engine evaluates it: `H` hidden units a view (the engine
/// reads the shipped width, [`HIDDEN`]; the fit builds others to check what it writes).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Net<const H: usize = HIDDEN> {
    /// One row of `H` weights per input, `QA` per float unit.
    pub input: [[i16; H]; INPUTS],
    /// Hidden biases, `QA` per float unit.
    pub bias: [i16; H],
    /// Output weights: the side to move's units, then the other's; `QB` per centipawn.
    pub output: [[i32; H]; 2],
    /// Output bias, `QB * QA` per centipawn.
    pub output_bias: i32,
}

impl<const H: usize> Net<H> {
    /// The fixed-point network of float weights (clamped to the limits): `input` holds
    /// `INPUTS` rows of `H`, `output` the side to move's `H` then the other's.
    pub fn from_floats(
        input: &[f32],
        bias: &[f32],
        output: &[f32],
        output_bias: f32,
    ) -> Box<Net<H>> {
        let q = |w: f32| (w.clamp(-WEIGHT_LIMIT, WEIGHT_LIMIT) * QA as f32).round() as i16;
        let o = |w: f32| {
            (w.clamp(-OUTPUT_LIMIT, OUTPUT_LIMIT) * OUTPUT_SCALE * QB as f32).round() as i32
        };
        let mut net = Box::new(Net {
            input: [[0; H]; INPUTS],
            bias: [0; H],
            output: [[0; H]; 2],
            output_bias: (output_bias.clamp(-OUTPUT_LIMIT, OUTPUT_LIMIT)
                * OUTPUT_SCALE
                * (QB * QA) as f32)
                .round() as i32,
        });
        for (row, weights) in net.input.iter_mut().zip(input.chunks(H)) {
            row.iter_mut().zip(weights).for_each(|(r, &w)| *r = q(w));
        }
        net.bias.iter_mut().zip(bias).for_each(|(b, &w)| *b = q(w));
        for (view, weights) in net.output.iter_mut().zip(output.chunks(H)) {
            view.iter_mut().zip(weights).for_each(|(b, &w)| *b = o(w));
        }
        net
    }

    /// The Rust source of this network as `engine/src/board8/tables/<variant>_net.rs` holds
    /// it for `variant` (`CHESS_NET`, `LATTE_NET`): `header`'s lines as comments, then its
    /// width (which becomes the engine's [`HIDDEN`]) and its static.
    pub fn source(&self, variant: Variant, header: &[String]) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for line in header {
            let _ = writeln!(out, "// {line}");
        }
        let list = |values: &mut dyn Iterator<Item = i32>| {
            values.map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
        };
        let name = variant.id().to_ascii_uppercase();
        let _ = writeln!(out, "pub(crate) const {name}_NET_HIDDEN: usize = {H};");
        let _ = write!(out, "static {name}_NET: Net = Net {{\n    input: [\n");
        for row in &self.input {
            let _ = writeln!(
                out,
                "        [{}],",
                list(&mut row.iter().map(|&v| i32::from(v)))
            );
        }
        let _ = writeln!(out, "    ],");
        let _ = writeln!(
            out,
            "    bias: [{}],",
            list(&mut self.bias.iter().map(|&v| i32::from(v)))
        );
        let _ = writeln!(
            out,
            "    output: [[{}], [{}]],",
            list(&mut self.output[0].iter().copied()),
            list(&mut self.output[1].iter().copied())
        );
        let _ = writeln!(out, "    output_bias: {},", self.output_bias);
        out.push_str("};\n");
        out
    }

    /// The hidden sums of the inputs `each` hands over.
    #[inline]
    fn sums(&self, each: impl FnOnce(&mut dyn FnMut(usize))) -> [i16; H] {
        let mut acc = self.bias;
        each(&mut |f| {
            for (a, w) in acc.iter_mut().zip(&self.input[f]) {
                *a += w;
            }
        });
        acc
    }

    /// The output for the side to move, in centipawns, of the inputs of its view and of the
    /// other's (what the fit holds of a position instead of its board).
    pub fn evaluate_inputs(&self, stm: &[u16], other: &[u16]) -> i32 {
        let of = |inputs: &[u16]| self.sums(|add| inputs.iter().for_each(|&f| add(f.into())));
        self.output(&of(stm), &of(other))
    }

    /// The output for the side to move, in centipawns, given its view's sums and the other's.
    #[inline]
    fn output(&self, stm: &[i16; H], other: &[i16; H]) -> i32 {
        let mut sum = self.output_bias;
        for (j, (&s, &o)) in stm.iter().zip(other).enumerate() {
            sum += self.output[0][j] * i32::from(s).clamp(0, QA);
            sum += self.output[1][j] * i32::from(o).clamp(0, QA);
        }
        sum / (QB * QA)
    }

    /// The hidden sums of `view`'s view of `board`, from its pieces.
    #[inline]
    fn view_sums(&self, board: &Board, view: Color) -> [i16; H] {
        self.sums(|add| inputs(board, view, add))
    }

    /// The network's output for the side to move of `board`, in centipawns, summed afresh
    /// from its pieces (what the board's kept sums must give: [`Net::evaluate_kept`]).
    pub fn evaluate(&self, board: &Board) -> i32 {
        let turn = board.turn();
        self.output(&self.view_sums(board, turn), &self.view_sums(board, !turn))
    }
}

impl Net {
    /// This network with its output (weights and bias) multiplied by `factor`, rounded: the
    /// network weighed more or less in its game alone, where `NetScale` weighs chess's and
    /// Latte's alike. `None` when a weight would leave the limits the fit clamps to.
    pub fn scaled_output(&self, factor: f64) -> Option<Box<Net>> {
        let scale = |w: i32, limit: i32| {
            let v = (f64::from(w) * factor).round();
            (v.is_finite() && v.abs() <= f64::from(limit)).then_some(v as i32)
        };
        let mut out = Box::new(self.clone());
        for w in out.output.iter_mut().flatten() {
            *w = scale(*w, MAX_OUTPUT)?;
        }
        out.output_bias = scale(self.output_bias, MAX_OUTPUT_BIAS)?;
        Some(out)
    }

    /// The largest factor [`Net::scaled_output`] takes for this network.
    pub fn max_output_scale(&self) -> f64 {
        let limit = f64::from(MAX_OUTPUT);
        let largest = self
            .output
            .iter()
            .flatten()
            .map(|&w| f64::from(w).abs())
            .chain([f64::from(self.output_bias).abs() / f64::from(QA)])
            .fold(0.0, f64::max);
        if largest == 0.0 {
            f64::INFINITY
        } else {
            (limit / largest * 100.0).floor() / 100.0
        }
    }

    /// The network's output for `turn`, in centipawns, from the hidden sums a board keeps.
    #[inline]
    pub fn evaluate_kept(&self, sums: &Accumulator, turn: Color) -> i32 {
        self.output(&sums.views[turn.index()], &sums.views[(!turn).index()])
    }
}

/// Each side's view's hidden sums of one board (the first layer, before clipping), kept by
/// the board through `make` and `unmake` so that an evaluation does not sum them afresh.
/// All zeros under rules without a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Accumulator {
    /// By [`Color::index`] of the view.
    views: [[i16; HIDDEN]; 2],
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator {
            views: [[0; HIDDEN]; 2],
        }
    }
}

/// The pieces one move lifts and places, as `make` lists them for [`Accumulator::play`]: at
/// most a king and two rooks each way (Latte's two-rook castling), and a capture.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    lifted: [(Piece, Square); 4],
    lifted_len: usize,
    placed: [(Piece, Square); 3],
    placed_len: usize,
}

impl Placed {
    pub(crate) const NONE: Placed = Placed {
        lifted: [(Piece::new(Color::White, Role::Pawn), Square::ALL[0]); 4],
        lifted_len: 0,
        placed: [(Piece::new(Color::White, Role::Pawn), Square::ALL[0]); 3],
        placed_len: 0,
    };

    #[inline]
    pub(crate) fn lift(&mut self, piece: Piece, sq: Square) {
        if let Some(slot) = self.lifted.get_mut(self.lifted_len) {
            *slot = (piece, sq);
            self.lifted_len += 1;
        } else {
            debug_assert!(false, "a move with more pieces lifted than a castling");
        }
    }

    #[inline]
    pub(crate) fn place(&mut self, piece: Piece, sq: Square) {
        if let Some(slot) = self.placed.get_mut(self.placed_len) {
            *slot = (piece, sq);
            self.placed_len += 1;
        } else {
            debug_assert!(false, "a move with more pieces placed than a castling");
        }
    }
}

impl Accumulator {
    /// The sums of `board` from its pieces.
    pub fn fresh(net: &Net, board: &Board) -> Accumulator {
        Accumulator {
            views: Color::ALL.map(|view| net.view_sums(board, view)),
        }
    }

    /// The sums after the move `moved` lists was played on a board whose sums these were:
    /// `kings` holds each side's king's file after it. Returns the view to sum afresh (with
    /// [`Accumulator::refresh`]) when the mover's king crossed between the d and e files
    /// (read from where the list lifted it), which mirrors every input of its view.
    #[inline]
    #[must_use]
    pub(crate) fn play(
        &mut self,
        net: &Net,
        kings: [u8; 2],
        mover: Color,
        moved: &Placed,
    ) -> Option<Color> {
        let lifted = &moved.lifted[..moved.lifted_len];
        let placed = &moved.placed[..moved.placed_len];
        let wing = |file: u8| file < 4;
        let crossed = lifted.iter().any(|&(p, from)| {
            p.role == Role::King && wing(from.file_index()) != wing(kings[mover.index()])
        });
        let mut stale = None;
        for view in Color::ALL {
            if view == mover && crossed {
                stale = Some(view);
                continue;
            }
            let file = kings[view.index()];
            let index = |&(p, sq): &(Piece, Square)| feature(view, file, p.color, p.role, sq);
            let acc = &mut self.views[view.index()];
            match (lifted, placed) {
                // A quiet move or a capture: one pass over the row, as the compiler vectorises it.
                ([from], [to]) => {
                    let (a, b) = (&net.input[index(to)], &net.input[index(from)]);
                    for j in 0..HIDDEN {
                        acc[j] += a[j] - b[j];
                    }
                }
                ([from, taken], [to]) => {
                    let (a, b, c) = (
                        &net.input[index(to)],
                        &net.input[index(from)],
                        &net.input[index(taken)],
                    );
                    for j in 0..HIDDEN {
                        acc[j] += a[j] - b[j] - c[j];
                    }
                }
                _ => {
                    for f in placed.iter().map(index) {
                        acc.iter_mut().zip(&net.input[f]).for_each(|(a, w)| *a += w);
                    }
                    for f in lifted.iter().map(index) {
                        acc.iter_mut().zip(&net.input[f]).for_each(|(a, w)| *a -= w);
                    }
                }
            }
        }
        stale
    }

    /// Sums `view`'s view of `board` afresh.
    #[inline]
    pub(crate) fn refresh(&mut self, net: &Net, board: &Board, view: Color) {
        self.views[view.index()] = net.view_sums(board, view);
    }
}
