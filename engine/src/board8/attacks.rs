//! Attack tables of the 8x8 board: leaper tables built by `const fn`, slider attacks by
//! "fancy" magic bitboards, filled on first use from embedded magic numbers.

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

static KNIGHT: [u64; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
static KING: [u64; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
static PAWN: [[u64; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

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

/// Magic numbers found by `find_magic` with the fixed seed below, embedded so start-up does not
/// search (the search takes a quarter of a second). `build` re-checks each one and searches
/// afresh should one ever fail, so a wrong constant costs time, never correctness.
const ROOK_MAGICS: [u64; 64] = [
    0x1080004008801020,
    0x0840092002c03000,
    0x1900200010400900,
    0x0880100008000480,
    0x4200100420080200,
    0x8100020100080400,
    0x0200040110886200,
    0x0200008040220411,
    0x0404800084400220,
    0x0000401000402000,
    0x0086001081220440,
    0x0408800800100280,
    0x000a001201040820,
    0x8848800200840080,
    0x4001000100040200,
    0x0442000102105084,
    0x9080010020804100,
    0x0040404000201009,
    0x0000808010002009,
    0x2200090021d00100,
    0x0008008008040080,
    0x0004004002010040,
    0x0011040008015042,
    0x00000a0001768104,
    0x0000800080204009,
    0x2010004140002001,
    0x9800200280100080,
    0x1000100080080080,
    0x0442000a00049020,
    0x2100040080020080,
    0x0800120400900148,
    0x0010040a00128541,
    0x2800804000800030,
    0x1010002000400041,
    0x4000200011004100,
    0x0610008410800800,
    0x0400802402800800,
    0xc100020080800400,
    0x0002000802000401,
    0x0182085882000401,
    0x0220204000808000,
    0x2860100040024022,
    0x0001002004110040,
    0x99101042000a0020,
    0x0004080004008080,
    0x0010040002008080,
    0x2012004881020004,
    0x8300842444820011,
    0x0088403882010200,
    0x0820400080210100,
    0x0110910040a00300,
    0x0801100280080480,
    0x0242009008200600,
    0x1002000489500200,
    0x0040800200010080,
    0x0091800041000080,
    0x0000209300488001,
    0x04c1002414824001,
    0x020020000b001041,
    0x7000100004200901,
    0x8002002004100802,
    0x30010002084c0007,
    0x0888221800813004,
    0x4000002840840112,
];

const BISHOP_MAGICS: [u64; 64] = [
    0xa010041108003100,
    0x006082020a002900,
    0x6810010619200000,
    0x08281a0520000408,
    0x0001104001000400,
    0x0018901008048400,
    0x00040a0210245280,
    0x000200210808a402,
    0x9140048410821200,
    0x0800091010820041,
    0x20504804832202c0,
    0x0100091401081000,
    0x8021011140000012,
    0x0810020804450400,
    0x208b0542109008a2,
    0x0080084a08040204,
    0x0040e2a80811244c,
    0x2505022008008108,
    0x0430220100420040,
    0x010a040420220040,
    0x1105000290400000,
    0x0093001200822120,
    0x4000a62048043004,
    0x280120048a015004,
    0x006090002a020814,
    0x44042000240800d0,
    0x01102800040a4400,
    0x1004080080220040,
    0x0001001011004024,
    0x0010044000805040,
    0x0914041200820100,
    0x0004821012821480,
    0x0024040500c05021,
    0x0088611002080200,
    0x0116080a00040020,
    0x4000020080080080,
    0x2450450140840040,
    0x0000880201484100,
    0x0222020404020092,
    0x8081110600002e00,
    0x2842101105000801,
    0x1100809008001025,
    0x00020202221c0400,
    0x0422014022009020,
    0x0210046102100c00,
    0xc004008082029102,
    0x00aa461801101200,
    0x0404080080201108,
    0x020542108c205002,
    0x0410544804100100,
    0x0040910841100000,
    0x0400200042021100,
    0x00004204850400c0,
    0x0200100410a42102,
    0x1040020801210102,
    0x0805040410420000,
    0x2884804130100200,
    0x800c262201242000,
    0x1058000194108800,
    0x0014221054420204,
    0x0104000012a02200,
    0x0200881003300100,
    0x0140400202840100,
    0x0402020801010201,
];

/// Fills the table slice of `sq` for `magic`; false on a destructive collision.
fn try_magic(
    sq: usize,
    dirs: &[(i32, i32); 4],
    magic: u64,
    table: &mut [u64],
    filled: &mut [bool],
) -> bool {
    let mask = relevant_mask(sq, dirs);
    let shift = 64 - mask.count_ones();
    filled.iter_mut().for_each(|f| *f = false);
    // Carry-rippler enumeration of every subset of the mask.
    let mut subset = 0u64;
    loop {
        let attack = sliding_slow(sq, subset, dirs);
        let idx = (subset.wrapping_mul(magic) >> shift) as usize;
        if !filled[idx] {
            filled[idx] = true;
            table[idx] = attack;
        } else if table[idx] != attack {
            return false;
        }
        subset = subset.wrapping_sub(mask) & mask;
        if subset == 0 {
            return true;
        }
    }
}

fn build_magics(
    dirs: &[(i32, i32); 4],
    known: &[u64; 64],
    table: &mut Vec<u64>,
    rng: &mut Rng,
) -> [Magic; 64] {
    let mut magics = [Magic::default(); 64];
    let mut filled = vec![false; 4096];
    for (sq, m) in magics.iter_mut().enumerate() {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        let size = 1usize << bits;
        let offset = table.len();
        table.resize(offset + size, 0);
        let slot = &mut table[offset..];
        let mut magic = known[sq];
        while !try_magic(sq, dirs, magic, slot, &mut filled[..size]) {
            magic = loop {
                let candidate = rng.sparse();
                if (mask.wrapping_mul(candidate) >> 56).count_ones() >= 6 {
                    break candidate;
                }
            };
        }
        *m = Magic {
            mask,
            magic,
            shift: 64 - bits,
            offset,
        };
    }
    magics
}

fn build() -> Tables {
    let mut attacks = Vec::with_capacity(110_000);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let rook = build_magics(&ROOK_DIRS, &ROOK_MAGICS, &mut attacks, &mut rng);
    let bishop = build_magics(&BISHOP_DIRS, &BISHOP_MAGICS, &mut attacks, &mut rng);
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
    Tables {
        rook,
        bishop,
        attacks,
        between,
        line,
    }
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

#[cfg(test)]
mod embedded_magics {
    #[test]
    fn embedded_magics_need_no_search() {
        let t = super::tables();
        for sq in 0..64 {
            assert_eq!(t.rook[sq].magic, super::ROOK_MAGICS[sq]);
            assert_eq!(t.bishop[sq].magic, super::BISHOP_MAGICS[sq]);
        }
    }
}
