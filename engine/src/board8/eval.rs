//! Evaluation, SEE and the null move for the 8x8 board (`chess` and `latte`).

use super::attacks;
use super::board::Board;
use super::castling::Letter;
use super::moves::{Move, MoveKind};
use super::square::{Bitboard, Square};
use super::zobrist;
use crate::eval::{material, phase_weight, pst, see_value, taper, SearchPosition};
use crate::params::Params;
use crate::types::{Color, Role};

/// Piece-square values from White's side, per role index (pawn..king).
static PST: [[(i32, i32); 64]; 6] = {
    let roles = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];
    let mut t = [[(0, 0); 64]; 6];
    let mut r = 0;
    while r < 6 {
        let mut sq = 0;
        while sq < 64 {
            t[r][sq] = pst::value(roles[r], (sq % 8) as i32, (sq / 8) as i32, 8);
            sq += 1;
        }
        r += 1;
    }
    t
};

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

/// Squares strictly in front of a square from `color`'s side, on its file and the adjacent
/// ones: where an enemy pawn stops a passer.
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

fn pawn_attacks(color: Color, pawns: Bitboard) -> Bitboard {
    let not_a = !Bitboard::file(0);
    let not_h = !Bitboard::file(7);
    match color {
        Color::White => Bitboard(((pawns & not_a).0 << 7) | ((pawns & not_h).0 << 9)),
        Color::Black => Bitboard(((pawns & not_a).0 >> 9) | ((pawns & not_h).0 >> 7)),
    }
}

impl Board {
    /// (mg, eg, phase) of `color`'s pieces from its own point of view.
    fn evaluate_side(&self, color: Color, p: &Params) -> (i32, i32, i32) {
        let them = !color;
        let (mut mg, mut eg, mut phase) = (0, 0, 0);
        let own = self.color_bb(color);
        let occ = self.occupied;
        let own_pawns = self.pieces(color, Role::Pawn);
        let their_pawns = self.pieces(them, Role::Pawn);
        let their_pawn_attacks = pawn_attacks(them, their_pawns);
        let safe = !own & !their_pawn_attacks;
        let their_king = self.king_of(them);
        let king_zone = attacks::king(their_king) | their_king.bb();
        let mut attackers = 0;
        let (mut pst_mg, mut pst_eg) = (0, 0);

        for sq in own {
            let Some(piece) = self.at(sq) else { continue };
            let role = piece.role;
            let (m, e) = material(role, p);
            mg += m;
            eg += e;
            phase += phase_weight(role);
            let (pm, pe) = PST[role.index()][sq.relative(color).index()];
            pst_mg += pm;
            pst_eg += pe;
            let reach = match role {
                Role::Knight => attacks::knight(sq),
                Role::Bishop => attacks::bishop(sq, occ),
                Role::Rook => attacks::rook(sq, occ),
                Role::Queen => attacks::queen(sq, occ),
                _ => continue,
            };
            if (reach & king_zone).nonempty() {
                attackers += 1;
            }
            let n = (reach & safe).count() as i32;
            let (wm, we, centre) = match role {
                Role::Knight => (p.knight_mob_mg, p.knight_mob_eg, 4),
                Role::Bishop => (p.bishop_mob_mg, p.bishop_mob_eg, 6),
                Role::Rook => (p.rook_mob_mg, p.rook_mob_eg, 7),
                _ => (p.queen_mob_mg, p.queen_mob_eg, 13),
            };
            mg += wm * (n - centre);
            eg += we * (n - centre);
            if role == Role::Rook {
                let file = Bitboard::file(sq.file_index());
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
        mg += pst_mg * p.pst_scale / 100;
        eg += pst_eg * p.pst_scale / 100;
        if self.pieces(color, Role::Bishop).more_than_one() {
            mg += p.bishop_pair_mg;
            eg += p.bishop_pair_eg;
        }
        // Attacks on the enemy king's zone grow faster than linearly with the attackers.
        mg += p.king_attack_mg * attackers * attackers / 2;

        for sq in own_pawns {
            let f = sq.file_index() as usize;
            if (own_pawns & ADJACENT_FILES[f]).is_empty() {
                mg -= p.isolated_mg;
                eg -= p.isolated_eg;
            }
            if (passed_span(color, sq) & their_pawns).is_empty() {
                let (bm, be) = match sq.relative(color).rank_index() {
                    1 => (p.passed2_mg, p.passed2_eg),
                    2 => (p.passed3_mg, p.passed3_eg),
                    3 => (p.passed4_mg, p.passed4_eg),
                    4 => (p.passed5_mg, p.passed5_eg),
                    5 => (p.passed6_mg, p.passed6_eg),
                    _ => (p.passed7_mg, p.passed7_eg),
                };
                mg += bm;
                eg += be;
            }
        }
        for f in 0..8 {
            let n = (own_pawns & Bitboard::file(f)).count() as i32;
            if n > 1 {
                mg -= p.doubled_mg * (n - 1);
                eg -= p.doubled_eg * (n - 1);
            }
        }

        // King safety: pawns in front of the king, an open king file, castling.
        let king = self.king_of(color);
        let front =
            passed_span(color, king) & (attacks::king(king) | attacks::king(king).forward(color));
        mg += p.shelter_mg * (front & own_pawns).count().min(3) as i32;
        if (Bitboard::file(king.file_index()) & own_pawns).is_empty() {
            mg -= p.king_open_file_mg;
        }
        let rel = king.relative(color);
        if rel.rank_index() == 0 && !(3..=5).contains(&rel.file_index()) {
            mg += p.castled_mg;
        }
        let rights = Letter::ALL
            .iter()
            .filter(|&&l| self.castling.has(color, l))
            .count() as i32;
        mg += p.castling_right_mg * rights;
        (mg, eg, phase)
    }

    /// The least valuable of `color`'s pieces in `set`.
    fn least_valuable(&self, set: Bitboard, color: Color) -> Option<(Square, Role)> {
        for role in [
            Role::Pawn,
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ] {
            if let Some(sq) = (set & self.pieces(color, role)).first() {
                return Some((sq, role));
            }
        }
        None
    }
}

impl SearchPosition for Board {
    type NullUndo = Option<Square>;

    fn evaluate(&self, p: &Params) -> i32 {
        let (wm, we, wp) = self.evaluate_side(Color::White, p);
        let (bm, be, bp) = self.evaluate_side(Color::Black, p);
        let white = taper(wm - bm, we - be, wp + bp);
        let score = if self.turn == Color::White {
            white
        } else {
            -white
        };
        score + p.tempo
    }

    /// The swap algorithm on the target square, with x-rays revealed as pieces leave.
    fn see_ge(&self, mv: Move, threshold: i32, p: &Params) -> bool {
        let (from, to) = (mv.from(), mv.to());
        let captured = match mv.kind() {
            MoveKind::Castle(_) => return threshold <= 0,
            MoveKind::EnPassant => see_value(Role::Pawn, p),
            _ => self.at(to).map_or(0, |v| see_value(v.role, p)),
        };
        let mut swap = captured - threshold;
        if swap < 0 {
            return false;
        }
        let mover = self.at(from).map_or(Role::Pawn, |x| x.role);
        swap = see_value(mover, p) - swap;
        if swap <= 0 {
            return true;
        }
        let mut occ = self.occupied ^ from.bb() ^ to.bb();
        if mv.kind() == MoveKind::EnPassant {
            occ ^= to.forward_of(!self.turn).bb();
        }
        let diag = self.role_bb(Role::Bishop) | self.role_bb(Role::Queen);
        let orth = self.role_bb(Role::Rook) | self.role_bb(Role::Queen);
        let mut attackers =
            self.attackers_to(to, Color::White, occ) | self.attackers_to(to, Color::Black, occ);
        let mut stm = self.turn;
        let mut res = true;
        loop {
            stm = !stm;
            attackers &= occ;
            let ours = attackers & self.color_bb(stm);
            let Some((sq, role)) = self.least_valuable(ours, stm) else {
                break;
            };
            res = !res;
            if role == Role::King {
                return if (attackers & !self.color_bb(stm)).nonempty() {
                    !res
                } else {
                    res
                };
            }
            swap = see_value(role, p) - swap;
            if swap < i32::from(res) {
                break;
            }
            occ ^= sq.bb();
            if matches!(role, Role::Pawn | Role::Bishop | Role::Queen) {
                attackers |= attacks::bishop(to, occ) & diag;
            }
            if matches!(role, Role::Rook | Role::Queen) {
                attackers |= attacks::rook(to, occ) & orth;
            }
        }
        res
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
    use crate::position::Position as _;
    use crate::variant::Rules;

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

    fn assert_symmetric(rules: Rules, p: &Board, params: &Params) {
        let fen = p.to_fen();
        let q = Board::from_fen(rules, &flip_fen(&fen)).unwrap_or_else(|e| panic!("{fen}: {e}"));
        assert_eq!(
            p.evaluate(params),
            q.evaluate(params),
            "{fen} vs {}",
            q.to_fen()
        );
        assert_eq!(flip_fen(&q.to_fen()), fen, "flip round trip");
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
