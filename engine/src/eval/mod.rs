//! What the search needs from a geometry beyond the rules: a static evaluation with tunable
//! weights, static exchange evaluation, and the null move. Implemented once per geometry,
//! called through generics (no dynamic dispatch per node). The evaluation terms themselves are
//! written once, generic over the board, in `terms`; what the boards keep for them through make
//! and unmake is in `sums`, and the pawn-structure cache in `pawns`.

mod pawns;
pub mod pst;
pub(crate) mod see;
pub mod squares;
pub(crate) mod sums;
pub(crate) mod terms;

pub use pawns::PawnCache;
pub use sums::{CorrectionKeys, EvalSums};

use crate::board8::net_file::{LoadedNet, NetFileError};
use crate::params::Params;
use crate::position::{MoveInfo, Position};
use crate::types::Role;
use crate::variant::Rules;

/// Phase weight of each role: a full set of non-pawn pieces on the 8x8 start board is
/// [`MAX_PHASE`].
pub const fn phase_weight(role: Role) -> i32 {
    match role {
        Role::Knight | Role::Bishop | Role::Secutor => 1,
        Role::Rook => 2,
        Role::Queen => 4,
        Role::Pawn | Role::King => 0,
    }
}

/// The phase of the opening position of orthodox chess: the middle-game end of the taper.
pub const MAX_PHASE: i32 = 24;

/// Blends middle-game and end-game scores by phase (clamped to [0, MAX_PHASE]).
#[inline]
pub fn taper(mg: i32, eg: i32, phase: i32) -> i32 {
    let p = phase.clamp(0, MAX_PHASE);
    (mg * p + eg * (MAX_PHASE - p)) / MAX_PHASE
}

/// Middle- and end-game material value of a role.
#[inline]
pub fn material(role: Role, p: &Params) -> (i32, i32) {
    match role {
        Role::Pawn => (p.pawn_mg, p.pawn_eg),
        Role::Knight => (p.knight_mg, p.knight_eg),
        Role::Bishop => (p.bishop_mg, p.bishop_eg),
        Role::Rook => (p.rook_mg, p.rook_eg),
        Role::Queen => (p.queen_mg, p.queen_eg),
        Role::Secutor => (p.secutor_mg, p.secutor_eg),
        Role::King => (0, 0),
    }
}

/// The value SEE and move ordering use for a captured piece.
#[inline]
pub fn see_value(role: Role, p: &Params) -> i32 {
    match role {
        Role::King => 20_000,
        r => material(r, p).0,
    }
}

/// Search-facing operations of a position.
pub trait SearchPosition: Position {
    /// What `make_null` hands back.
    type NullUndo: Copy;
    /// A network the evaluation can read instead of its rules' built-in one: a reference to
    /// one on the 8x8 board; on a board without networks a type with no values, so that no
    /// search of one can be handed a network.
    type Network: Copy + PartialEq + Send + Sync + std::fmt::Debug + 'static;

    /// The network of `loaded` for positions under `rules`; refused, naming why, when it
    /// cannot evaluate them (another game's network, a board without networks).
    fn network(loaded: &LoadedNet, rules: Rules) -> Result<Self::Network, NetFileError>;
    /// Evaluates with `network` from now on.
    fn use_network(&mut self, network: Self::Network);

    /// Static evaluation in centipawns from the side to move's point of view. `pawns` caches
    /// the pawn-structure features between calls (one per search thread); the result does not
    /// depend on what it holds.
    fn evaluate(&self, params: &Params, pawns: &mut PawnCache) -> i32 {
        self.evaluate_with(params, &pst::Table::new(params), pawns)
    }
    /// [`evaluate`](Self::evaluate) with the piece-square weights of `params` already laid
    /// out in `pst` (`pst::Table::new(params)`): the search builds them once per search
    /// instead of once per node.
    fn evaluate_with(&self, params: &Params, pst: &pst::Table, pawns: &mut PawnCache) -> i32;
    /// The evaluation's running sums, kept incrementally by make and unmake.
    fn eval_sums(&self) -> EvalSums;
    /// The same sums recomputed from the pieces: the reference `eval_sums` must equal, as
    /// `recompute_key` is for the key.
    fn recount_eval_sums(&self) -> EvalSums;
    /// Whether the exchange sequence started by `mv` on its target square wins at least
    /// `threshold` centipawns for the mover.
    fn see_ge(&self, mv: Self::Move, threshold: i32, params: &Params) -> bool {
        self.see_ge_info(self.move_info(mv), threshold, params)
    }
    /// [`see_ge`](Self::see_ge) of a move whose [`MoveInfo`] the caller already holds (the
    /// search has it for every move it orders or prunes), so it is not decoded again.
    fn see_ge_info(&self, info: MoveInfo<Self::Square>, threshold: i32, params: &Params) -> bool;
    /// Passes the turn (never called in check).
    fn make_null(&mut self) -> Self::NullUndo;
    /// Takes back `make_null`.
    fn unmake_null(&mut self, undo: Self::NullUndo);
    /// Whether the side to move has a piece other than pawns and king (null-move safety).
    fn has_non_pawn_material(&self) -> bool;
    /// The key the position will have after the move `info` describes, for prefetching its
    /// table bucket before the move is made (the probe's wait on memory was the biggest single
    /// cost of the search). Exact for the plain moves and captures that make most of a
    /// search; castling, en passant, double steps, promotions, Secutor collisions and changed
    /// castling rights may be missed, which only costs a useless prefetch.
    fn key_after(&self, info: &MoveInfo<Self::Square>) -> u64;
    /// A non-zero 32-bit code of a move, for the transposition table.
    fn move_code(mv: Self::Move) -> u32;
    /// A dense index below 128 of a square, for history tables.
    fn square_index(sq: Self::Square) -> usize;
}
