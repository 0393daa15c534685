//! Static exchange evaluation, written once for every board.
//!
//! The swap algorithm on a move's target square: each side in turn recaptures with its least
//! valuable attacker, and the balance says whether the exchange wins at least a threshold. It
//! needs nothing but what the evaluation already asks of a board ([`EvalBoard`]), so the 8x8
//! and the Gustavian board share it instead of keeping two copies that drift apart.
//!
//! The one place the boards differ is what a capture reveals. Ordinary sliders behind the
//! piece that left are found by an x-ray from the target square; a Secutor's capture bends at
//! its collision points, which any capture may move, so the Secutors that could ever reach the
//! target (the board's `secutor_threats`) have their attacks recomputed after each capture
//! (the target square always stays occupied). The rest of the attackers never need that.

use super::see_value;
use super::terms::{BitSet, EvalBoard};
use crate::params::Params;
use crate::position::MoveInfo;
use crate::types::{Color, Role};

/// The roles that may recapture, in ascending order of their default values (the Secutor,
/// on boards that have it, is tried after the bishop); the king, which may only take last,
/// is handled apart.
const CAPTURERS: [Role; 5] = [
    Role::Pawn,
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
];

/// Whether the exchange that `mv` starts on its target square wins at least `threshold`
/// centipawns for `turn`, the side making it.
pub(crate) fn see_ge<B: EvalBoard>(
    board: &B,
    turn: Color,
    mv: MoveInfo<B::Square>,
    threshold: i32,
    p: &Params,
) -> bool {
    swap::<B, false>(board, turn, mv, threshold, p)
}

/// [`see_ge`] as the swap it is; with `FULL`, every attacker is recomputed from scratch after
/// each capture: the reference the tests hold the incremental attackers to.
fn swap<B: EvalBoard, const FULL: bool>(
    board: &B,
    turn: Color,
    mv: MoveInfo<B::Square>,
    threshold: i32,
    p: &Params,
) -> bool {
    if mv.castle.is_some() {
        return threshold <= 0;
    }
    let mut swap = mv.capture.map_or(0, |v| see_value(v, p)) - threshold;
    if swap < 0 {
        return false;
    }
    swap = see_value(mv.role, p) - swap;
    if swap <= 0 {
        return true;
    }
    let to_bb = B::square_bb(mv.to);
    let mut occ = (board.occupied() & !B::square_bb(mv.from)) | to_bb;
    if mv.en_passant {
        // The captured pawn stands one rank behind the target, seen from the mover.
        occ = occ & !B::forward(!turn, to_bb);
    }
    // The Secutors that could ever attack the target: after a capture only they need their
    // attacks recomputed, every other attacker is found by the x-ray.
    let secutors =
        (board.secutors(Color::White) | board.secutors(Color::Black)) & B::secutor_threats(mv.to);
    let mut attackers = attackers_to(board, mv.to, occ);
    let mut stm = turn;
    let mut res = true;
    loop {
        stm = !stm;
        let ours = attackers & board.color_bb(stm);
        let Some((sq, role)) = least_valuable(board, ours, stm, p) else {
            break;
        };
        res = !res;
        if role == Role::King {
            // The king may take only if nothing defends the square any more.
            return if (attackers & board.color_bb(!stm)).nonempty() {
                !res
            } else {
                res
            };
        }
        swap = see_value(role, p) - swap;
        if swap < i32::from(res) {
            break;
        }
        occ = occ & !B::square_bb(sq);
        if FULL {
            attackers = attackers_to(board, mv.to, occ);
            continue;
        }
        attackers = attackers & occ | x_rays(board, mv.to, occ, role);
        if secutors.nonempty() {
            // A capture can bend, open or close a Secutor's path to the target (its
            // collision points move), so theirs are recomputed from scratch.
            attackers = attackers & !secutors | B::secutor_attackers(mv.to, secutors & occ, occ);
        }
    }
    res
}

/// Every piece of either colour on `occ` that attacks `sq` under `occ`.
fn attackers_to<B: EvalBoard>(board: &B, sq: B::Square, occ: B::Bitboard) -> B::Bitboard {
    let both = |role| board.pieces(Color::White, role) | board.pieces(Color::Black, role);
    let target = B::square_bb(sq);
    let queens = both(Role::Queen);
    let secutors = (board.secutors(Color::White) | board.secutors(Color::Black)) & occ;
    let out = (B::pawn_attack_set(Color::Black, target) & board.pieces(Color::White, Role::Pawn))
        | (B::pawn_attack_set(Color::White, target) & board.pieces(Color::Black, Role::Pawn))
        | (B::knight_attacks(sq) & both(Role::Knight))
        | (B::king_attacks(sq) & both(Role::King))
        | (B::bishop_attacks(sq, occ) & (both(Role::Bishop) | queens))
        | (B::rook_attacks(sq, occ) & (both(Role::Rook) | queens))
        | B::secutor_attackers(sq, secutors, occ);
    out & occ
}

/// The sliders a capture by `role` uncovers behind it on `sq`'s lines: a pawn, bishop or
/// queen leaves a diagonal, a rook or queen a file or rank, a Secutor (whose capture bends,
/// so it may have stood on either kind of line) either. A knight never stands between a
/// slider and the square it attacks, and the king captures last.
fn x_rays<B: EvalBoard>(board: &B, sq: B::Square, occ: B::Bitboard, role: Role) -> B::Bitboard {
    let both = |role| board.pieces(Color::White, role) | board.pieces(Color::Black, role);
    let mut out = B::Bitboard::EMPTY;
    if matches!(
        role,
        Role::Pawn | Role::Bishop | Role::Queen | Role::Secutor
    ) {
        out = out | (B::bishop_attacks(sq, occ) & (both(Role::Bishop) | both(Role::Queen)));
    }
    if matches!(role, Role::Rook | Role::Queen | Role::Secutor) {
        out = out | (B::rook_attacks(sq, occ) & (both(Role::Rook) | both(Role::Queen)));
    }
    out & occ
}

/// The least valuable of `color`'s pieces in `set`, by the SEE values of `p` (tuning may
/// reorder the pieces' values; a Secutor sits wherever its value puts it), the king last.
fn least_valuable<B: EvalBoard>(
    board: &B,
    set: B::Bitboard,
    color: Color,
    p: &Params,
) -> Option<(B::Square, Role)> {
    let mut best: Option<(B::Square, Role)> = None;
    let mut best_value = i32::MAX;
    let mut consider = |pieces: B::Bitboard, role: Role| {
        if let Some(sq) = (set & pieces).into_iter().next() {
            let v = see_value(role, p);
            if v < best_value {
                best = Some((sq, role));
                best_value = v;
            }
        }
    };
    for role in CAPTURERS {
        consider(board.pieces(color, role), role);
        if role == Role::Bishop {
            consider(board.secutors(color), Role::Secutor);
        }
    }
    best.or_else(|| {
        (set & board.pieces(color, Role::King))
            .into_iter()
            .next()
            .map(|sq| (sq, Role::King))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gustavian::Position;
    use crate::position::Position as _;
    use crate::variant::Rules;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// On random Secutor games, the exchange found with the attackers kept by x-rays and the
    /// Secutors' recomputation agrees with recomputing every attacker after every capture,
    /// for every move and a spread of thresholds.
    #[test]
    fn incremental_attackers_agree_with_recomputing_them() {
        let p = Params::default();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut compared = 0usize;
        for ruleset in ["extended", "orthodox"] {
            let rules = Rules::parse("secutor", Some(ruleset)).expect("a shipped rule-set");
            for _ in 0..40 {
                let mut pos = Position::startpos(rules).expect("the start position");
                for _ in 0..80 {
                    let moves = pos.legal_move_list();
                    if moves.is_empty() {
                        break;
                    }
                    for &mv in &moves {
                        let info = pos.move_info(mv);
                        for threshold in [-500, -150, -1, 0, 1, 100, 300, 600] {
                            let fast =
                                swap::<Position, false>(&pos, pos.turn(), info, threshold, &p);
                            let full =
                                swap::<Position, true>(&pos, pos.turn(), info, threshold, &p);
                            assert_eq!(fast, full, "{} {mv:?} >= {threshold}", pos.to_fen());
                            compared += usize::from(info.capture.is_some());
                        }
                    }
                    let mv = moves[rng.gen_range(0..moves.len())];
                    pos.make_move(mv);
                }
            }
        }
        assert!(compared > 10_000, "only {compared} captures compared");
    }
}
