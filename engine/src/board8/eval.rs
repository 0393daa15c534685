//! Evaluation, SEE and the null move for the 8x8 board (`chess` and `latte`). The evaluation
//! terms live in `eval::terms`, shared with the Gustavian board; here is what they need from
//! this board.

use super::attacks;
use super::board::Board;
use super::castling::Letter;
use super::learned::{Feature, FeatureSink};
use super::moves::Move;
use super::net_file::{LoadedNet, NetFileError, NetRef};
use super::square::{Bitboard, Square};
use super::zobrist;
use crate::eval::squares::SquareTable;
use crate::eval::sums::recount;
use crate::eval::terms::{self, BitSet, EvalBoard};
use crate::eval::{pst, see, EvalSums, PawnCache, SearchPosition};
use crate::params::Params;
use crate::position::MoveInfo;
use crate::types::{Color, Piece, Role};
use crate::variant::Rules;

/// Piece-square features from White's side, per role index (pawn..king).
static PST: [[pst::Features; 64]; 6] = {
    let roles = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];
    let mut t = [[[0; pst::SLOTS]; 64]; 6];
    let mut r = 0;
    while r < 6 {
        let mut sq = 0;
        while sq < 64 {
            t[r][sq] = pst::features(roles[r], (sq % 8) as i32, (sq / 8) as i32, 8);
            sq += 1;
        }
        r += 1;
    }
    t
};

/// [`PST`] per colour, indexed by the real square: what `put` and `remove` add and subtract.
static PST_BY_COLOR: [[[pst::Features; 64]; 6]; 2] = {
    let mut t = [[[[0; pst::SLOTS]; 64]; 6]; 2];
    let mut r = 0;
    while r < 6 {
        let mut sq = 0;
        while sq < 64 {
            t[0][r][sq] = PST[r][sq];
            // The rank mirrored: Black's own side is the top of the board.
            t[1][r][sq] = PST[r][sq ^ 56];
            sq += 1;
        }
        r += 1;
    }
    t
};

/// Piece-square features of `piece` on `sq`, from its own side.
#[inline(always)]
pub(super) fn piece_square(piece: Piece, sq: Square) -> pst::Features {
    PST_BY_COLOR[piece.color.index()][piece.role.index()][sq.index()]
}

/// Files adjacent to each file.
static ADJACENT_FILES: [Bitboard; 8] = {
    let mut t = [Bitboard::EMPTY; 8];
    let mut f = 0;
    while f < 8 {
        let mut b = 0u64;
        if f > 0 {
            b |= Bitboard::file(f - 1).0;
        }
        if f < 7 {
            b |= Bitboard::file(f + 1).0;
        }
        t[f as usize] = Bitboard(b);
        f += 1;
    }
    t
};

/// `color`'s (mg, eg) of `table`'s values of its pieces of `roles` by square (read from its
/// king's wing) and, for all but the king, by their cells from either king.
#[inline(always)]
fn role_table_sum(board: &Board, table: &SquareTable, color: Color, roles: &[Role]) -> (i32, i32) {
    use crate::eval::squares::{king_cell, king_side, ENEMY_KING, KING_ROLES, OWN_KING};
    let own = board.king_of(color);
    let king_file = own.file_index();
    // Both kings' squares from this side's pieces' side, as the king table reads them.
    let own = own.relative(color).index();
    let enemy = board.king_of(!color).relative(color).index();
    let (mut mg, mut eg) = (0, 0);
    for role in roles {
        let r = role.index();
        let near_king = r < KING_ROLES;
        for sq in Board::pieces(board, color, *role) {
            let relative = sq.relative(color).index();
            let (m, e) = table.value(*role, king_side(relative, king_file));
            mg += m;
            eg += e;
            if near_king {
                let (m, e) = table.king_value(OWN_KING, r, king_cell(relative, own));
                let (m2, e2) = table.king_value(ENEMY_KING, r, king_cell(relative, enemy));
                mg += m + m2;
                eg += e + e2;
            }
        }
    }
    (mg, eg)
}

/// `table`'s (mg, eg) value of one of a side's [`Feature`]s.
#[inline(always)]
fn feature_value(table: &SquareTable, feature: Feature) -> (i32, i32) {
    match feature {
        Feature::Pawn(shape, relative) => table.pawn_value(shape, relative),
        Feature::Space { many, safe } => table.space_value(many, safe),
        Feature::Imbalance(minors, rooks, queens) => table.imbalance_value(minors, rooks, queens),
        Feature::Passer {
            relative,
            own,
            enemy,
        } => table.passer_value(relative, own, enemy),
        Feature::BoardPawns { role_index, pawns } => table.board_pawns_value(role_index, pawns),
        Feature::Ending(ending, lead) => table.ending_value(ending, lead),
        Feature::PieceLead { lead, pawns } => table.piece_lead_value(lead, pawns),
        Feature::WholeLead { lead, wings } => table.whole_lead_value(lead, wings),
    }
}

/// The (mg, eg) sum of `table`'s values of the features it is given.
struct TableSum<'a> {
    table: &'a SquareTable,
    mg: i32,
    eg: i32,
}

impl FeatureSink for TableSum<'_> {
    #[inline(always)]
    fn feature(&mut self, feature: Feature) {
        let (m, e) = feature_value(self.table, feature);
        self.mg += m;
        self.eg += e;
    }
}

impl BitSet<Square> for Bitboard {
    const EMPTY: Bitboard = Bitboard::EMPTY;
    #[inline]
    fn count(self) -> u32 {
        Bitboard::count(self)
    }
    #[inline]
    fn is_empty(self) -> bool {
        Bitboard::is_empty(self)
    }
}

/// The orthodox board: every hook keeps its default.
impl EvalBoard for Board {
    type Square = Square;
    type Bitboard = Bitboard;
    const FILES: u8 = 8;

    #[inline]
    fn sums(&self) -> &EvalSums {
        &self.sums
    }
    #[inline]
    fn color_bb(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }
    #[inline]
    fn pieces(&self, color: Color, role: Role) -> Bitboard {
        Board::pieces(self, color, role)
    }
    #[inline]
    fn occupied(&self) -> Bitboard {
        self.occupied
    }
    #[inline]
    fn king(&self, color: Color) -> Square {
        self.king_of(color)
    }
    #[inline]
    fn role_at(&self, sq: Square) -> Option<Role> {
        self.at(sq).map(|piece| piece.role)
    }
    #[inline]
    fn castling_rights(&self, color: Color) -> i32 {
        Letter::ALL
            .iter()
            .filter(|&&l| self.castling.has(color, l))
            .count() as i32
    }

    #[inline]
    fn pawn_king_table_sum(&self, table: &SquareTable, color: Color) -> (i32, i32) {
        let (mg, eg) = role_table_sum(self, table, color, &[Role::Pawn, Role::King]);
        let mut sum = TableSum { table, mg, eg };
        super::learned::pawn_features(self, color, &mut sum);
        (sum.mg, sum.eg)
    }

    #[inline]
    fn square_table_sum(&self, table: &SquareTable, color: Color) -> (i32, i32) {
        let roles = [Role::Knight, Role::Bishop, Role::Rook, Role::Queen];
        let (mg, eg) = role_table_sum(self, table, color, &roles);
        let mut sum = TableSum { table, mg, eg };
        super::learned::piece_features(self, color, &mut sum);
        (sum.mg, sum.eg)
    }

    #[inline]
    fn learned_table(&self) -> Option<&'static SquareTable> {
        super::tables::fitted(self.rules)
    }

    #[inline]
    fn net_output(&self) -> Option<i32> {
        self.network
            .map(|n| n.net().evaluate_kept(&self.net, self.turn))
    }

    #[inline]
    fn square_bb(sq: Square) -> Bitboard {
        sq.bb()
    }
    #[inline]
    fn zobrist(color: Color, role: Role, sq: Square) -> u64 {
        zobrist::piece(Piece::new(color, role), sq.index())
    }
    #[inline]
    fn pst(role: Role, sq: Square, color: Color) -> pst::Features {
        PST[role.index()][sq.relative(color).index()]
    }
    #[inline]
    fn relative_rank(color: Color, sq: Square) -> u8 {
        sq.relative(color).rank_index()
    }
    #[inline]
    fn file_mask(file: u8) -> Bitboard {
        Bitboard::file(file)
    }
    #[inline]
    fn adjacent_files(file: u8) -> Bitboard {
        ADJACENT_FILES[file as usize]
    }
    #[inline]
    fn passed_span(color: Color, sq: Square) -> Bitboard {
        let files = Bitboard::file(sq.file_index()) | ADJACENT_FILES[sq.file_index() as usize];
        let rank = sq.rank_index() as u32;
        let ahead = match color {
            Color::White => {
                if rank >= 7 {
                    0
                } else {
                    !0u64 << (8 * (rank + 1))
                }
            }
            Color::Black => (1u64 << (8 * rank)) - 1,
        };
        files & Bitboard(ahead)
    }
    #[inline]
    fn forward(color: Color, set: Bitboard) -> Bitboard {
        set.forward(color)
    }
    #[inline]
    fn pawn_attack_set(color: Color, pawns: Bitboard) -> Bitboard {
        let not_a = !Bitboard::file(0);
        let not_h = !Bitboard::file(7);
        match color {
            Color::White => Bitboard(((pawns & not_a).0 << 7) | ((pawns & not_h).0 << 9)),
            Color::Black => Bitboard(((pawns & not_a).0 >> 9) | ((pawns & not_h).0 >> 7)),
        }
    }
    #[inline]
    fn knight_attacks(sq: Square) -> Bitboard {
        attacks::knight(sq)
    }
    #[inline]
    fn bishop_attacks(sq: Square, occ: Bitboard) -> Bitboard {
        attacks::bishop(sq, occ)
    }
    #[inline]
    fn rook_attacks(sq: Square, occ: Bitboard) -> Bitboard {
        attacks::rook(sq, occ)
    }
    #[inline]
    fn queen_attacks(sq: Square, occ: Bitboard) -> Bitboard {
        attacks::queen(sq, occ)
    }
    #[inline]
    fn king_attacks(sq: Square) -> Bitboard {
        attacks::king(sq)
    }
}

impl SearchPosition for Board {
    type NullUndo = Option<Square>;
    type Network = NetRef;

    fn network(loaded: &LoadedNet, rules: Rules) -> Result<NetRef, NetFileError> {
        loaded.for_rules(rules)
    }

    fn use_network(&mut self, network: NetRef) {
        Board::use_network(self, network);
    }

    fn evaluate_with(&self, p: &Params, pst: &pst::Table, pawns: &mut PawnCache) -> i32 {
        terms::evaluate(self, self.turn, p, pst, pawns)
    }

    fn eval_sums(&self) -> EvalSums {
        self.sums
    }

    fn recount_eval_sums(&self) -> EvalSums {
        recount(self)
    }

    fn see_ge_info(&self, info: MoveInfo<Square>, threshold: i32, p: &Params) -> bool {
        see::see_ge(self, self.turn, info, threshold, p)
    }

    fn make_null(&mut self) -> Option<Square> {
        let ep = self.ep.take();
        if let Some(sq) = ep {
            self.key ^= zobrist::KEYS.ep_file[sq.file_index() as usize];
        }
        self.turn = !self.turn;
        self.key ^= zobrist::KEYS.black;
        ep
    }

    fn unmake_null(&mut self, ep: Option<Square>) {
        self.turn = !self.turn;
        self.key ^= zobrist::KEYS.black;
        if let Some(sq) = ep {
            self.key ^= zobrist::KEYS.ep_file[sq.file_index() as usize];
        }
        self.ep = ep;
    }

    fn has_non_pawn_material(&self) -> bool {
        let us = self.color_bb(self.turn);
        (us & !self.role_bb(Role::Pawn) & !self.role_bb(Role::King)).nonempty()
    }

    #[inline]
    fn key_after(&self, info: &MoveInfo<Square>) -> u64 {
        let us = self.turn;
        let landed = info.promotion.unwrap_or(info.role);
        let mut key = self.key
            ^ zobrist::KEYS.black
            ^ zobrist::piece(Piece::new(us, info.role), info.from.index())
            ^ zobrist::piece(Piece::new(us, landed), info.to.index());
        if let Some(victim) = info.capture.filter(|_| !info.en_passant) {
            key ^= zobrist::piece(Piece::new(!us, victim), info.to.index());
        }
        if let Some(ep) = self.ep {
            key ^= zobrist::KEYS.ep_file[ep.file_index() as usize];
        }
        key
    }

    fn move_code(mv: Move) -> u32 {
        u32::from(mv.bits()) | 1 << 16
    }

    fn square_index(sq: Square) -> usize {
        sq.index()
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::*;
    use crate::board8::net_file::NetRef;
    use crate::eval::see_value;
    use crate::position::Position as _;

    /// The FEN of the colour-flipped position: ranks mirrored, colours and turn swapped, each
    /// side's castling letters given to the other.
    fn flip_fen(fen: &str) -> String {
        let f: Vec<&str> = fen.split_whitespace().collect();
        let swap = |c: char| {
            if c.is_ascii_uppercase() {
                c.to_ascii_lowercase()
            } else {
                c.to_ascii_uppercase()
            }
        };
        let board: Vec<String> = f[0]
            .split('/')
            .rev()
            .map(|r| r.chars().map(swap).collect())
            .collect();
        let turn = if f[1] == "w" { "b" } else { "w" };
        let castling = if f[2] == "-" {
            "-".to_string()
        } else {
            let white: String = f[2].chars().filter(char::is_ascii_uppercase).collect();
            let black: String = f[2].chars().filter(char::is_ascii_lowercase).collect();
            format!(
                "{}{}",
                black.to_ascii_uppercase(),
                white.to_ascii_lowercase()
            )
        };
        let ep = if f[3] == "-" {
            "-".to_string()
        } else {
            let b = f[3].as_bytes();
            format!("{}{}", b[0] as char, (b'1' + b'8' - b[1]) as char)
        };
        format!(
            "{} {turn} {castling} {ep} {}",
            board.join("/"),
            f[4..].join(" ")
        )
    }

    /// Every (rules, FEN) of the chess and Latte perft suites.
    fn suite() -> Vec<(Rules, String)> {
        let mut out = Vec::new();
        for text in [
            include_str!("../../tests/data/perft/chess.jsonl"),
            include_str!("../../tests/data/perft/latte.jsonl"),
        ] {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let v: serde_json::Value = serde_json::from_str(line).expect("perft record");
                let variant = v["variant"].as_str().expect("variant");
                let ruleset = v["ruleset"].as_str().filter(|r| !r.is_empty());
                let rules = Rules::parse(variant, ruleset).expect("known rules");
                out.push((rules, v["fen"].as_str().expect("fen").to_string()));
            }
        }
        out.sort_by(|a, b| a.1.cmp(&b.1));
        out.dedup_by(|a, b| a.1 == b.1);
        assert!(out.len() > 50, "{}", out.len());
        out
    }

    /// White's evaluation of `fen` (chess) under `params`.
    fn white_eval(fen: &str, params: &Params) -> i32 {
        let rules = Rules::parse("chess", None).expect("chess");
        let b = Board::from_fen(rules, fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        b.evaluate(params, &mut PawnCache::new())
    }

    /// The SEE of the move `uci` in the chess position `fen`, as the largest threshold it
    /// passes, checked one centipawn either side of `expected`.
    fn assert_see(fen: &str, uci: &str, expected: i32, params: &Params) {
        let rules = Rules::parse("chess", None).expect("chess");
        let b = Board::from_fen(rules, fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        let mv = b
            .legal_move_list()
            .into_iter()
            .find(|&m| b.move_info(m).uci() == uci)
            .unwrap_or_else(|| panic!("{uci} is not legal in {fen}"));
        assert!(
            b.see_ge(mv, expected, params),
            "{fen} {uci}: below {expected}"
        );
        assert!(
            !b.see_ge(mv, expected + 1, params),
            "{fen} {uci}: above {expected}"
        );
    }

    /// The exchange rules of the shared SEE on the 8x8 board, each expected value built from
    /// the parameters' piece values.
    #[test]
    fn see_cases() {
        let params = Params::default();
        let v = |role| see_value(role, &params);
        // An undefended pawn.
        assert_see(
            "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1",
            "e1e5",
            v(Role::Pawn),
            &params,
        );
        // A knight defended by a pawn, taken by a pawn.
        assert_see(
            "4k3/8/3p4/4n3/3P4/8/8/4K3 w - - 0 1",
            "d4e5",
            v(Role::Knight) - v(Role::Pawn),
            &params,
        );
        // A queen taking a defended pawn loses herself for it.
        assert_see(
            "4k3/8/3p4/4p3/8/8/8/4QK2 w - - 0 1",
            "e1e5",
            v(Role::Pawn) - v(Role::Queen),
            &params,
        );
        // Black's second rook is revealed only when the first recaptures (an x-ray), and it
        // makes White's rook recapture pointless: knight for pawn. Without it White would win
        // the rook, so Black would not take the knight at all.
        assert_see(
            "4r1k1/4r3/8/4p3/8/5N2/8/4R1K1 w - - 0 1",
            "f3e5",
            v(Role::Pawn) - v(Role::Knight),
            &params,
        );
        // The rook behind the capturing one defends the target, so the king may not take
        // back: a whole rook.
        assert_see(
            "4k3/4r3/8/8/8/8/4R3/4R1K1 w - - 0 1",
            "e2e7",
            v(Role::Rook),
            &params,
        );
        // Without the second rook the king recaptures: rook for rook.
        assert_see("4k3/4r3/8/8/8/8/4R3/6K1 w - - 0 1", "e2e7", 0, &params);
        // En passant wins the pawn that is not on the target square.
        assert_see(
            "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",
            "e5d6",
            v(Role::Pawn),
            &params,
        );
        // Castling exchanges nothing.
        assert_see("4k3/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", 0, &params);
    }

    /// How much White's evaluation of `fen` moves when `change` edits the parameters.
    fn delta(fen: &str, change: impl Fn(&mut Params)) -> i32 {
        let mut params = Params::default();
        let before = white_eval(fen, &params);
        change(&mut params);
        white_eval(fen, &params) - before
    }

    #[test]
    fn threats_count_each_attacked_piece_once() {
        // The e4 pawn attacks the d5 knight; nothing else is threatened.
        let fen = "4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1";
        let d = delta(fen, |p| {
            p.threat_pawn_mg += 20;
            p.threat_pawn_eg += 20;
        });
        assert!((19..=21).contains(&d), "{d}");
        // The e3 knight attacks the d5 rook; the rook attacks no queen.
        let fen = "4k3/8/8/3r4/8/4N3/8/4K3 w - - 0 1";
        let d = delta(fen, |p| {
            p.threat_minor_mg += 20;
            p.threat_minor_eg += 20;
        });
        assert!((19..=21).contains(&d), "{d}");
        // The a1 rook attacks the a8 queen (the queen's attack on the rook is no term).
        let fen = "q3k3/8/8/8/8/8/8/R3K3 w - - 0 1";
        let d = delta(fen, |p| {
            p.threat_rook_mg += 20;
            p.threat_rook_eg += 20;
        });
        assert!((19..=21).contains(&d), "{d}");
    }

    #[test]
    fn king_danger_needs_two_attackers() {
        // The d3 queen hits h7 and can check on d8 and h7; the g5 knight hits f7 and h7.
        let two = "6k1/5ppp/8/6N1/8/3Q4/8/4K3 w - - 0 1";
        assert!(delta(two, |p| p.king_zone_hit_mg += 10) > 0);
        assert!(delta(two, |p| p.safe_check_mg += 10) > 0);
        // The queen alone: a lone attacker is parried, the danger terms stay out.
        let one = "6k1/5ppp/8/8/8/3Q4/8/4K3 w - - 0 1";
        assert_eq!(delta(one, |p| p.king_zone_hit_mg += 10), 0);
        assert_eq!(delta(one, |p| p.safe_check_mg += 10), 0);
        // A checking square an enemy pawn guards is no safe check: the g4 knight's checks on
        // f6 and h6 count only once the g7 pawn, which guards both, is gone.
        let guarded = "6k1/5ppp/8/6NQ/6N1/8/8/4K3 w - - 0 1";
        let unguarded = "6k1/5p1p/8/6NQ/6N1/8/8/4K3 w - - 0 1";
        let fewer = delta(guarded, |p| p.safe_check_mg += 10);
        let open = delta(unguarded, |p| p.safe_check_mg += 10);
        assert!(fewer < open, "{fewer} vs {open}");
    }

    #[test]
    fn hanging_pieces_are_attacked_and_undefended() {
        // The d1 rook attacks the d5 knight, which nothing defends.
        let hanging = "4k3/8/8/3n4/8/8/8/3RK3 w - - 0 1";
        assert!(delta(hanging, |p| p.hanging_mg += 10) > 0);
        // The e6 pawn defends it: nothing hangs.
        let defended = "4k3/8/4p3/3n4/8/8/8/3RK3 w - - 0 1";
        assert_eq!(delta(defended, |p| p.hanging_mg += 10), 0);
        // Undefended but unattacked: nothing hangs either.
        let alone = "4k3/8/8/3n4/8/8/8/2R1K3 w - - 0 1";
        assert_eq!(delta(alone, |p| p.hanging_mg += 10), 0);
    }

    #[test]
    fn minor_pieces_on_outposts() {
        // The d5 knight, defended by the e4 pawn; no black pawn on the c or e files can ever
        // attack d5.
        let outpost = "4k3/8/8/3N4/4P3/8/8/4K3 w - - 0 1";
        assert!(delta(outpost, |p| p.knight_outpost_eg += 10) > 0);
        // A black pawn on c7 can still drive it away: no outpost.
        let contested = "4k3/2p5/8/3N4/4P3/8/8/4K3 w - - 0 1";
        assert_eq!(delta(contested, |p| p.knight_outpost_eg += 10), 0);
        // Undefended: no outpost.
        let loose = "4k3/8/8/3N4/8/8/8/4K3 w - - 0 1";
        assert_eq!(delta(loose, |p| p.knight_outpost_eg += 10), 0);
        // The same square held by a bishop takes the bishop's weight, not the knight's.
        let bishop = "4k3/8/8/3B4/4P3/8/8/4K3 w - - 0 1";
        assert!(delta(bishop, |p| p.bishop_outpost_eg += 10) > 0);
        assert_eq!(delta(bishop, |p| p.knight_outpost_eg += 10), 0);
    }

    #[test]
    fn a_passer_far_from_the_enemy_king_and_free_scores_more() {
        // A pawn on e6 (rank weight 4), the black king four files away on a8.
        let far = "k7/8/4P3/8/8/8/8/7K w - - 0 1";
        let d = delta(far, |p| p.passer_their_king_eg += 1);
        assert!((15..=17).contains(&d), "{d}");
        // Blocked by the black king on e7: the blocked term costs it 4 per unit.
        let blocked = "8/4k3/4P3/8/8/8/8/7K w - - 0 1";
        let d = delta(blocked, |p| p.passer_blocked_eg += 1);
        assert!((-5..=-3).contains(&d), "{d}");
        // A pawn on its second rank is left to the pawn-structure terms.
        let back = "k7/8/8/8/8/8/4P3/7K w - - 0 1";
        assert_eq!(delta(back, |p| p.passer_their_king_eg += 1), 0);
    }

    fn assert_symmetric(rules: Rules, p: &Board, params: &Params) {
        let fen = p.to_fen();
        let q = Board::from_fen(rules, &flip_fen(&fen)).unwrap_or_else(|e| panic!("{fen}: {e}"));
        assert_eq!(
            p.evaluate(params, &mut PawnCache::new()),
            q.evaluate(params, &mut PawnCache::new()),
            "{fen} vs {}",
            q.to_fen()
        );
        assert_eq!(flip_fen(&q.to_fen()), fen, "flip round trip");
    }

    /// The FEN of the position mirrored by file (a <-> h), which must have no castling rights
    /// (castling is not symmetric by file).
    fn mirror_files_fen(fen: &str) -> String {
        let f: Vec<&str> = fen.split_whitespace().collect();
        assert_eq!(f[2], "-", "{fen}: castling rights do not mirror by file");
        let board: Vec<String> = f[0].split('/').map(|r| r.chars().rev().collect()).collect();
        let ep = if f[3] == "-" {
            "-".to_string()
        } else {
            let b = f[3].as_bytes();
            format!("{}{}", (b'a' + b'h' - b[0]) as char, b[1] as char)
        };
        format!("{} {} - {ep} {}", board.join("/"), f[1], f[4..].join(" "))
    }

    /// `color`'s whole sum of the learned `table`: its pawn-and-king parts and the rest.
    fn table_sum(board: &Board, table: &SquareTable, color: Color) -> (i32, i32) {
        let (pawn_mg, pawn_eg) = board.pawn_king_table_sum(table, color);
        let (mg, eg) = board.square_table_sum(table, color);
        (pawn_mg + mg, pawn_eg + eg)
    }

    /// The learned table is read from the king's wing: a position and its mirror image by file
    /// sum the same table values for each side, whichever wing (or the d and e files) each
    /// king stands on.
    #[test]
    fn the_square_table_is_read_from_the_kings_wing() {
        let rules = Rules::default_for(crate::variant::Variant::Chess);
        let table = crate::board8::square_table_testing::patterned_table();
        let fens = [
            "2kr3r/ppp2ppp/2n1b3/3q4/8/2NQ1N2/PPP2PPP/2KR3R w - - 4 14",
            "r4rk1/pp3ppp/2n1bn2/3q4/3P4/2NQ1N2/PP3PPP/R4RK1 b - - 0 12",
            "3k4/ppp5/8/8/8/8/5PPP/4K3 b - - 0 30",
            "8/5pk1/6p1/3R4/8/6P1/r4P1K/8 w - - 0 40",
            "4k3/8/8/3pP3/8/8/8/3K4 w - d6 0 2",
        ];
        crate::board8::square_table_testing::with_table(table, || {
            for fen in fens {
                let p = Board::from_fen(rules, fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
                let mirrored = mirror_files_fen(fen);
                let q =
                    Board::from_fen(rules, &mirrored).unwrap_or_else(|e| panic!("{mirrored}: {e}"));
                for color in [Color::White, Color::Black] {
                    let sum = table_sum(&p, table, color);
                    assert_ne!(sum, (0, 0), "{fen}: the table is read");
                    assert_eq!(
                        sum,
                        table_sum(&q, table, color),
                        "{fen} vs {mirrored}, {color:?}"
                    );
                }
            }
        });
    }

    /// A piece reads the king cells of its offset from either king, from its own side: a pawn
    /// on g2 (g7 for Black) one rank before its king on g1 (g8), a queen on g7 (b2) one rank
    /// behind the enemy king and a file aside; nothing else of the table is set.
    #[test]
    fn pieces_read_the_king_cells_of_their_offset_from_either_king() {
        use crate::eval::squares::{king_cell, SquareTable, ENEMY_KING, OWN_KING};
        let rules = Rules::default_for(crate::variant::Variant::Chess);
        let mut t = SquareTable::ZERO;
        // g2 = 14, g1 = 6; g7 = 54 and h8 = 63 from White's side.
        t.king_mg[OWN_KING][0][king_cell(14, 6)] = 50;
        t.king_eg[ENEMY_KING][4][king_cell(54, 63)] = -30;
        let table: &'static SquareTable = Box::leak(Box::new(t));
        crate::board8::square_table_testing::with_table(table, || {
            for (fen, white, black) in [
                ("7k/6Q1/8/8/8/8/6P1/6K1 b - - 0 1", (50, -30), (0, 0)),
                // The same from Black's side (b2 from a1 is g7 from h8 mirrored by file).
                ("6k1/6p1/8/8/8/8/1q6/K7 w - - 0 1", (0, 0), (50, -30)),
                // The pawn a rank further from its king reads another cell.
                ("7k/6Q1/8/8/8/6P1/8/6K1 b - - 0 1", (0, -30), (0, 0)),
            ] {
                let p = Board::from_fen(rules, fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
                assert_eq!(table_sum(&p, table, Color::White), white, "{fen}, White");
                assert_eq!(table_sum(&p, table, Color::Black), black, "{fen}, Black");
            }
        });
    }

    /// The evaluation is the same from a cache warmed by every position before it as from an
    /// empty one, along random games from the chess and Latte suites, with the shipped table
    /// and with a table of values everywhere: the pawn-and-king sums of one placement are never
    /// taken for another's (a king move, a pawn move, another table).
    #[test]
    fn a_warm_pawn_cache_evaluates_as_an_empty_one() {
        let params = Params::default();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(21);
        let mut warm = PawnCache::new();
        let mut run = |warm: &mut PawnCache| {
            for (rules, fen) in suite() {
                let mut p = Board::from_fen(rules, &fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
                for _ in 0..30 {
                    assert_eq!(
                        p.evaluate(&params, warm),
                        p.evaluate(&params, &mut PawnCache::new()),
                        "{}",
                        p.to_fen()
                    );
                    let moves = p.legal_move_list();
                    if moves.is_empty() {
                        break;
                    }
                    p.make_move(moves[rng.gen_range(0..moves.len())]);
                }
            }
        };
        run(&mut warm);
        let table = crate::board8::square_table_testing::patterned_table();
        crate::board8::square_table_testing::with_table(table, || run(&mut warm));
    }

    /// Positions of `variant` in the suite and of random games from them, castling rights
    /// dropped (so that each has a mirror image by file).
    fn positions_without_castling(variant: crate::variant::Variant) -> Vec<Board> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut out = Vec::new();
        for (rules, fen) in suite() {
            if rules.variant() != variant {
                continue;
            }
            let mut p = Board::from_fen(rules, &fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            for _ in 0..20 {
                let f: Vec<String> = p.to_fen().split_whitespace().map(String::from).collect();
                let plain = format!("{} {} - - {}", f[0], f[1], f[4..].join(" "));
                out.push(Board::from_fen(rules, &plain).unwrap_or_else(|e| panic!("{plain}: {e}")));
                let moves = p.legal_move_list();
                if moves.is_empty() {
                    break;
                }
                p.make_move(moves[rng.gen_range(0..moves.len())]);
            }
        }
        out
    }

    /// Each view of each network (chess's, Latte's) reads the board from its king's wing, as
    /// the learned table does: a position and its mirror image by file get the same output,
    /// whichever wing (or the d and e files) each king stands on; and the output is not one
    /// constant.
    #[test]
    fn the_networks_read_a_position_as_its_mirror_by_file() {
        for variant in [
            crate::variant::Variant::Chess,
            crate::variant::Variant::Latte,
        ] {
            let positions = positions_without_castling(variant);
            assert!(positions.len() > 100, "{variant}");
            let mut outputs = std::collections::BTreeSet::new();
            for p in positions {
                let net = super::super::tables::net(p.rules)
                    .expect("the 8x8 games have networks")
                    .net();
                let fen = p.to_fen();
                let mirrored = mirror_files_fen(&fen);
                let q = Board::from_fen(p.rules, &mirrored)
                    .unwrap_or_else(|e| panic!("{mirrored}: {e}"));
                assert_eq!(net.evaluate(&p), net.evaluate(&q), "{fen} vs {mirrored}");
                outputs.insert(net.evaluate(&p));
            }
            assert!(
                outputs.len() > 10,
                "{variant}'s network's outputs: {outputs:?}"
            );
        }
    }

    /// Latte's network is its own (fitted to Latte's positions), not chess's under another
    /// name; Secutor's board has none.
    #[test]
    fn each_game_of_the_8x8_board_reads_its_own_network() {
        use crate::variant::Variant;
        let of = |v| super::super::tables::net(Rules::default_for(v));
        let (Some(chess), Some(latte)) = (of(Variant::Chess), of(Variant::Latte)) else {
            panic!("chess and Latte have networks");
        };
        assert_ne!(chess, latte);
        assert_ne!(chess.net().output, latte.net().output);
        assert!(of(Variant::Secutor).is_none());
    }

    /// Plays 24 random moves from `p` (evaluating with `network` when given, else its own),
    /// checking after every legal move on the way that the kept sums are the pieces' sums
    /// afresh and that `unmake` restores the board. Returns the moves checked and how many
    /// of them moved a king between the d and e files.
    fn check_kept_sums(
        mut p: Board,
        network: Option<NetRef>,
        rng: &mut Xoshiro256PlusPlus,
    ) -> (usize, usize) {
        use super::super::net::Accumulator;
        if let Some(n) = network {
            p.use_network(n);
        }
        let Some(net) = p.network.map(NetRef::net) else {
            return (0, 0);
        };
        let (mut checked, mut crossings) = (0, 0);
        for _ in 0..24 {
            assert_eq!(p.net, Accumulator::fresh(net, &p), "{}", p.to_fen());
            let moves = p.legal_move_list();
            for &mv in &moves {
                let before = p.clone();
                let wing = |b: &Board| b.king_of(before.turn).file_index() < 4;
                let undo = p.make(mv);
                let ctx = format!("{mv:?} after {}", before.to_fen());
                assert_eq!(p.net, Accumulator::fresh(net, &p), "{ctx}");
                assert_eq!(net.evaluate_kept(&p.net, p.turn), net.evaluate(&p), "{ctx}");
                crossings += usize::from(wing(&p) != wing(&before));
                checked += 1;
                p.unmake(mv, undo);
                assert_eq!(p, before, "unmake {ctx}");
            }
            if moves.is_empty() {
                break;
            }
            p.make(moves[rng.gen_range(0..moves.len())]);
        }
        (checked, crossings)
    }

    /// The network's sums the board keeps through `make` and `unmake` are, after every legal
    /// move along playouts from every chess perft position (castling either way, promotions,
    /// en passant, kings crossing between the d and e files), the sums of its pieces afresh.
    #[test]
    fn the_networks_kept_sums_are_the_pieces_sums_after_every_move() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(14);
        let (mut checked, mut crossings) = (0, 0);
        for (rules, fen) in suite() {
            let p = Board::from_fen(rules, &fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            let (c, x) = check_kept_sums(p, None, &mut rng);
            checked += c;
            crossings += x;
        }
        assert!(
            checked > 10_000 && crossings > 100,
            "{checked} moves, {crossings} crossings"
        );
    }

    /// A board handed another network (as `EvalFile` hands one) keeps that network's sums
    /// through its moves, not its rules' built-in one's: here Latte's positions read chess's
    /// network and chess's Latte's.
    #[test]
    fn a_board_keeps_the_sums_of_the_network_it_was_handed() {
        use crate::variant::Variant;
        let of = |v| super::super::tables::net(Rules::default_for(v)).expect("a network");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(15);
        let mut checked = 0;
        for (rules, fen) in suite().into_iter().step_by(3) {
            let other = match rules.variant() {
                Variant::Chess => of(Variant::Latte),
                _ => of(Variant::Chess),
            };
            let p = Board::from_fen(rules, &fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            let own = p.clone();
            let mut handed = p.clone();
            handed.use_network(other);
            assert_eq!(handed.network, Some(other));
            // At full weight the evaluation moves by exactly the two networks' difference.
            let full = Params {
                net_scale: 100,
                ..Params::default()
            };
            let eval = |b: &Board| b.evaluate(&full, &mut PawnCache::new());
            let own_net = own.network.expect("the 8x8 games have networks").net();
            assert_eq!(
                eval(&handed) - eval(&own),
                other.net().evaluate(&own) - own_net.evaluate(&own),
                "{fen}"
            );
            checked += check_kept_sums(p, Some(other), &mut rng).0;
        }
        assert!(checked > 3_000, "{checked} moves");
    }

    /// `NetScale` weighs each game's network's output and nothing else: at 100 the
    /// evaluation is the one at 0 plus the output, at 200 plus twice it, in chess and Latte.
    #[test]
    fn net_scale_adds_the_networks_output_and_nothing_else() {
        let at = |scale: i32, p: &Board| {
            let params = Params {
                net_scale: scale,
                ..Params::default()
            };
            p.evaluate(&params, &mut PawnCache::new())
        };
        for variant in [
            crate::variant::Variant::Chess,
            crate::variant::Variant::Latte,
        ] {
            let mut moved = 0;
            for p in positions_without_castling(variant) {
                let net = super::super::tables::net(p.rules)
                    .expect("the 8x8 games have networks")
                    .net();
                let n = net.evaluate(&p);
                assert_eq!(at(100, &p), at(0, &p) + n, "{}", p.to_fen());
                assert_eq!(at(200, &p), at(0, &p) + 2 * n, "{}", p.to_fen());
                moved += usize::from(n != 0);
            }
            assert!(moved > 0, "{variant}'s network moved no evaluation");
        }
    }

    /// White's view of a position and Black's view of its mirror image score alike: catches
    /// any term written for one colour only, in chess and every Latte rule-set.
    #[test]
    fn evaluation_is_colour_symmetric() {
        let params = Params::default();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
        for (rules, fen) in suite() {
            let mut p = Board::from_fen(rules, &fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert_symmetric(rules, &p, &params);
            for _ in 0..40 {
                let moves = p.legal_move_list();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.gen_range(0..moves.len())];
                p.make_move(mv);
                assert_symmetric(rules, &p, &params);
            }
        }
    }
}
