//! Attack tables of the 8x8 board: leaper tables built by `const fn`, slider attacks by
//! "fancy" magic bitboards whose magic numbers are searched once, with a fixed seed, on first
//! use (a few milliseconds), so the tables are the same on every run.

use std::sync::OnceLock;

use super::square::{Bitboard, Square};
use crate::types::Color;

const fn leaper_table(deltas: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut i = 0;
        while i < deltas.len() {
            let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                table[sq] |= 1 << (nr * 8 + nf);
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

static KNIGHT: [u64; 64] =
    leaper_table(&[(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]);
static KING: [u64; 64] =
    leaper_table(&[(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]);
static PAWN: [[u64; 64]; 2] = [leaper_table(&[(-1, 1), (1, 1)]), leaper_table(&[(-1, -1), (1, -1)])];

const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (-1, 1), (1, -1), (-1, -1)];

/// Knight attacks from `sq`.
#[inline]
pub fn knight(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index()])
}

/// King attacks from `sq`.
#[inline]
pub fn king(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index()])
}

/// The squares a `color` pawn on `sq` attacks.
#[inline]
pub fn pawn(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index()])
}

/// Slider attacks by walking rays: the reference for the magic tables and the brute-force
/// legality check.
pub const fn sliding_slow(sq: usize, occupied: u64, dirs: &[(i32, i32); 4]) -> u64 {
    let mut attacks = 0u64;
    let mut d = 0;
    while d < 4 {
        let (mut f, mut r) = ((sq % 8) as i32, (sq / 8) as i32);
        loop {
            f += dirs[d].0;
            r += dirs[d].1;
            if f < 0 || f >= 8 || r < 0 || r >= 8 {
                break;
            }
            let bit = 1u64 << (r * 8 + f);
            attacks |= bit;
            if occupied & bit != 0 {
                break;
            }
        }
        d += 1;
    }
    attacks
}

/// Rook-move reference by ray walking.
pub const fn rook_slow(sq: usize, occupied: u64) -> u64 {
    sliding_slow(sq, occupied, &ROOK_DIRS)
}

/// Bishop-move reference by ray walking.
pub const fn bishop_slow(sq: usize, occupied: u64) -> u64 {
    sliding_slow(sq, occupied, &BISHOP_DIRS)
}

#[derive(Clone, Copy, Default)]
struct Magic {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

impl Magic {
    #[inline]
    fn index(&self, occupied: u64) -> usize {
        self.offset + ((occupied & self.mask).wrapping_mul(self.magic) >> self.shift) as usize
    }
}

struct Tables {
    rook: [Magic; 64],
    bishop: [Magic; 64],
    attacks: Vec<u64>,
    between: Vec<u64>,
    line: Vec<u64>,
}

/// The relevant-occupancy mask: the rays without their last square.
fn relevant_mask(sq: usize, dirs: &[(i32, i32); 4]) -> u64 {
    let mut mask = 0u64;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i32 + df, (sq / 8) as i32 + dr);
        while (0..8).contains(&(f + df)) && (0..8).contains(&(r + dr)) {
            mask |= 1 << (r * 8 + f);
            f += df;
            r += dr;
        }
    }
    mask
}

/// A small deterministic generator for magic candidates (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

fn find_magics(dirs: &[(i32, i32); 4], table: &mut Vec<u64>, rng: &mut Rng) -> [Magic; 64] {
    let mut magics = [Magic::default(); 64];
    let mut occupancies = Vec::with_capacity(4096);
    let mut references = Vec::with_capacity(4096);
    let mut epoch = vec![0u32; 4096];
    let mut current = 0u32;
    for (sq, m) in magics.iter_mut().enumerate() {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        occupancies.clear();
        references.clear();
        // Carry-rippler enumeration of every subset of the mask.
        let mut subset = 0u64;
        loop {
            occupancies.push(subset);
            references.push(sliding_slow(sq, subset, dirs));
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }
        let size = 1usize << bits;
        let offset = table.len();
        table.resize(offset + size, 0);
        let shift = 64 - bits;
        'search: loop {
            let magic = rng.sparse();
            if (mask.wrapping_mul(magic) >> 56).count_ones() < 6 {
                continue;
            }
            current += 1;
            for (occ, &att) in occupancies.iter().zip(&references) {
                let idx = (occ.wrapping_mul(magic) >> shift) as usize;
                if epoch[idx] < current {
                    epoch[idx] = current;
                    table[offset + idx] = att;
                } else if table[offset + idx] != att {
                    continue 'search;
                }
            }
            *m = Magic { mask, magic, shift, offset };
            break;
        }
    }
    magics
}

fn build() -> Tables {
    let mut attacks = Vec::with_capacity(110_000);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let rook = find_magics(&ROOK_DIRS, &mut attacks, &mut rng);
    let bishop = find_magics(&BISHOP_DIRS, &mut attacks, &mut rng);
    let mut between = vec![0u64; 64 * 64];
    let mut line = vec![0u64; 64 * 64];
    for a in 0..64 {
        for b in 0..64 {
            if a == b {
                continue;
            }
            let (ab, bb) = (1u64 << a, 1u64 << b);
            for slow in [rook_slow as fn(usize, u64) -> u64, bishop_slow] {
                if slow(a, 0) & bb != 0 {
                    between[a * 64 + b] = slow(a, bb) & slow(b, ab);
                    line[a * 64 + b] = (slow(a, 0) & slow(b, 0)) | ab | bb;
                }
            }
        }
    }
    Tables { rook, bishop, attacks, between, line }
}

static TABLES: OnceLock<Tables> = OnceLock::new();

#[inline]
fn tables() -> &'static Tables {
    TABLES.get_or_init(build)
}

/// Builds the tables now (otherwise the first attack query does): keeps start-up cost out of
/// measurements.
pub fn init() {
    tables();
}

/// Rook attacks from `sq` given the occupied squares.
#[inline]
pub fn rook(sq: Square, occupied: Bitboard) -> Bitboard {
    let t = tables();
    Bitboard(t.attacks[t.rook[sq.index()].index(occupied.0)])
}

/// Bishop attacks from `sq` given the occupied squares.
#[inline]
pub fn bishop(sq: Square, occupied: Bitboard) -> Bitboard {
    let t = tables();
    Bitboard(t.attacks[t.bishop[sq.index()].index(occupied.0)])
}

/// Queen attacks.
#[inline]
pub fn queen(sq: Square, occupied: Bitboard) -> Bitboard {
    rook(sq, occupied) | bishop(sq, occupied)
}

/// The squares strictly between two squares on a common line (empty if none).
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(tables().between[a.index() * 64 + b.index()])
}

/// The whole line through two squares (empty if they share none).
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(tables().line[a.index() * 64 + b.index()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_lookups_equal_ray_walks() {
        let mut rng = Rng(12345);
        for sq in Square::ALL {
            for _ in 0..200 {
                let occ = rng.sparse() | rng.sparse();
                assert_eq!(rook(sq, Bitboard(occ)).0, rook_slow(sq.index(), occ));
                assert_eq!(bishop(sq, Bitboard(occ)).0, bishop_slow(sq.index(), occ));
            }
        }
    }

    #[test]
    fn between_and_line() {
        let (a1, h8, c3) = (Square::ALL[0], Square::ALL[63], Square::ALL[18]);
        assert_eq!(between(a1, h8).count(), 6);
        assert!(line(a1, c3).has(h8));
        assert!(between(a1, Square::ALL[10]).is_empty());
    }
}
