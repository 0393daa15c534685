//! Evaluation, SEE and the null move for the Gustavian board (`secutor`).
//!
//! The terms are the 8x8 board's, written once in `eval::terms`: tapered material, piece-square
//! shapes from [`pst`] on the 10-file grid, mobility, bishop pair, rooks on open files, pawn
//! structure, king safety, castling. Here is what they need from this board, with its hooks:
//! the Secutor adds two terms, its quiet rook-like slides (mobility) and the enemy pieces it
//! could capture by collision right now; rooks earn open files only on the orthodox files b..i;
//! a corner king is sheltered by the b/i file. The Secutor's collision attacks also count on
//! the enemy king's zone and in the exchange on a square (SEE).

use super::attacks;
use super::bitboard::{Bitboard, ALL};
use super::board::{Position, BK, BQ, WK, WQ};
use super::moves::Move;
use super::square::{Square, CELLS, FILES, RANKS};
use super::zobrist;
use crate::board8::net_file::{LoadedNet, NetFileError};
use crate::eval::sums::recount;
use crate::eval::terms::{self, BitSet, EvalBoard};
use crate::eval::{pst, see, EvalSums, PawnCache, SearchPosition};
use crate::params::Params;
use crate::position::MoveInfo;
use crate::types::{Color, Piece, Role};
use crate::variant::Rules;

/// Piece-square features from White's side per role index (pawn..secutor), per grid cell
/// (holes hold features too but are never looked up).
static PST: [[pst::Features; CELLS]; 7] = {
    let roles = Role::ALL;
    let mut t = [[[0; pst::SLOTS]; CELLS]; 7];
    let mut r = 0;
    while r < 7 {
        let mut i = 0;
        while i < CELLS {
            t[r][i] = pst::features(
                roles[r],
                (i % FILES as usize) as i32,
                (i / FILES as usize) as i32,
                FILES as i32,
            );
            i += 1;
        }
        r += 1;
    }
    t
};

/// [`PST`] per piece code (`colour * 8 + role`; the unused codes hold zeros), indexed by the
/// grid cell: what `put` and `remove` add and subtract.
static PST_BY_CODE: [[pst::Features; CELLS]; 16] = {
    let mut t = [[[0; pst::SLOTS]; CELLS]; 16];
    let mut r = 0;
    while r < 7 {
        let mut i = 0;
        while i < CELLS {
            let (file, rank) = (i % FILES as usize, i / FILES as usize);
            t[r][i] = PST[r][i];
            // The rank mirrored: Black's own side is the top of the board.
            t[8 + r][i] = PST[r][(RANKS as usize - 1 - rank) * FILES as usize + file];
            i += 1;
        }
        r += 1;
    }
    t
};

/// Piece-square features of the piece with mailbox code `code` on `sq`, from its own side.
#[inline(always)]
pub(super) fn piece_square(code: u8, sq: Square) -> pst::Features {
    PST_BY_CODE[code as usize & 15][sq.index()]
}

/// The real squares of each file (the a- and j-files hold only their two corner squares).
static FILE_MASKS: [Bitboard; FILES as usize] = {
    let mut t = [Bitboard::EMPTY; FILES as usize];
    let mut f = 0;
    while f < FILES as usize {
        let mut b = 0u128;
        let mut r = 0;
        while r < RANKS as usize {
            b |= 1u128 << (r * FILES as usize + f);
            r += 1;
        }
        t[f] = Bitboard(b & ALL.0);
        f += 1;
    }
    t
};

/// The files adjacent to each file.
static ADJACENT_FILES: [Bitboard; FILES as usize] = {
    let mut t = [Bitboard::EMPTY; FILES as usize];
    let mut f = 0;
    while f < FILES as usize {
        let mut b = 0u128;
        if f > 0 {
            b |= FILE_MASKS[f - 1].0;
        }
        if f + 1 < FILES as usize {
            b |= FILE_MASKS[f + 1].0;
        }
        t[f] = Bitboard(b);
        f += 1;
    }
    t
};

/// `AHEAD[color][rank]`: every real square on the ranks strictly in front of `rank` from
/// `color`'s side.
static AHEAD: [[Bitboard; RANKS as usize]; 2] = {
    let mut t = [[Bitboard::EMPTY; RANKS as usize]; 2];
    let mut r = 0;
    while r < RANKS as usize {
        let row = FILES as usize;
        let white = if r + 1 >= RANKS as usize {
            0
        } else {
            !0u128 << (row * (r + 1))
        };
        let black = (1u128 << (row * r)) - 1;
        t[0][r] = Bitboard(white & ALL.0);
        t[1][r] = Bitboard(black & ALL.0);
        r += 1;
    }
    t
};

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

impl EvalBoard for Position {
    type Square = Square;
    type Bitboard = Bitboard;
    const FILES: u8 = FILES;

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
        Position::pieces(self, color, role)
    }
    #[inline]
    fn occupied(&self) -> Bitboard {
        Position::occupied(self)
    }
    #[inline]
    fn king(&self, color: Color) -> Square {
        self.king[color.index()]
    }
    #[inline]
    fn role_at(&self, sq: Square) -> Option<Role> {
        super::board::decode(self.code_at(sq)).map(|piece| piece.role)
    }
    #[inline]
    fn castling_rights(&self, color: Color) -> i32 {
        let rights = match color {
            Color::White => self.castling & (WK | WQ),
            Color::Black => self.castling & (BK | BQ),
        };
        rights.count_ones() as i32
    }

    #[inline]
    fn square_bb(sq: Square) -> Bitboard {
        Bitboard::from_square(sq)
    }
    #[inline]
    fn zobrist(color: Color, role: Role, sq: Square) -> u64 {
        zobrist::piece(zobrist::piece_code(Piece::new(color, role)), sq)
    }
    #[inline]
    fn pst(role: Role, sq: Square, color: Color) -> pst::Features {
        let rank = Self::relative_rank(color, sq) as usize;
        PST[role.index()][rank * FILES as usize + sq.file_of() as usize]
    }
    #[inline]
    fn relative_rank(color: Color, sq: Square) -> u8 {
        match color {
            Color::White => sq.rank_of(),
            Color::Black => RANKS - 1 - sq.rank_of(),
        }
    }
    #[inline]
    fn file_mask(file: u8) -> Bitboard {
        FILE_MASKS[file as usize]
    }
    #[inline]
    fn adjacent_files(file: u8) -> Bitboard {
        ADJACENT_FILES[file as usize]
    }
    #[inline]
    fn passed_span(color: Color, sq: Square) -> Bitboard {
        let f = sq.file_of() as usize;
        (FILE_MASKS[f] | ADJACENT_FILES[f]) & AHEAD[color.index()][sq.rank_of() as usize]
    }
    /// Squares falling onto holes or off the board are dropped.
    #[inline]
    fn forward(color: Color, set: Bitboard) -> Bitboard {
        let row = FILES as u32;
        match color {
            Color::White => Bitboard((set.0 << row) & ALL.0),
            Color::Black => Bitboard((set.0 >> row) & ALL.0),
        }
    }
    /// Two shifts for all pawns at once instead of a table look-up per pawn: a step towards
    /// the a-file is not taken from the a-file nor one towards the j-file from the j-file (it
    /// would wrap to the other edge), and targets on holes or off the grid are dropped.
    #[inline]
    fn pawn_attack_set(color: Color, pawns: Bitboard) -> Bitboard {
        let row = FILES as u32;
        let west = (pawns & !FILE_MASKS[0]).0;
        let east = (pawns & !FILE_MASKS[FILES as usize - 1]).0;
        let set = match color {
            Color::White => (west << (row - 1)) | (east << (row + 1)),
            Color::Black => (west >> (row + 1)) | (east >> (row - 1)),
        };
        Bitboard(set & ALL.0)
    }
    #[inline]
    fn knight_attacks(sq: Square) -> Bitboard {
        attacks::knight_attacks(sq)
    }
    #[inline]
    fn bishop_attacks(sq: Square, occ: Bitboard) -> Bitboard {
        attacks::bishop_attacks(sq, occ)
    }
    #[inline]
    fn rook_attacks(sq: Square, occ: Bitboard) -> Bitboard {
        attacks::rook_attacks(sq, occ)
    }
    #[inline]
    fn queen_attacks(sq: Square, occ: Bitboard) -> Bitboard {
        attacks::bishop_attacks(sq, occ) | attacks::rook_attacks(sq, occ)
    }
    #[inline]
    fn king_attacks(sq: Square) -> Bitboard {
        attacks::king_attacks(sq)
    }

    #[inline]
    fn secutors(&self, color: Color) -> Bitboard {
        self.pieces(color, Role::Secutor)
    }
    #[inline]
    fn secutor_reach(sq: Square, occ: Bitboard, watch: Bitboard) -> Option<(Bitboard, Bitboard)> {
        Some(attacks::secutor_watch(sq, occ, watch))
    }
    #[inline]
    fn secutor_threats(sq: Square) -> Bitboard {
        attacks::secutor_threats(sq)
    }
    /// Only the Secutors that could ever reach `sq` (most of them, most of the time, cannot)
    /// are tested, and each only along the legs that lead to it.
    #[inline]
    fn secutor_attackers(sq: Square, secutors: Bitboard, occ: Bitboard) -> Bitboard {
        let mut out = Bitboard::EMPTY;
        for s in secutors & attacks::secutor_threats(sq) {
            if attacks::secutor_hits(s, sq, occ) {
                out |= Bitboard::from_square(s);
            }
        }
        out
    }
    /// Open files only mean something on the orthodox files b..i.
    #[inline]
    fn rook_file_counts(file: u8) -> bool {
        (1..=8).contains(&file)
    }
    /// A king on a corner square (a/j file) has a hole in front of it: the file that matters
    /// is the neighbouring b/i file.
    #[inline]
    fn king_file(sq: Square) -> u8 {
        match sq.file_of() {
            0 => 1,
            f if f == FILES - 1 => FILES - 2,
            f => f,
        }
    }
}

impl SearchPosition for Position {
    type NullUndo = Option<Square>;
    type Network = std::convert::Infallible;

    fn network(_: &LoadedNet, rules: Rules) -> Result<Self::Network, NetFileError> {
        Err(NetFileError::NoNetwork(rules))
    }

    fn use_network(&mut self, network: Self::Network) {
        match network {}
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
            self.key ^= zobrist::ep(sq);
        }
        self.turn = !self.turn;
        self.key ^= zobrist::side();
        ep
    }

    fn unmake_null(&mut self, ep: Option<Square>) {
        self.turn = !self.turn;
        self.key ^= zobrist::side();
        if let Some(sq) = ep {
            self.key ^= zobrist::ep(sq);
        }
        self.ep = ep;
    }

    fn has_non_pawn_material(&self) -> bool {
        let us = self.by_color[self.turn.index()];
        (us & !self.by_role[Role::Pawn.index()] & !self.by_role[Role::King.index()]).nonempty()
    }

    #[inline]
    fn key_after(&self, info: &MoveInfo<Square>) -> u64 {
        let us = self.turn;
        let landed = info.promotion.unwrap_or(info.role);
        let code = |color, role| zobrist::piece_code(Piece::new(color, role));
        let mut key = self.key
            ^ zobrist::side()
            ^ zobrist::piece(code(us, info.role), info.from)
            ^ zobrist::piece(code(us, landed), info.to);
        if let Some(victim) = info.capture.filter(|_| !info.en_passant) {
            key ^= zobrist::piece(code(!us, victim), info.to);
        }
        if let Some(ep) = self.ep {
            key ^= zobrist::ep(ep);
        }
        key
    }

    fn move_code(mv: Move) -> u32 {
        mv.from().index() as u32
            | (mv.to().index() as u32) << 7
            | (mv.kind() as u32) << 14
            | 1 << 31
    }

    fn square_index(sq: Square) -> usize {
        sq.index()
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::super::attacks::pawn_attacks;
    use super::super::moves::MoveKind;
    use super::*;
    use crate::position::Position as _;
    use crate::variant::{Rules, Variant};

    const START: &str = "srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1";

    fn pos(fen: &str) -> Position {
        Position::from_fen(Rules::default_for(Variant::Secutor), fen)
            .unwrap_or_else(|e| panic!("{fen}: {e}"))
    }

    /// The FEN of the colour-flipped position: ranks mirrored, colours and turn swapped.
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
        let castling: String = if f[2] == "-" {
            "-".into()
        } else {
            let c: Vec<char> = f[2].chars().map(swap).collect();
            "KQkq".chars().filter(|x| c.contains(x)).collect()
        };
        let ep = if f[3] == "-" {
            "-".to_string()
        } else {
            let b = f[3].as_bytes();
            format!("{}{}", b[0] as char, (b'1' + b'8' - b[1]) as char)
        };
        let rest = f[4..].join(" ");
        format!("{} {turn} {castling} {ep} {rest}", board.join("/"))
    }

    fn perft_fens() -> Vec<String> {
        let text = include_str!("../../tests/data/perft/secutor.jsonl");
        let mut v: Vec<String> = text
            .lines()
            .filter_map(|l| {
                let i = l.find("\"fen\": \"")? + 8;
                let j = l[i..].find('"')?;
                Some(l[i..i + j].to_string())
            })
            .collect();
        v.sort();
        v.dedup();
        assert!(v.len() > 10);
        v
    }

    fn find(p: &Position, uci: &str) -> Move {
        *p.legal_move_list()
            .iter()
            .find(|&&m| p.move_info(m).uci() == uci)
            .unwrap_or_else(|| panic!("{uci} not legal in {}", p.to_fen()))
    }

    fn assert_symmetric(p: &Position, params: &Params) {
        let fen = p.to_fen();
        let q = pos(&flip_fen(&fen));
        assert_eq!(
            p.evaluate(params, &mut PawnCache::new()),
            q.evaluate(params, &mut PawnCache::new()),
            "{fen} vs {}",
            q.to_fen()
        );
    }

    /// The shifted pawn attack sets equal the union of the per-square attack tables, for
    /// single pawns on every square and for random sets of them.
    #[test]
    fn pawn_attack_sets_match_the_tables() {
        let table = |color: Color, pawns: Bitboard| {
            pawns.fold(Bitboard::EMPTY, |acc, sq| acc | pawn_attacks(color, sq))
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for color in Color::ALL {
            for &sq in Position::squares() {
                let one = Bitboard::from_square(sq);
                assert_eq!(
                    Position::pawn_attack_set(color, one),
                    table(color, one),
                    "{color} pawn on {sq}"
                );
            }
            for _ in 0..1000 {
                let set = Bitboard(rng.gen::<u128>() & ALL.0);
                assert_eq!(Position::pawn_attack_set(color, set), table(color, set));
            }
        }
    }

    #[test]
    fn flip_round_trips() {
        for fen in perft_fens() {
            assert_eq!(flip_fen(&flip_fen(&fen)), fen);
        }
    }

    #[test]
    fn evaluation_is_colour_symmetric() {
        let params = Params::default();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for fen in perft_fens() {
            let mut p = pos(&fen);
            assert_symmetric(&p, &params);
            // And along a random playout from it.
            for _ in 0..40 {
                let moves = p.legal_move_list();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.gen_range(0..moves.len())];
                p.make_move(mv);
                assert_symmetric(&p, &params);
            }
        }
    }

    #[test]
    fn start_position_is_near_level() {
        let p = pos(START);
        let s = p.evaluate(&Params::default(), &mut PawnCache::new());
        assert!(s.abs() < 60, "{s}");
    }

    #[test]
    fn material_counts() {
        let params = Params::default();
        let start = pos(START).evaluate(&params, &mut PawnCache::new());
        // Black lacks the j8 Secutor.
        let up = pos("srnbqkbnr1/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1")
            .evaluate(&params, &mut PawnCache::new());
        assert!(up > start + 200, "{up} vs {start}");
        // The same from Black's side.
        let down = pos("srnbqkbnr1/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS b KQkq - 0 1")
            .evaluate(&params, &mut PawnCache::new());
        assert!(down < start - 200, "{down} vs {start}");
        // A queen is worth more than a Secutor.
        let queen = pos("srnb1kbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1")
            .evaluate(&params, &mut PawnCache::new());
        assert!(queen > up + 300, "{queen} vs {up}");
    }

    #[test]
    fn secutor_capture_threats_count() {
        let mut params = Params::default();
        // White Secutor e2 bounces off the a2 hole onto a1, where a black knight stands.
        let fen = "4k5/*8*/*8*/*8*/*8*/*6K1*/*3S4*/n9 w - - 0 1";
        let base = pos(fen).evaluate(&params, &mut PawnCache::new());
        params.secutor_capture_mg += 20;
        params.secutor_capture_eg += 20;
        // 20 in both halves of the taper (up to rounding).
        let more = pos(fen).evaluate(&params, &mut PawnCache::new());
        assert!((19..=21).contains(&(more - base)), "{base} -> {more}");
    }

    #[test]
    fn see_cases() {
        use crate::eval::see_value;
        use crate::types::Role::{self, Pawn, Queen, Rook, Secutor};
        let params = Params::default();
        let v = |r: Role| see_value(r, &params);
        // Pawn takes a knight defended by a pawn: good.
        let p = pos("5k4/*8*/*1p6*/*2n5*/*3P4*/*8*/*8*/5K4 w - - 0 1");
        let mv = find(&p, "e4d5");
        assert!(p.see_ge(mv, 0, &params));
        assert!(p.see_ge(mv, 200, &params));
        assert!(!p.see_ge(mv, 300, &params));

        // Queen takes a pawn defended by a pawn: bad.
        let p = pos("5k4/*2p1p3*/*3p4*/*8*/*3Q4*/*8*/*8*/5K4 w - - 0 1");
        let mv = find(&p, "e4e6");
        assert!(!p.see_ge(mv, 0, &params));
        // The queen for a pawn.
        assert!(p.see_ge(mv, v(Pawn) - v(Queen), &params));
        assert!(!p.see_ge(mv, v(Pawn) - v(Queen) + 1, &params));
        // A quiet queen move to a safe square is fine, to an attacked one is not.
        assert!(p.see_ge(find(&p, "e4e5"), 0, &params));

        // Secutor e2 captures the a1 rook by collision; the rook is defended by a knight.
        let p = pos("4k5/*8*/*8*/*8*/*8*/*n5K1*/*3S4*/r9 w - - 0 1");
        let mv = find(&p, "e2a1");
        assert!(p.see_ge(mv, 0, &params));
        // The rook for the Secutor.
        assert!(p.see_ge(mv, v(Rook) - v(Secutor), &params));
        assert!(!p.see_ge(mv, v(Rook) - v(Secutor) + 1, &params));

        // Secutor e2 takes the d5 pawn (colliding with e5, turning north-west), defended by c6.
        let p = pos("4k5/*8*/*1p6*/*2pp4*/*8*/*6K1*/*3S4*/10 w - - 0 1");
        let mv = find(&p, "e2d5");
        assert!(!p.see_ge(mv, 0, &params));
        // A pawn for the Secutor.
        assert!(p.see_ge(mv, v(Pawn) - v(Secutor), &params));

        // A Secutor defends by collision: the j8 Secutor, stopped by the rim, guards h6 along
        // j8-i7-h6, so Nxh6 loses the knight.
        let p = pos("5k3s/*8*/*6p1*/*8*/*5N2*/*8*/*8*/5K4 w - - 0 1");
        let mv = find(&p, "g4h6");
        assert!(!p.see_ge(mv, 0, &params));
        let p = pos("5k4/*8*/*6p1*/*8*/*5N2*/*8*/*8*/5K4 w - - 0 1");
        assert!(p.see_ge(find(&p, "g4h6"), 0, &params));

        // Castling only passes a non-positive threshold; en passant wins a pawn.
        let p = pos(
            "srnbqk1nrs/*p1pppp1p*/*8*/*Pp4p1*/*3b4*/*6P1*/*1PPPPP1P*/SRNBQKBNRS w KQkq c6 0 5",
        );
        let ep = find(&p, "b5c6");
        assert!(p.see_ge(ep, 0, &params));
        let p = pos(
            "sr3k2rs/*1ppqb2n*/*2nppp2*/*p5pp*/*1P4bP*/*2N2NP1*/*P1PPPPB1*/SRQ2K2RS b KQkq - 1 16",
        );
        let castle = p
            .legal_move_list()
            .iter()
            .copied()
            .find(|&m| m.kind() == MoveKind::Castle)
            .expect("a castling move");
        assert!(p.see_ge(castle, 0, &params));
        assert!(!p.see_ge(castle, 1, &params));
    }

    #[test]
    fn null_move_keeps_the_key() {
        for fen in perft_fens() {
            let mut p = pos(&fen);
            if p.in_check() {
                continue;
            }
            let before = p.clone();
            let undo = p.make_null();
            assert_eq!(p.key(), p.recompute_key(), "{fen}");
            assert_eq!(p.turn(), !before.turn());
            assert!(p.ep.is_none());
            p.unmake_null(undo);
            assert_eq!(p, before, "{fen}");
        }
        let p = pos(
            "srnbqk1nrs/*p1pppp1p*/*8*/*Pp4p1*/*3b4*/*6P1*/*1PPPPP1P*/SRNBQKBNRS w KQkq c6 0 5",
        );
        assert!(
            p.ep.is_some(),
            "the test position keeps its en-passant square"
        );
    }

    #[test]
    fn codes_and_material_flags() {
        let p = pos(START);
        let moves = p.legal_move_list();
        let mut codes: Vec<u32> = moves.iter().map(|&m| Position::move_code(m)).collect();
        assert!(codes.iter().all(|&c| c != 0));
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), moves.len());
        for &sq in Position::squares() {
            assert!(Position::square_index(sq) < 128);
        }
        assert!(p.has_non_pawn_material());
        let bare = pos("4k5/*p7*/*8*/*8*/*8*/*8*/*P7*/S4K4 b - - 0 1");
        assert!(!bare.has_non_pawn_material());
    }

    /// The SEE's Secutor attackers, found through the threat table and the check lines, are
    /// exactly the Secutors whose full attack set holds the square, on random occupancies.
    #[test]
    fn secutor_attackers_match_the_full_attack_sets() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let squares = super::super::square::ALL_SQUARES;
        for _ in 0..2_000 {
            let mut occ = Bitboard::EMPTY;
            let mut secutors = Bitboard::EMPTY;
            for &q in &squares {
                match rng.gen_range(0..6) {
                    0 | 1 => occ |= Bitboard::from_square(q),
                    2 => {
                        occ |= Bitboard::from_square(q);
                        secutors |= Bitboard::from_square(q);
                    }
                    _ => {}
                }
            }
            let target = squares[rng.gen_range(0..squares.len())];
            let expected = secutors
                .into_iter()
                .filter(|&s| s != target && attacks::secutor_reach(s, occ).1.has(target))
                .fold(Bitboard::EMPTY, |b, s| b | Bitboard::from_square(s));
            let found = <Position as EvalBoard>::secutor_attackers(target, secutors, occ)
                & !Bitboard::from_square(target);
            assert_eq!(found, expected, "{target} under {occ:?}");
        }
    }
}
