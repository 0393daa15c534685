//! A deliberately naive attack test: walks every enemy piece's moves on the grid coordinates,
//! using no attack table, bitboard ray or shared helper of the fast move generator, so tests
//! can compare the two.

use super::board::Position;
use super::square::{is_square_coord, Square};
use crate::types::{Color, Piece, Role};

const ORTHOGONAL: [(i32, i32); 4] = [(0, 1), (0, -1), (1, 0), (-1, 0)];
const DIAGONAL: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
const KNIGHT: [(i32, i32); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];

impl Position {
    fn slow_piece(&self, f: i32, r: i32) -> Option<Piece> {
        if !is_square_coord(f, r) {
            return None;
        }
        Square::new(f as u8, r as u8).and_then(|sq| super::board::decode(self.code_at(sq)))
    }

    /// Whether `color`'s king is attacked, by brute force.
    pub(crate) fn slow_king_attacked(&self, color: Color) -> bool {
        let mut king = None;
        for r in 0..8 {
            for f in 0..10 {
                if self.slow_piece(f, r) == Some(Piece::new(color, Role::King)) {
                    king = Some((f, r));
                }
            }
        }
        let Some(target) = king else { return false };
        for r in 0..8 {
            for f in 0..10 {
                match self.slow_piece(f, r) {
                    Some(p) if p.color != color && self.slow_hits(p, (f, r), target) => {
                        return true
                    }
                    _ => {}
                }
            }
        }
        false
    }

    /// Whether piece `p` standing on `from` captures on `target` by one of its moves.
    fn slow_hits(&self, p: Piece, from: (i32, i32), target: (i32, i32)) -> bool {
        let (f, r) = from;
        let slide = |dirs: &[(i32, i32)]| {
            dirs.iter().any(|&(df, dr)| {
                let (mut x, mut y) = (f + df, r + dr);
                while is_square_coord(x, y) {
                    if (x, y) == target {
                        return true;
                    }
                    if self.slow_piece(x, y).is_some() {
                        return false;
                    }
                    x += df;
                    y += dr;
                }
                false
            })
        };
        let leap = |steps: &[(i32, i32)]| {
            steps
                .iter()
                .any(|&(df, dr)| is_square_coord(f + df, r + dr) && (f + df, r + dr) == target)
        };
        match p.role {
            Role::Pawn => {
                let dr = if p.color == Color::White { 1 } else { -1 };
                leap(&[(-1, dr), (1, dr)])
            }
            Role::Knight => leap(&KNIGHT),
            Role::King => leap(&[ORTHOGONAL, DIAGONAL].concat()),
            Role::Bishop => slide(&DIAGONAL),
            Role::Rook => slide(&ORTHOGONAL),
            Role::Queen => slide(&ORTHOGONAL) || slide(&DIAGONAL),
            Role::Secutor => self.slow_secutor_hits(from, target),
        }
    }

    /// The collision rule of RULES.md, step by step.
    fn slow_secutor_hits(&self, from: (i32, i32), target: (i32, i32)) -> bool {
        for (df, dr) in ORTHOGONAL {
            // Slide over empty squares as far as possible: P.
            let (mut px, mut py) = from;
            while is_square_coord(px + df, py + dr) && self.slow_piece(px + df, py + dr).is_none() {
                px += df;
                py += dr;
            }
            // The two diagonals that keep going in this direction.
            let legs = if df == 0 {
                [(-1, dr), (1, dr)]
            } else {
                [(df, -1), (df, 1)]
            };
            for (lf, lr) in legs {
                let (mut x, mut y) = (px + lf, py + lr);
                while is_square_coord(x, y) {
                    if self.slow_piece(x, y).is_some() {
                        if (x, y) == target {
                            return true;
                        }
                        break;
                    }
                    x += lf;
                    y += lr;
                }
            }
        }
        false
    }
}
