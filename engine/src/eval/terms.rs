//! The evaluation terms, written once for every board.
//!
//! The 8x8 board (`board8`, u64 bitboards) and the Gustavian board (`gustavian`, u128
//! bitboards on a 10x8 grid with holes) score a position with the same terms: tapered
//! material, piece-square shapes, mobility, minor pieces on outposts, rooks on open files,
//! bishop pair, threats (pieces attacked by cheaper ones, and pieces attacked and undefended),
//! the attack on the enemy king (its attackers and, once two attack, the zone squares they hit
//! and their safe checks), pawn structure, king shelter, castling. Written twice, the copies would drift apart with every tuning change, so the
//! terms live here once, in [`evaluate_side`].
//!
//! A board takes part by implementing [`EvalBoard`]: its piece sets, attack sets and file
//! masks behind one API ([`BitSet`] for its bitboard type), plus a few hooks where the
//! geometries genuinely differ (the Secutor, rook files on the Gustavian board, its corner
//! kings); the hooks' defaults are the orthodox 8x8 behaviour. [`evaluate`] is generic, not
//! `dyn`: it is monomorphised per board, so every board method is a static, inlinable call and
//! the code is as fast as the hand-written per-board evaluations it replaced.
//!
//! Nothing here loops over pieces just to sum them: material (from per-role counts) and the
//! piece-square sums come from the [`EvalSums`] the board keeps through make and unmake, and
//! the pawn-structure features from a [`PawnCache`]; the piece loops are left for what really
//! needs each piece's square (mobility, king attacks, rook files).

use std::ops::{BitAnd, BitOr, Not};

use super::pawns::{PawnCache, PawnCounts};
use super::pst;
use super::squares::{danger_attackers, danger_units, PasserFront, SquareTable, THREAT_CLASSES};
use super::sums::{recount, EvalSums};
use super::{material, taper};
use crate::params::Params;
use crate::position::SquareName;
use crate::types::{ByColor, Color, Role};

/// The set operations the terms need from a board's bitboard type, whose iteration yields
/// squares `Sq`. `!` may complement within the board's real squares only: the terms always
/// intersect its result with a set of real squares.
pub(crate) trait BitSet<Sq>:
    Copy + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self> + IntoIterator<Item = Sq>
{
    /// The empty set.
    const EMPTY: Self;
    /// Number of squares.
    fn count(self) -> u32;
    /// Whether no square is set.
    fn is_empty(self) -> bool;

    /// Whether some square is set.
    #[inline]
    fn nonempty(self) -> bool {
        !self.is_empty()
    }
}

/// What the evaluation terms need from a board: pieces, attack sets, masks, and the hooks
/// where the boards genuinely differ.
pub(crate) trait EvalBoard {
    /// A square of the board.
    type Square: SquareName;
    /// A set of squares of the board.
    type Bitboard: BitSet<Self::Square>;
    /// Files of the board (the doubled-pawn term visits each).
    const FILES: u8;

    /// The running sums the board keeps for the evaluation (see [`EvalSums`]).
    fn sums(&self) -> &EvalSums;
    /// `color`'s pieces.
    fn color_bb(&self, color: Color) -> Self::Bitboard;
    /// `color`'s pieces of `role`.
    fn pieces(&self, color: Color, role: Role) -> Self::Bitboard;
    /// Every occupied square.
    fn occupied(&self) -> Self::Bitboard;
    /// `color`'s king square.
    fn king(&self, color: Color) -> Self::Square;
    /// The role of the piece on `sq`, if any.
    fn role_at(&self, sq: Self::Square) -> Option<Role>;
    /// How many castling rights `color` still holds.
    fn castling_rights(&self, color: Color) -> i32;

    /// The set holding only `sq`.
    fn square_bb(sq: Self::Square) -> Self::Bitboard;
    /// The Zobrist key of a `color` piece of `role` on `sq` (the pawns' make the pawn key).
    fn zobrist(color: Color, role: Role, sq: Self::Square) -> u64;
    /// The piece-square features of `sq` for a `color` piece of `role`.
    fn pst(role: Role, sq: Self::Square, color: Color) -> pst::Features;
    /// The rank of `sq` counted from `color`'s side (0 = own back rank).
    fn relative_rank(color: Color, sq: Self::Square) -> u8;
    /// The (real) squares of a file.
    fn file_mask(file: u8) -> Self::Bitboard;
    /// The squares of the files next to `file`.
    fn adjacent_files(file: u8) -> Self::Bitboard;
    /// Squares strictly in front of `sq` from `color`'s side, on its file and the adjacent
    /// ones: where an enemy pawn stops a passer.
    fn passed_span(color: Color, sq: Self::Square) -> Self::Bitboard;
    /// `set` moved one rank forward from `color`'s side.
    fn forward(color: Color, set: Self::Bitboard) -> Self::Bitboard;
    /// Every square `color`'s `pawns` attack.
    fn pawn_attack_set(color: Color, pawns: Self::Bitboard) -> Self::Bitboard;
    /// Knight targets from `sq`.
    fn knight_attacks(sq: Self::Square) -> Self::Bitboard;
    /// Bishop attacks from `sq` under occupancy `occ`.
    fn bishop_attacks(sq: Self::Square, occ: Self::Bitboard) -> Self::Bitboard;
    /// Rook attacks from `sq` under occupancy `occ`.
    fn rook_attacks(sq: Self::Square, occ: Self::Bitboard) -> Self::Bitboard;
    /// Queen attacks from `sq` under occupancy `occ`.
    fn queen_attacks(sq: Self::Square, occ: Self::Bitboard) -> Self::Bitboard;
    /// King targets from `sq`.
    fn king_attacks(sq: Self::Square) -> Self::Bitboard;

    /// `color`'s Secutors; none on boards without them.
    #[inline]
    fn secutors(&self, _color: Color) -> Self::Bitboard {
        Self::Bitboard::EMPTY
    }

    /// A Secutor's rook-like slide from `sq` and the squares of `watch` its collision attacks
    /// hit; `None` on boards without Secutors. The evaluation only asks about a few squares
    /// (the enemy pieces and king zone), so a board can skip the legs that cannot reach them.
    #[inline]
    fn secutor_reach(
        _sq: Self::Square,
        _occ: Self::Bitboard,
        _watch: Self::Bitboard,
    ) -> Option<(Self::Bitboard, Self::Bitboard)> {
        None
    }

    /// The squares from which a Secutor could attack `sq` under some occupancy; none on
    /// boards without Secutors. SEE recomputes only the Secutors on it after each capture.
    #[inline]
    fn secutor_threats(_sq: Self::Square) -> Self::Bitboard {
        Self::Bitboard::EMPTY
    }

    /// Of `secutors`, those that attack `sq` under `occ`; none on boards without Secutors.
    /// Asked once per exchange step by SEE: a board can answer it far more cheaply than by
    /// computing each Secutor's whole attack set.
    #[inline]
    fn secutor_attackers(
        _sq: Self::Square,
        _secutors: Self::Bitboard,
        _occ: Self::Bitboard,
    ) -> Self::Bitboard {
        Self::Bitboard::EMPTY
    }

    /// Whether a rook on `file` earns the open and semi-open file bonuses.
    #[inline]
    fn rook_file_counts(_file: u8) -> bool {
        true
    }

    /// `color`'s (mg, eg) sum of the parts of `table` ([`squares`](super::squares)) that
    /// depend on the pawns and the two kings' squares alone (the pawns' and the king's
    /// squares and king cells, passed pawns, pawn shapes), before `SquareTableScale`: kept in
    /// the [`PawnCache`] under [`pawn_king_key`](Self::pawn_king_key). Asked only with the
    /// table [`learned_table`](Self::learned_table) gives.
    #[inline]
    fn pawn_king_table_sum(&self, _table: &SquareTable, _color: Color) -> (i32, i32) {
        (0, 0)
    }

    /// `color`'s (mg, eg) sum of the rest of what the board reads of `table` beyond the
    /// terms' mobility, danger and threats (the other pieces' squares and king cells, space,
    /// make-up, the pieces by the pawns on the board, the ending, the piece lead), before
    /// `SquareTableScale`. Asked only with the table [`learned_table`](Self::learned_table)
    /// gives.
    #[inline]
    fn square_table_sum(&self, _table: &SquareTable, _color: Color) -> (i32, i32) {
        (0, 0)
    }

    /// The key of the pawns of both sides and the two kings' squares: the pawn key with the
    /// kings' Zobrist keys.
    #[inline]
    fn pawn_king_key(&self) -> u64 {
        self.sums().pawn_key()
            ^ Self::zobrist(Color::White, Role::King, self.king(Color::White))
            ^ Self::zobrist(Color::Black, Role::King, self.king(Color::Black))
    }

    /// The learned table of the board's rules ([`squares`](super::squares)); `None` where
    /// the rules have none, and then the terms read no part of one.
    #[inline]
    fn learned_table(&self) -> Option<&'static SquareTable> {
        None
    }

    /// The small network's output for the side to move, in centipawns before `NetScale`
    /// ([`crate::board8::net`]); `None` where the rules have none.
    #[inline]
    fn net_output(&self) -> Option<i32> {
        None
    }

    /// The file whose pawns shelter a king on `sq`.
    #[inline]
    fn king_file(sq: Self::Square) -> u8 {
        sq.file()
    }
}

/// Static evaluation in centipawns from the point of view of `turn`, the side to move, with
/// the pawn-structure features from (and into) `pawns`.
#[inline]
pub(crate) fn evaluate<B: EvalBoard>(
    board: &B,
    turn: Color,
    p: &Params,
    table: &pst::Table,
    pawns: &mut PawnCache,
) -> i32 {
    debug_assert_eq!(*board.sums(), recount(board), "incremental evaluation sums");
    let [white_pawns, black_pawns] = pawns.probe(board);
    let learned = if p.square_table_scale != 0 {
        board.learned_table()
    } else {
        None
    };
    // The table with both sides' sums of its pawn-and-king parts, cached.
    let with_pawn_kings = learned.map(|t| (t, pawns.probe_learned(board, t)));
    let mut white = evaluate_side(board, Color::White, p, table, &white_pawns, with_pawn_kings);
    let mut black = evaluate_side(board, Color::Black, p, table, &black_pawns, with_pawn_kings);
    let (white_attacks, black_attacks) = (white.attacks, black.attacks);
    if let Some(t) = learned {
        for (side, color, attacks, defences, passers) in [
            (
                &mut white,
                Color::White,
                white_attacks,
                black_attacks,
                white_pawns.has_passers(),
            ),
            (
                &mut black,
                Color::Black,
                black_attacks,
                white_attacks,
                black_pawns.has_passers(),
            ),
        ] {
            let sum = &mut side.table;
            let mut learn = |value: (i32, i32)| {
                sum.0 += value.0;
                sum.1 += value.1;
            };
            let to_move = color == turn;
            threats(
                board,
                color,
                &side.classes,
                defences,
                |class, victim, defended| {
                    learn(t.threat_value(class, victim, defended));
                    if to_move {
                        learn(t.threat_stm_value(class, victim, defended));
                    }
                },
            );
            if passers {
                passer_fronts(board, color, attacks, defences, |front, rank| {
                    learn(t.passer_front_value(front, rank));
                });
            }
        }
    }
    let scaled = |side: &Side<B::Bitboard>| {
        (
            side.mg + side.table.0 * p.square_table_scale / 100,
            side.eg + side.table.1 * p.square_table_scale / 100,
        )
    };
    let ((wm, we), (bm, be)) = (scaled(&white), scaled(&black));
    let (wh, bh) = (
        hanging(board, Color::White, white_attacks, black_attacks),
        hanging(board, Color::Black, black_attacks, white_attacks),
    );
    let (wm, we) = (wm + p.hanging_mg * wh, we + p.hanging_eg * wh);
    let (bm, be) = (bm + p.hanging_mg * bh, be + p.hanging_eg * bh);
    let white = taper(wm - bm, we - be, board.sums().phase());
    let score = if turn == Color::White { white } else { -white };
    let net = if p.net_scale != 0 {
        board.net_output().map_or(0, |n| n * p.net_scale / 100)
    } else {
        0
    };
    score + net + p.tempo
}

/// How many of the enemy's pieces (pawns and king aside) `color` attacks (`attacks`) while no
/// enemy piece defends them (`defences`): one of them is lost unless the enemy spends its
/// move, and two cannot both be saved.
#[inline]
fn hanging<B: EvalBoard>(
    board: &B,
    color: Color,
    attacks: B::Bitboard,
    defences: B::Bitboard,
) -> i32 {
    let them = !color;
    let pieces =
        board.color_bb(them) & !board.pieces(them, Role::Pawn) & !board.pieces(them, Role::King);
    (pieces & attacks & !defences).count() as i32
}

/// What the piece loops of one side add up: mobility and the attackers of the enemy king's
/// zone.
#[derive(Default)]
struct Activity {
    mg: i32,
    eg: i32,
    attackers: i32,
    /// Squares of the enemy king's zone attacked, counted once per attacking piece.
    zone_hits: i32,
}

impl Activity {
    /// A piece reaching `reach`: an attacker of `zone` if it touches it, and `weights` per
    /// `safe` square beyond `centre` (fewer score below zero). Returns its safe squares.
    #[inline(always)]
    fn piece<S, T: BitSet<S>>(
        &mut self,
        reach: T,
        safe: T,
        zone: T,
        weights: (i32, i32),
        centre: i32,
    ) -> u32 {
        let hits = (reach & zone).count() as i32;
        if hits > 0 {
            self.attackers += 1;
            self.zone_hits += hits;
        }
        let n = (reach & safe).count();
        self.mg += weights.0 * (n as i32 - centre);
        self.eg += weights.1 * (n as i32 - centre);
        n
    }
}

/// (mg, eg) of `color`'s material, valued by `p`, from the board's piece counts.
#[inline]
fn material_of(sums: &EvalSums, color: Color, p: &Params) -> (i32, i32) {
    let (mut mg, mut eg) = (0, 0);
    for role in [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::Secutor,
    ] {
        let n = sums.count(color, role);
        let (m, e) = material(role, p);
        mg += n * m;
        eg += n * e;
    }
    (mg, eg)
}

/// (mg, eg) of `color`'s pieces from its own point of view; `pawns` are its pawn-structure
/// features, `learned` the learned table (if any) with both sides' cached sums of its
/// pawn-and-king parts. Every term is a sum over pieces, so visiting them role by role instead of square
/// by square leaves the result unchanged; the two integer divisions (the piece-square scale
/// and the king attack) see the same per-side totals as ever.
fn evaluate_side<B: EvalBoard>(
    board: &B,
    color: Color,
    p: &Params,
    table: &pst::Table,
    pawns: &PawnCounts,
    learned: Option<(&SquareTable, ByColor<(i32, i32)>)>,
) -> Side<B::Bitboard> {
    let them = !color;
    let sums = board.sums();
    let (mut mg, mut eg) = material_of(sums, color, p);
    let (pst_mg, pst_eg) = sums.pst(color, table);
    mg += pst_mg * p.pst_scale / 100;
    eg += pst_eg * p.pst_scale / 100;
    // The learned table's parts: summed apart and scaled once, as the fit models them.
    let (learned, mut table) = match learned {
        Some((t, pawn_king)) => {
            let (mg, eg) = board.square_table_sum(t, color);
            let (pawn_mg, pawn_eg) = pawn_king[color];
            (Some(t), (mg + pawn_mg, eg + pawn_eg))
        }
        None => (None, (0, 0)),
    };
    let mut learn = |value: (i32, i32)| {
        table.0 += value.0;
        table.1 += value.1;
    };

    let own = board.color_bb(color);
    let occ = board.occupied();
    let own_pawns = board.pieces(color, Role::Pawn);
    let their_pawns = board.pieces(them, Role::Pawn);
    let their_pawn_attacks = B::pawn_attack_set(them, their_pawns);
    let safe = !own & !their_pawn_attacks;
    let their_king = board.king(them);
    let zone = B::king_attacks(their_king) | B::square_bb(their_king);
    let mut act = Activity::default();
    // What each kind of piece attacks, for the threats and the checks below.
    let mut knight_reach = B::Bitboard::EMPTY;
    let mut bishop_reach = B::Bitboard::EMPTY;
    let mut rook_reach = B::Bitboard::EMPTY;
    let mut queen_reach = B::Bitboard::EMPTY;

    // An outpost: a square in the enemy's half, defended by an own pawn, that no enemy pawn
    // can ever attack. A minor piece there can only be driven off by a piece trade.
    let outpost = |sq: B::Square| {
        (3..=5).contains(&B::relative_rank(color, sq))
            && (own_pawns & B::pawn_attack_set(them, B::square_bb(sq))).nonempty()
            && (B::passed_span(color, sq) & B::adjacent_files(sq.file()) & their_pawns).is_empty()
    };
    for sq in board.pieces(color, Role::Knight) {
        let weights = (p.knight_mob_mg, p.knight_mob_eg);
        let reach = B::knight_attacks(sq);
        knight_reach = knight_reach | reach;
        let n = act.piece(reach, safe, zone, weights, 4);
        if let Some(t) = learned {
            learn(t.mobility_value(1, n));
        }
        if outpost(sq) {
            mg += p.knight_outpost_mg;
            eg += p.knight_outpost_eg;
        }
    }
    for sq in board.pieces(color, Role::Bishop) {
        let weights = (p.bishop_mob_mg, p.bishop_mob_eg);
        let reach = B::bishop_attacks(sq, occ);
        bishop_reach = bishop_reach | reach;
        let n = act.piece(reach, safe, zone, weights, 6);
        if let Some(t) = learned {
            learn(t.mobility_value(2, n));
        }
        if outpost(sq) {
            mg += p.bishop_outpost_mg;
            eg += p.bishop_outpost_eg;
        }
    }
    let minor_reach = knight_reach | bishop_reach;
    for sq in board.pieces(color, Role::Rook) {
        let weights = (p.rook_mob_mg, p.rook_mob_eg);
        let reach = B::rook_attacks(sq, occ);
        rook_reach = rook_reach | reach;
        let n = act.piece(reach, safe, zone, weights, 7);
        if let Some(t) = learned {
            learn(t.mobility_value(3, n));
        }
        if B::rook_file_counts(sq.file()) {
            let file = B::file_mask(sq.file());
            if (file & own_pawns).is_empty() {
                if (file & their_pawns).is_empty() {
                    mg += p.rook_open_mg;
                    eg += p.rook_open_eg;
                } else {
                    mg += p.rook_semi_mg;
                    eg += p.rook_semi_eg;
                }
            }
        }
    }
    for sq in board.pieces(color, Role::Queen) {
        let weights = (p.queen_mob_mg, p.queen_mob_eg);
        let reach = B::queen_attacks(sq, occ);
        queen_reach = queen_reach | reach;
        let n = act.piece(reach, safe, zone, weights, 13);
        if let Some(t) = learned {
            learn(t.mobility_value(4, n));
        }
    }
    let secutors = board.secutors(color);
    let mut secutor_reach = B::Bitboard::EMPTY;
    if secutors.nonempty() {
        // Its quiet slides are its mobility; the enemy pieces it could capture by collision
        // right now are a threat of their own.
        let victims = board.color_bb(them) & !board.pieces(them, Role::King);
        for sq in secutors {
            // Every piece, not only the victims: the hanging term needs the defended ones.
            let Some((slide, hits)) = B::secutor_reach(sq, occ, occ | zone) else {
                continue;
            };
            if (hits & zone).nonempty() {
                act.attackers += 1;
            }
            let n = (slide & !occ & !their_pawn_attacks).count() as i32;
            mg += p.secutor_mob_mg * (n - 7);
            eg += p.secutor_mob_eg * (n - 7);
            secutor_reach = secutor_reach | hits;
            let c = (hits & victims).count() as i32;
            mg += p.secutor_capture_mg * c;
            eg += p.secutor_capture_eg * c;
        }
    }
    mg += act.mg;
    eg += act.eg;

    // Threats: an enemy piece attacked by a cheaper one must move or be lost, and often
    // cannot do both for two at once. The search sees the one it plays out; these see them
    // at the leaves.
    let their_queens = board.pieces(them, Role::Queen);
    let their_majors = board.pieces(them, Role::Rook) | their_queens;
    let their_pieces = board.pieces(them, Role::Knight)
        | board.pieces(them, Role::Bishop)
        | their_majors
        | board.secutors(them);
    let by_pawn = (B::pawn_attack_set(color, own_pawns) & their_pieces).count() as i32;
    let by_minor = (minor_reach & their_majors).count() as i32;
    let by_rook = (rook_reach & their_queens).count() as i32;
    mg += p.threat_pawn_mg * by_pawn + p.threat_minor_mg * by_minor + p.threat_rook_mg * by_rook;
    eg += p.threat_pawn_eg * by_pawn + p.threat_minor_eg * by_minor + p.threat_rook_eg * by_rook;
    if sums.count(color, Role::Bishop) > 1 {
        mg += p.bishop_pair_mg;
        eg += p.bishop_pair_eg;
    }
    // Attacks on the enemy king's zone grow faster than linearly with the attackers.
    mg += p.king_attack_mg * act.attackers * act.attackers / 2;
    // Once two pieces join the attack, every zone square they hit and every check they can
    // give from a square no enemy pawn guards add to the danger: a lone attacker is parried,
    // a second one with checks in hand is how kings fall.
    if act.attackers >= 2 || learned.is_some() {
        let diagonals = B::bishop_attacks(their_king, occ);
        let lines = B::rook_attacks(their_king, occ);
        let checks = (knight_reach & B::knight_attacks(their_king))
            | (bishop_reach & diagonals)
            | (rook_reach & lines)
            | (queen_reach & (diagonals | lines));
        let safe_checks = (checks & safe).count() as i32;
        if act.attackers >= 2 {
            mg += p.king_zone_hit_mg * act.zone_hits + p.safe_check_mg * safe_checks;
        }
        if let Some(t) = learned {
            let row = danger_attackers(act.attackers);
            learn(t.danger_value(row, danger_units(act.zone_hits, safe_checks)));
        }
    }

    let (pawn_mg, pawn_eg) = pawns.score(p);
    mg += pawn_mg;
    eg += pawn_eg;
    if pawns.has_passers() {
        eg += passer_race(board, color, p);
    }

    // King safety: pawns in front of the king, an open king file, castling.
    let king = board.king(color);
    let near = B::king_attacks(king);
    let front = B::passed_span(color, king) & (near | B::forward(color, near));
    mg += p.shelter_mg * (front & own_pawns).count().min(3) as i32;
    if (B::file_mask(B::king_file(king)) & own_pawns).is_empty() {
        mg -= p.king_open_file_mg;
    }
    // The king starts on the e-file (8x8) or the f-file (Gustavian); castled means the back
    // rank away from the files d-f.
    if B::relative_rank(color, king) == 0 && !(3..=5).contains(&king.file()) {
        mg += p.castled_mg;
    }
    mg += p.castling_right_mg * board.castling_rights(color);
    let pawn_reach = B::pawn_attack_set(color, own_pawns);
    let attacks = pawn_reach | near | minor_reach | rook_reach | queen_reach | secutor_reach;
    Side {
        mg,
        eg,
        table,
        attacks,
        classes: [pawn_reach, minor_reach, rook_reach, queen_reach, near],
    }
}

/// What [`evaluate_side`] found of one side.
struct Side<T> {
    /// Middle-game score without the learned table.
    mg: i32,
    /// End-game score without the learned table.
    eg: i32,
    /// The learned table's (mg, eg) sum so far, before `SquareTableScale`.
    table: (i32, i32),
    /// Every square the side attacks.
    attacks: T,
    /// What its pawns, minor pieces, rooks, queens and king attack (see [`threats`]).
    classes: [T; THREAT_CLASSES],
}

/// What each class of `color`'s pieces attacks, in the order of [`threats`]'s classes: the
/// sets the evaluation gathers as it scores mobility, for the fit, which reads positions
/// without it.
pub(crate) fn attack_classes<B: EvalBoard>(
    board: &B,
    color: Color,
) -> [B::Bitboard; THREAT_CLASSES] {
    let occ = board.occupied();
    let mut classes = [B::Bitboard::EMPTY; THREAT_CLASSES];
    classes[0] = B::pawn_attack_set(color, board.pieces(color, Role::Pawn));
    for sq in board.pieces(color, Role::Knight) {
        classes[1] = classes[1] | B::knight_attacks(sq);
    }
    for sq in board.pieces(color, Role::Bishop) {
        classes[1] = classes[1] | B::bishop_attacks(sq, occ);
    }
    for sq in board.pieces(color, Role::Rook) {
        classes[2] = classes[2] | B::rook_attacks(sq, occ);
    }
    for sq in board.pieces(color, Role::Queen) {
        classes[3] = classes[3] | B::queen_attacks(sq, occ);
    }
    classes[4] = B::king_attacks(board.king(color));
    classes
}

/// Calls `f(class, victim, defended)` for each enemy knight, bishop, rook and queen (victims
/// 0..3) that `color` attacks, with the cheapest class of its attackers (`classes`: what
/// [`attack_classes`] gives) and whether any enemy piece defends it (`defences`). The learned
/// table values each: which piece attacks which, and whether the victim can be retaken.
#[inline(always)]
pub(crate) fn threats<B: EvalBoard>(
    board: &B,
    color: Color,
    classes: &[B::Bitboard; THREAT_CLASSES],
    defences: B::Bitboard,
    mut f: impl FnMut(usize, usize, bool),
) {
    let attacked = classes.iter().fold(B::Bitboard::EMPTY, |a, &c| a | c);
    let them = !color;
    for (victim, role) in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
        .into_iter()
        .enumerate()
    {
        for sq in board.pieces(them, role) & attacked {
            let at = B::square_bb(sq);
            if let Some(class) = classes.iter().position(|&c| (c & at).nonempty()) {
                f(class, victim, (defences & at).nonempty());
            }
        }
    }
}

/// Calls `f(front, rank)` for each of `color`'s passed pawns with what stands before it
/// ([`PasserFront`], from the side's attacks `own` and the enemy's `theirs`) and its rank
/// from its own side. The learned table values each: the pawn cache knows the passers but
/// not the pieces that stop or escort them.
#[inline(always)]
pub(crate) fn passer_fronts<B: EvalBoard>(
    board: &B,
    color: Color,
    own: B::Bitboard,
    theirs: B::Bitboard,
    mut f: impl FnMut(PasserFront, usize),
) {
    let their_pawns = board.pieces(!color, Role::Pawn);
    let occ = board.occupied();
    for sq in board.pieces(color, Role::Pawn) {
        if (B::passed_span(color, sq) & their_pawns).nonempty() {
            continue;
        }
        let stop = B::forward(color, B::square_bb(sq));
        let front = if (stop & occ).nonempty() {
            PasserFront::Blocked
        } else if (stop & theirs).is_empty() {
            PasserFront::Free
        } else if (stop & own).nonempty() {
            PasserFront::Contested
        } else {
            PasserFront::Stopped
        };
        f(front, usize::from(B::relative_rank(color, sq)));
    }
}

/// Chebyshev distance: king moves between two squares (holes aside).
#[inline]
fn distance<S: SquareName>(a: S, b: S) -> i32 {
    let df = (i32::from(a.file()) - i32::from(b.file())).abs();
    let dr = (i32::from(a.rank()) - i32::from(b.rank())).abs();
    df.max(dr)
}

/// End-game worth of `color`'s passed pawns beyond their rank (which the pawn cache scores):
/// a passer far from the enemy king and escorted by its own runs; a blocked one does not. The
/// pieces move every ply, so this cannot live in the pawn cache; each term grows with how far
/// the pawn has come.
fn passer_race<B: EvalBoard>(board: &B, color: Color, p: &Params) -> i32 {
    let them = !color;
    let their_pawns = board.pieces(them, Role::Pawn);
    let occ = board.occupied();
    let (own_king, their_king) = (board.king(color), board.king(them));
    let mut eg = 0;
    for sq in board.pieces(color, Role::Pawn) {
        if (B::passed_span(color, sq) & their_pawns).nonempty() {
            continue;
        }
        let w = i32::from(B::relative_rank(color, sq)) - 1;
        if w <= 0 {
            continue;
        }
        eg += w
            * (p.passer_their_king_eg * distance(their_king, sq)
                - p.passer_own_king_eg * distance(own_king, sq));
        if (B::forward(color, B::square_bb(sq)) & occ).nonempty() {
            eg -= w * p.passer_blocked_eg;
        }
    }
    eg
}
