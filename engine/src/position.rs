//! The interface every board geometry implements. Perft, SAN, game-end detection, and later the
//! search, are written once against it and monomorphised per geometry: no dynamic dispatch per
//! node.

use std::fmt::{self, Debug, Display};
use std::hash::Hash;

use arrayvec::ArrayVec;

use crate::error::FenError;
use crate::types::{Castle, Color, Piece, Role};
use crate::variant::Rules;

/// Room for every legal move of any position of any variant (orthodox chess peaks at 218; the
/// Gustavian board with promoted pieces stays well below this).
pub const MAX_MOVES: usize = 512;

/// A fixed-capacity move list: no allocation in move generation.
pub type MoveList<M> = ArrayVec<M, MAX_MOVES>;

/// A square of some geometry, named as RULES.md names it (files from `a`, ranks from `1`).
pub trait SquareName: Copy + Eq + Hash + Debug + Display + Send + Sync + 'static {
    /// 0-based file (`a` = 0).
    fn file(self) -> u8;
    /// 0-based rank (`1` = 0).
    fn rank(self) -> u8;
}

/// What a move does, in geometry-independent terms: enough to write notation and statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveInfo<S> {
    /// The moving piece's square (the king's, for castling).
    pub from: S,
    /// Where the moving piece lands (the king's destination, for castling).
    pub to: S,
    /// The moving piece's kind.
    pub role: Role,
    /// The kind of piece captured, if any (a pawn for en passant).
    pub capture: Option<Role>,
    /// The promotion piece, if any.
    pub promotion: Option<Role>,
    /// The castling kind, if the move castles.
    pub castle: Option<Castle>,
    /// Whether this is an en-passant capture.
    pub en_passant: bool,
}

impl<S: SquareName> MoveInfo<S> {
    /// Coordinate (UCI-style) notation as RULES.md defines it: `e2e4`, `e7e8q`, `e1g1l`.
    pub fn uci(&self) -> String {
        let mut s = format!("{}{}", self.from, self.to);
        if let Some(p) = self.promotion {
            s.push(p.char());
        }
        if let Some(c) = self.castle {
            s.push_str(c.uci_suffix());
        }
        s
    }
}

impl<S: SquareName> Display for MoveInfo<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.uci())
    }
}

/// A position of one board geometry, with the rules of its variant and rule-set.
///
/// Implementations keep the Zobrist key incrementally; `recompute_key` is the from-scratch
/// reference the tests compare it with. The en-passant square is held only when an en-passant
/// capture is legal, so it counts in the key exactly when it matters (as python-chess does).
pub trait Position: Clone + Debug + PartialEq + Send + Sync + 'static {
    /// A square of this geometry.
    type Square: SquareName;
    /// A compact move of this geometry.
    type Move: Copy + Eq + Hash + Debug + Send + Sync + 'static;
    /// What `make_move` hands back for `unmake_move`.
    type Undo: Copy + Debug;

    /// Reads a FEN under `rules`, validating it fully.
    fn from_fen(rules: Rules, fen: &str) -> Result<Self, FenError>;
    /// Writes the FEN (castling letters and en passant as RULES.md prescribes).
    fn to_fen(&self) -> String;
    /// The variant and rule-set in force.
    fn rules(&self) -> Rules;
    /// The side to move.
    fn turn(&self) -> Color;
    /// The incrementally kept position key.
    fn key(&self) -> u64;
    /// The position key computed from scratch.
    fn recompute_key(&self) -> u64;
    /// Plies since the last capture or pawn move.
    fn halfmove_clock(&self) -> u32;
    /// The FEN full-move number.
    fn fullmove_number(&self) -> u32;
    /// Whether the side to move is in check.
    fn in_check(&self) -> bool;
    /// The piece on a square, if any.
    fn piece_at(&self, sq: Self::Square) -> Option<Piece>;
    /// Every square of the board (holes excluded).
    fn squares() -> &'static [Self::Square];

    /// Appends every legal move to `moves` (which is not cleared).
    fn legal_moves(&self, moves: &mut MoveList<Self::Move>);
    /// Appends the legal captures and promotions (what quiescence search plays). The
    /// default filters the full list; geometries override it with a cheaper generator.
    fn tactical_moves(&self, moves: &mut MoveList<Self::Move>) {
        let start = moves.len();
        self.legal_moves(moves);
        let mut keep = start;
        for i in start..moves.len() {
            let info = self.move_info(moves[i]);
            if info.capture.is_some() || info.promotion.is_some() {
                moves.swap(keep, i);
                keep += 1;
            }
        }
        moves.truncate(keep);
    }
    /// Plays a legal move.
    fn make_move(&mut self, mv: Self::Move) -> Self::Undo;
    /// Takes back the move `make_move` played.
    fn unmake_move(&mut self, mv: Self::Move, undo: Self::Undo);
    /// Describes a legal move of this position (call before playing it).
    fn move_info(&self, mv: Self::Move) -> MoveInfo<Self::Square>;

    /// Only kings, or king and one knight or bishop against a lone king.
    fn is_insufficient_material(&self) -> bool;
    /// An independent, slow answer to "is `color`'s king attacked?", used to test the fast
    /// legality logic: it walks every enemy piece's moves by brute force.
    fn king_attacked_slow(&self, color: Color) -> bool;

    /// The start position of `rules` with full castling rights.
    fn startpos(rules: Rules) -> Result<Self, FenError> {
        Self::from_fen(rules, rules.start_fen())
    }

    /// The legal moves in a fresh list.
    fn legal_move_list(&self) -> MoveList<Self::Move> {
        let mut moves = MoveList::new();
        self.legal_moves(&mut moves);
        moves
    }
}
