//! Learned piece-square tables: one value per role, square and phase, on top of the tunable
//! shapes of [`pst`](super::pst).
//!
//! The shapes are a handful of weights per role so that SPSA can tune them by games and the
//! same idea serves both boards; they cannot say that a knight on f3 is worth more than one on
//! d3, or a king on g1 more than on h1. A full table per role can, but its 768 values are far
//! more than games can tune: they are fitted instead to the results of many games' quiet
//! positions (Texel's method, `engine tune-squares`), holding every other term fixed, and
//! stored as data beside the board they were fitted on. One parameter, `SquareTableScale`,
//! weighs the whole table, so UCI and SPSA can still switch it off or scale it.
//!
//! Beside the squares, the table holds each piece's worth by where it stands from either king
//! ([`king_cell`]): a pawn one rank ahead of its own king and a file aside shelters it, a
//! queen two ranks from the enemy king attacks it, a king that walks up to the pawns in an
//! end game is worth it. One table by square cannot say any of that once the kings move; a
//! table by king square and piece square (as the networks have it) is 40,000 values per role,
//! more than labelled positions can fit; the offset from a king is 120 cells per role and
//! king. Fitted with the squares on 443,473 labelled chess positions, held out 0.019555 ->
//! 0.018841 (a table by king distance alone: 0.019219).
//!
//! The other terms of the evaluation are linear weights: each safe square of mobility worth
//! the same, each attacker of the king the same, a passed pawn worth its rank. The table has
//! parts for what they cannot shape, each a handful of values the same fit learns: mobility
//! by count, the attack on the king by attackers and danger units, passed pawns by square and
//! king offsets, threats by the victim's cheapest attacker, pawns by shape and square, space,
//! and the material's make-up. Together held out 0.018841 -> 0.017858 (+38 Elo by SPRT).
//!
//! The taper between middle and end game goes by the pieces left, so the table could not say
//! what the pawns left change: a piece more with no pawns on the board rarely wins, a rook
//! comes into its own as pawns come off, a pawn more wins a pawn ending and draws with
//! opposite bishops. Knights to queens by the pawns on the board (both sides', 0..16) and the
//! pawn lead by the kind of ending ([`Ending`]) took the held-out loss from 0.017858 to
//! 0.015286 (by the pawns alone 0.015777; by each side's pawns apart, 81 cells a role,
//! 0.015834: no better), and the lead in pieces by the pairs of pawns on the board to
//! 0.013971: the largest steps of any part.
//!
//! Three parts read what stands around the material rather than the material itself: the
//! threats of the side to move apart (it takes first, the other side must parry), each passed
//! pawn by its rank and what holds its stop square ([`PasserFront`]), and the whole lead,
//! pawns included, by whether the pawns stand on one wing or both ([`PawnWings`]).

use crate::types::Role;

/// Squares of the 8x8 board, the only board with learned tables.
pub const SQUARES: usize = 64;

/// Roles of the 8x8 board (pawn..king, in [`Role::index`] order).
pub const ROLES: usize = 6;

/// Roles that read the king table (pawn..queen: a king is no piece beside itself).
pub const KING_ROLES: usize = 5;

/// Cells of the king table per role and king: 15 rank offsets (+7..-7) by 8 file distances.
pub const CELLS: usize = 120;

/// The two kings a piece is read from, as the king table's first index.
pub const OWN_KING: usize = 0;
/// See [`OWN_KING`].
pub const ENEMY_KING: usize = 1;

/// One role's values by king offset, `[king][role][cell]` (see [`king_cell`]).
pub type KingCells = [[[i16; CELLS]; KING_ROLES]; 2];

/// Roles read by their mobility (knight, bishop, rook, queen: [`Role::index`] minus one).
pub const MOBILITY_ROLES: usize = 4;

/// Mobility counts a role's row holds: a queen reaches at most 27 squares.
pub const MOBILITY: usize = 28;

/// Columns of the board-pawns table: the pawns on the board, both sides', 0 to 16.
pub const BOARD_PAWNS: usize = 17;

/// Rows of the ending table (see [`Ending`]).
pub const ENDINGS: usize = 5;

/// Columns of the ending table: the side's pawns less the enemy's, -4 (or fewer) to +4.
pub const PAWN_LEADS: usize = 9;

/// Rows of the piece-lead table: the side's piece material less the enemy's in pawns
/// (knight and bishop 3, rook 5, queen 9), -6 (or less) to +6 (or more).
pub const PIECE_LEADS: usize = 13;

/// Columns of the piece-lead table: pairs of pawns on the board, both sides', 0 to 8.
pub const PAWN_PAIRS: usize = 9;

/// The board-pawns table's column of `pawns` pawns on the board.
#[inline(always)]
pub const fn board_pawns_index(pawns: u32) -> usize {
    let n = pawns as usize;
    if n < BOARD_PAWNS {
        n
    } else {
        BOARD_PAWNS - 1
    }
}

/// The piece-lead table's column of `pawns` pawns on the board: their pairs.
#[inline(always)]
pub const fn pawn_pairs_index(pawns: u32) -> usize {
    let pairs = pawns as usize / 2;
    if pairs < PAWN_PAIRS {
        pairs
    } else {
        PAWN_PAIRS - 1
    }
}

/// The piece-lead table's row of a lead of `lead` pawns' worth of pieces.
#[inline(always)]
pub const fn piece_lead_index(lead: i32) -> usize {
    centred_index(lead, PIECE_LEADS)
}

/// The index of `value` in a row of `size` (odd) columns whose middle column is 0, the ends
/// taking every value beyond them.
#[inline(always)]
const fn centred_index(value: i32, size: usize) -> usize {
    let half = (size / 2) as i32;
    if value < -half {
        0
    } else if value > half {
        size - 1
    } else {
        (value + half) as usize
    }
}

/// What kind of game the pieces left make, as the ending table tells them apart: a pawn
/// more is a different advantage in each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Kings and pawns only.
    Pawns = 0,
    /// One bishop each, on squares of opposite colours, and nothing else beside the pawns.
    OppositeBishops = 1,
    /// One rook each and nothing else beside the pawns.
    Rooks = 2,
    /// Anything else without queens.
    NoQueens = 3,
    /// Anything else with a queen.
    Queens = 4,
}

/// The ending table's column of a pawn lead (the side's pawns less the enemy's).
#[inline(always)]
pub const fn pawn_lead_index(lead: i32) -> usize {
    centred_index(lead, PAWN_LEADS)
}

/// Rows of the king-danger table: pieces attacking the enemy king's zone, 0 to 5 or more.
pub const DANGER_ATTACKERS: usize = 6;

/// Columns of the king-danger table: zone squares hit plus twice the safe checks, 0 to 15 or
/// more (see [`danger_units`]).
pub const DANGER_UNITS: usize = 16;

/// The column of the king-danger table for `zone_hits` squares of the enemy king's zone
/// attacked (once per attacking piece) and `safe_checks` squares a check can be given from
/// where no enemy pawn guards: a check in hand counts for two hit squares.
#[inline(always)]
pub const fn danger_units(zone_hits: i32, safe_checks: i32) -> usize {
    let u = zone_hits + 2 * safe_checks;
    if u < 0 {
        0
    } else if u >= DANGER_UNITS as i32 {
        DANGER_UNITS - 1
    } else {
        u as usize
    }
}

/// The row of the king-danger table for `attackers` pieces on the enemy king's zone.
#[inline(always)]
pub const fn danger_attackers(attackers: i32) -> usize {
    if attackers < 0 {
        0
    } else if attackers >= DANGER_ATTACKERS as i32 {
        DANGER_ATTACKERS - 1
    } else {
        attackers as usize
    }
}

/// A table's phase: its middle-game or its end-game values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The middle game.
    Mg,
    /// The end game.
    Eg,
}

/// Parts of a table per phase (see [`SquareTable::parts`]).
pub const PARTS: usize = 16;

/// Values of each part per phase: the squares, the king cells, the mobility rows, the danger
/// rows, the passers' squares, the passers' king cells, the threats, the pawn shapes, the
/// space rows, the imbalances, the pieces by the pawns on the board, the endings, the
/// piece leads, the threats of the side to move, the passers' fronts and the whole leads.
pub const PART_SIZES: [usize; PARTS] = [
    ROLES * SQUARES,
    2 * KING_ROLES * CELLS,
    MOBILITY_ROLES * MOBILITY,
    DANGER_ATTACKERS * DANGER_UNITS,
    SQUARES,
    2 * CELLS,
    THREAT_CLASSES * THREAT_VICTIMS * 2,
    PAWN_SHAPES * SQUARES,
    SPACE_ROWS * SPACE,
    IMBALANCE * IMBALANCE * IMBALANCE,
    MOBILITY_ROLES * BOARD_PAWNS,
    ENDINGS * PAWN_LEADS,
    PIECE_LEADS * PAWN_PAIRS,
    THREAT_CLASSES * THREAT_VICTIMS * 2,
    PASSER_FRONTS * RANKS,
    WHOLE_LEADS * PAWN_WINGS,
];

/// Ranks of the 8x8 board: the passers' front table's columns, by the pawn's rank from its
/// own side.
pub const RANKS: usize = 8;

/// Rows of the passers' front table (see [`PasserFront`]).
pub const PASSER_FRONTS: usize = 4;

/// What stands in front of a passed pawn: whether it can advance, and at what risk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PasserFront {
    /// Its stop square is empty and no enemy piece attacks it.
    Free = 0,
    /// Its stop square is empty, attacked by the enemy and defended by the own side.
    Contested = 1,
    /// Its stop square is empty, attacked by the enemy and not defended.
    Stopped = 2,
    /// A piece (either side's) stands on its stop square.
    Blocked = 3,
}

/// Rows of the whole-lead table: the side's material less the enemy's in pawns (pawn 1,
/// knight and bishop 3, rook 5, queen 9), -8 (or less) to +8 (or more).
pub const WHOLE_LEADS: usize = 17;

/// Columns of the whole-lead table (see [`PawnWings`]).
pub const PAWN_WINGS: usize = 3;

/// Where the pawns of both sides stand: a lead with pawns on both wings wins where one with
/// pawns on one wing often draws (the defender's king holds one wing, not two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PawnWings {
    /// No pawn on the board.
    None = 0,
    /// Pawns on the a..d files only, or on the e..h files only.
    One = 1,
    /// Pawns on both.
    Both = 2,
}

/// The whole-lead table's row of a lead of `lead` pawns' worth.
#[inline(always)]
pub const fn whole_lead_index(lead: i32) -> usize {
    centred_index(lead, WHOLE_LEADS)
}

/// Attacker classes of the threat table: pawn, minor piece, rook, queen, king (the cheapest
/// that attacks a piece is the one counted).
pub const THREAT_CLASSES: usize = 5;

/// Victims of the threat table: knight, bishop, rook, queen.
pub const THREAT_VICTIMS: usize = 4;

/// Pawn shapes the table values by square (see [`PawnShape`]).
pub const PAWN_SHAPES: usize = 4;

/// What a pawn is to its neighbours, each valued by square on top of the square table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PawnShape {
    /// Beside an own pawn on its rank, or defended by one.
    Connected = 0,
    /// No own pawn on either adjacent file.
    Isolated = 1,
    /// Another own pawn on its file.
    Doubled = 2,
    /// Not connected, its stop square attacked by an enemy pawn, and no own pawn level with
    /// it or behind on an adjacent file to come to its aid.
    Backward = 3,
}

/// Columns of the space table: safe squares of the own half's centre (files c..f, ranks 2..4),
/// 0 to 15.
pub const SPACE: usize = 16;

/// Rows of the space table: fewer than six pieces (king included, pawns not), or more (space
/// is worth more with more pieces to use it).
pub const SPACE_ROWS: usize = 2;

/// Values of each difference (fewer, equal, more) of minor pieces, rooks and queens against
/// the other side's, from the side's own point of view.
pub const IMBALANCE: usize = 3;

/// The imbalance table's indices of count differences (each fewer, as many or more).
#[inline(always)]
pub const fn imbalance_index(minors: i32, rooks: i32, queens: i32) -> [usize; 3] {
    [
        (minors.signum() + 1) as usize,
        (rooks.signum() + 1) as usize,
        (queens.signum() + 1) as usize,
    ]
}

/// Whether every value of `values` is zero.
const fn all_zero(values: &[i16]) -> bool {
    let mut i = 0;
    while i < values.len() {
        if values[i] != 0 {
            return false;
        }
        i += 1;
    }
    true
}

/// One learned value per role and square (from the piece's own side: a1 is index 0 for both
/// colours once Black's squares are mirrored by rank), and per role and offset from each king,
/// for the middle and the end game, in centipawns before `SquareTableScale`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SquareTable {
    /// Middle-game values, `[role][square]`.
    pub mg: [[i16; SQUARES]; ROLES],
    /// End-game values, `[role][square]`.
    pub eg: [[i16; SQUARES]; ROLES],
    /// Middle-game values by offset from the own and the enemy king.
    pub king_mg: KingCells,
    /// End-game values by offset from the own and the enemy king.
    pub king_eg: KingCells,
    /// Middle-game values of a knight, bishop, rook or queen by the safe squares it reaches
    /// (`[role - 1][count]`): the linear mobility weights say each square is worth the same,
    /// where a piece with two squares is far worse off than one with four.
    pub mobility_mg: [[i16; MOBILITY]; MOBILITY_ROLES],
    /// End-game values by mobility.
    pub mobility_eg: [[i16; MOBILITY]; MOBILITY_ROLES],
    /// Middle-game values of the attack on the enemy king by attackers and danger units
    /// (`[danger_attackers][danger_units]`): the attack's worth grows with all of it at once,
    /// which no sum of one weight per attacker, per hit square and per check can say.
    pub danger_mg: [[i16; DANGER_UNITS]; DANGER_ATTACKERS],
    /// End-game values of the attack on the enemy king.
    pub danger_eg: [[i16; DANGER_UNITS]; DANGER_ATTACKERS],
    /// Middle-game values of a passed pawn by square (read from its king's wing, as the
    /// squares are), on top of its worth as a pawn.
    pub passer_mg: [i16; SQUARES],
    /// End-game values of a passed pawn by square.
    pub passer_eg: [i16; SQUARES],
    /// Middle-game values of a passed pawn by its offset from the own and the enemy king
    /// (`[king][cell]`, see [`king_cell`]): who reaches the pawn's path first.
    pub passer_king_mg: [[i16; CELLS]; 2],
    /// End-game values of a passed pawn by its offset from either king.
    pub passer_king_eg: [[i16; CELLS]; 2],
    /// Middle-game values of an enemy piece attacked, `[cheapest attacker][victim][defended]`:
    /// what is attacked by what and whether it is defended, beside the linear threat weights.
    pub threat_mg: Threats,
    /// End-game values of an enemy piece attacked.
    pub threat_eg: Threats,
    /// Middle-game values of a pawn by its shape and square (read from its king's wing).
    pub pawn_mg: [[i16; SQUARES]; PAWN_SHAPES],
    /// End-game values of a pawn by its shape and square.
    pub pawn_eg: [[i16; SQUARES]; PAWN_SHAPES],
    /// Middle-game values of the space behind the own pawns, `[many pieces][safe squares]`.
    pub space_mg: [[i16; SPACE]; SPACE_ROWS],
    /// End-game values of the space.
    pub space_eg: [[i16; SPACE]; SPACE_ROWS],
    /// Middle-game values of the material's make-up, `[minor pieces][rooks][queens]`, each
    /// fewer, as many or more than the enemy's: a rook against two minor pieces is not the
    /// sum of their values.
    pub imbalance_mg: Imbalance,
    /// End-game values of the material's make-up.
    pub imbalance_eg: Imbalance,
    /// Middle-game values of a knight, bishop, rook or queen by the pawns on the board, both
    /// sides' (`[role - 1][pawns]`): what a piece is worth changes with the pawns left (a
    /// knight wants pawns to work against, rooks want open files), and the taper by the
    /// pieces left cannot say it.
    pub board_pawns_mg: [[i16; BOARD_PAWNS]; MOBILITY_ROLES],
    /// End-game values of a piece by the pawns on the board.
    pub board_pawns_eg: [[i16; BOARD_PAWNS]; MOBILITY_ROLES],
    /// Middle-game values of a pawn lead by the kind of game (`[ending][lead]`, see
    /// [`Ending`], [`pawn_lead_index`]): a pawn more wins a pawn ending and draws many an
    /// ending of opposite bishops.
    pub ending_mg: [[i16; PAWN_LEADS]; ENDINGS],
    /// End-game values of a pawn lead by the kind of game.
    pub ending_eg: [[i16; PAWN_LEADS]; ENDINGS],
    /// Middle-game values of a lead in pieces by the pawns on the board (`[lead][pairs]`, see
    /// [`piece_lead_index`]): a piece more with pawns to win wins, without them it often
    /// draws; an exchange more is worth most with the board half cleared.
    pub piece_lead_mg: [[i16; PAWN_PAIRS]; PIECE_LEADS],
    /// End-game values of a lead in pieces by the pawns on the board.
    pub piece_lead_eg: [[i16; PAWN_PAIRS]; PIECE_LEADS],
    /// Middle-game values of an enemy piece attacked by the side to move, beside
    /// [`threat_mg`](Self::threat_mg): the side to move can take an attacked piece now, the
    /// other side must first meet the threats against its own.
    pub threat_stm_mg: Threats,
    /// End-game values of an enemy piece attacked by the side to move.
    pub threat_stm_eg: Threats,
    /// Middle-game values of a passed pawn by what stands before it and its rank
    /// (`[front][rank]`, see [`PasserFront`]): a free passer on the sixth is half a queen,
    /// a blockaded one a weakness.
    pub passer_front_mg: [[i16; RANKS]; PASSER_FRONTS],
    /// End-game values of a passed pawn by its front and rank.
    pub passer_front_eg: [[i16; RANKS]; PASSER_FRONTS],
    /// Middle-game values of the whole material lead (pawns included) by where the pawns
    /// stand (`[lead][wings]`, see [`whole_lead_index`], [`PawnWings`]).
    pub whole_lead_mg: [[i16; PAWN_WINGS]; WHOLE_LEADS],
    /// End-game values of the whole material lead by where the pawns stand.
    pub whole_lead_eg: [[i16; PAWN_WINGS]; WHOLE_LEADS],
}

/// The threat table of one phase (see [`SquareTable::threat_mg`]).
pub type Threats = [[[i16; 2]; THREAT_VICTIMS]; THREAT_CLASSES];

/// The (mg, eg) value of one threat in a threat part's two phases.
#[inline(always)]
fn threat_of(
    mg: &Threats,
    eg: &Threats,
    class: usize,
    victim: usize,
    defended: bool,
) -> (i32, i32) {
    let d = usize::from(defended);
    (
        i32::from(mg[class][victim][d]),
        i32::from(eg[class][victim][d]),
    )
}

/// The imbalance table of one phase (see [`SquareTable::imbalance_mg`]).
pub type Imbalance = [[[i16; IMBALANCE]; IMBALANCE]; IMBALANCE];

impl SquareTable {
    /// The table that adds nothing: where a fit starts when a board has none yet.
    pub const ZERO: SquareTable = SquareTable {
        mg: [[0; SQUARES]; ROLES],
        eg: [[0; SQUARES]; ROLES],
        king_mg: [[[0; CELLS]; KING_ROLES]; 2],
        king_eg: [[[0; CELLS]; KING_ROLES]; 2],
        mobility_mg: [[0; MOBILITY]; MOBILITY_ROLES],
        mobility_eg: [[0; MOBILITY]; MOBILITY_ROLES],
        danger_mg: [[0; DANGER_UNITS]; DANGER_ATTACKERS],
        danger_eg: [[0; DANGER_UNITS]; DANGER_ATTACKERS],
        passer_mg: [0; SQUARES],
        passer_eg: [0; SQUARES],
        passer_king_mg: [[0; CELLS]; 2],
        passer_king_eg: [[0; CELLS]; 2],
        threat_mg: [[[0; 2]; THREAT_VICTIMS]; THREAT_CLASSES],
        threat_eg: [[[0; 2]; THREAT_VICTIMS]; THREAT_CLASSES],
        pawn_mg: [[0; SQUARES]; PAWN_SHAPES],
        pawn_eg: [[0; SQUARES]; PAWN_SHAPES],
        space_mg: [[0; SPACE]; SPACE_ROWS],
        space_eg: [[0; SPACE]; SPACE_ROWS],
        imbalance_mg: [[[0; IMBALANCE]; IMBALANCE]; IMBALANCE],
        imbalance_eg: [[[0; IMBALANCE]; IMBALANCE]; IMBALANCE],
        board_pawns_mg: [[0; BOARD_PAWNS]; MOBILITY_ROLES],
        board_pawns_eg: [[0; BOARD_PAWNS]; MOBILITY_ROLES],
        ending_mg: [[0; PAWN_LEADS]; ENDINGS],
        ending_eg: [[0; PAWN_LEADS]; ENDINGS],
        piece_lead_mg: [[0; PAWN_PAIRS]; PIECE_LEADS],
        piece_lead_eg: [[0; PAWN_PAIRS]; PIECE_LEADS],
        threat_stm_mg: [[[0; 2]; THREAT_VICTIMS]; THREAT_CLASSES],
        threat_stm_eg: [[[0; 2]; THREAT_VICTIMS]; THREAT_CLASSES],
        passer_front_mg: [[0; RANKS]; PASSER_FRONTS],
        passer_front_eg: [[0; RANKS]; PASSER_FRONTS],
        whole_lead_mg: [[0; PAWN_WINGS]; WHOLE_LEADS],
        whole_lead_eg: [[0; PAWN_WINGS]; WHOLE_LEADS],
    };

    /// The table whose source reads `diagram`: each role's squares in the order
    /// [`table_source`](crate::tune::table_source) writes them, a board seen from the piece's
    /// side with the eighth rank first, turned back into index order (a1 first). An included
    /// table file must go through this: read as written, its index 0 would be a8, and every
    /// value would sit on the square mirrored by rank (the fitted chess table lost 300 and then
    /// 400 Elo that way: a king rewarded for the eighth rank, pawns for the second).
    pub const fn from_diagram(diagram: SquareTable) -> SquareTable {
        // The king cells and the other rows are written in index order already (the highest
        // rank offset first); the passers' and the pawn shapes' squares are diagrams like the
        // roles'.
        let mut t = SquareTable {
            passer_mg: [0; SQUARES],
            passer_eg: [0; SQUARES],
            pawn_mg: [[0; SQUARES]; PAWN_SHAPES],
            pawn_eg: [[0; SQUARES]; PAWN_SHAPES],
            ..diagram
        };
        let mut sq = 0;
        while sq < SQUARES {
            t.passer_mg[sq] = diagram.passer_mg[sq ^ 56];
            t.passer_eg[sq] = diagram.passer_eg[sq ^ 56];
            let mut shape = 0;
            while shape < PAWN_SHAPES {
                t.pawn_mg[shape][sq] = diagram.pawn_mg[shape][sq ^ 56];
                t.pawn_eg[shape][sq] = diagram.pawn_eg[shape][sq ^ 56];
                shape += 1;
            }
            sq += 1;
        }
        let mut r = 0;
        while r < ROLES {
            let mut sq = 0;
            while sq < SQUARES {
                let mirrored = sq ^ 56;
                t.mg[r][sq] = diagram.mg[r][mirrored];
                t.eg[r][sq] = diagram.eg[r][mirrored];
                sq += 1;
            }
            r += 1;
        }
        t
    }

    /// Whether every value is zero (a table not fitted yet, which the evaluation skips).
    pub const fn is_zero(&self) -> bool {
        let (mg, eg) = (self.parts(Phase::Mg), self.parts(Phase::Eg));
        let mut i = 0;
        while i < PARTS {
            if !all_zero(mg[i]) || !all_zero(eg[i]) {
                return false;
            }
            i += 1;
        }
        true
    }

    /// One phase's values, part by part in the order of [`PART_SIZES`]: what the fit lays out
    /// flat and what the table's file lists, so that neither can forget a part.
    pub const fn parts(&self, phase: Phase) -> [&[i16]; PARTS] {
        match phase {
            Phase::Mg => [
                self.mg.as_flattened(),
                self.king_mg.as_flattened().as_flattened(),
                self.mobility_mg.as_flattened(),
                self.danger_mg.as_flattened(),
                &self.passer_mg,
                self.passer_king_mg.as_flattened(),
                self.threat_mg.as_flattened().as_flattened(),
                self.pawn_mg.as_flattened(),
                self.space_mg.as_flattened(),
                self.imbalance_mg.as_flattened().as_flattened(),
                self.board_pawns_mg.as_flattened(),
                self.ending_mg.as_flattened(),
                self.piece_lead_mg.as_flattened(),
                self.threat_stm_mg.as_flattened().as_flattened(),
                self.passer_front_mg.as_flattened(),
                self.whole_lead_mg.as_flattened(),
            ],
            Phase::Eg => [
                self.eg.as_flattened(),
                self.king_eg.as_flattened().as_flattened(),
                self.mobility_eg.as_flattened(),
                self.danger_eg.as_flattened(),
                &self.passer_eg,
                self.passer_king_eg.as_flattened(),
                self.threat_eg.as_flattened().as_flattened(),
                self.pawn_eg.as_flattened(),
                self.space_eg.as_flattened(),
                self.imbalance_eg.as_flattened().as_flattened(),
                self.board_pawns_eg.as_flattened(),
                self.ending_eg.as_flattened(),
                self.piece_lead_eg.as_flattened(),
                self.threat_stm_eg.as_flattened().as_flattened(),
                self.passer_front_eg.as_flattened(),
                self.whole_lead_eg.as_flattened(),
            ],
        }
    }

    /// [`parts`](Self::parts), to write.
    pub fn parts_mut(&mut self, phase: Phase) -> [&mut [i16]; PARTS] {
        match phase {
            Phase::Mg => [
                self.mg.as_flattened_mut(),
                self.king_mg.as_flattened_mut().as_flattened_mut(),
                self.mobility_mg.as_flattened_mut(),
                self.danger_mg.as_flattened_mut(),
                &mut self.passer_mg,
                self.passer_king_mg.as_flattened_mut(),
                self.threat_mg.as_flattened_mut().as_flattened_mut(),
                self.pawn_mg.as_flattened_mut(),
                self.space_mg.as_flattened_mut(),
                self.imbalance_mg.as_flattened_mut().as_flattened_mut(),
                self.board_pawns_mg.as_flattened_mut(),
                self.ending_mg.as_flattened_mut(),
                self.piece_lead_mg.as_flattened_mut(),
                self.threat_stm_mg.as_flattened_mut().as_flattened_mut(),
                self.passer_front_mg.as_flattened_mut(),
                self.whole_lead_mg.as_flattened_mut(),
            ],
            Phase::Eg => [
                self.eg.as_flattened_mut(),
                self.king_eg.as_flattened_mut().as_flattened_mut(),
                self.mobility_eg.as_flattened_mut(),
                self.danger_eg.as_flattened_mut(),
                &mut self.passer_eg,
                self.passer_king_eg.as_flattened_mut(),
                self.threat_eg.as_flattened_mut().as_flattened_mut(),
                self.pawn_eg.as_flattened_mut(),
                self.space_eg.as_flattened_mut(),
                self.imbalance_eg.as_flattened_mut().as_flattened_mut(),
                self.board_pawns_eg.as_flattened_mut(),
                self.ending_eg.as_flattened_mut(),
                self.piece_lead_eg.as_flattened_mut(),
                self.threat_stm_eg.as_flattened_mut().as_flattened_mut(),
                self.passer_front_eg.as_flattened_mut(),
                self.whole_lead_eg.as_flattened_mut(),
            ],
        }
    }

    /// The (mg, eg) value of a knight, bishop, rook or queen (`role_index` 1..=4) reaching
    /// `count` safe squares.
    #[inline(always)]
    pub fn mobility_value(&self, role_index: usize, count: u32) -> (i32, i32) {
        let (r, n) = (role_index - 1, (count as usize).min(MOBILITY - 1));
        (
            i32::from(self.mobility_mg[r][n]),
            i32::from(self.mobility_eg[r][n]),
        )
    }

    /// The (mg, eg) value of an attack on the enemy king (see [`danger_attackers`],
    /// [`danger_units`]).
    #[inline(always)]
    pub fn danger_value(&self, attackers: usize, units: usize) -> (i32, i32) {
        (
            i32::from(self.danger_mg[attackers][units]),
            i32::from(self.danger_eg[attackers][units]),
        )
    }

    /// The (mg, eg) value of an enemy piece (`victim`: 0 knight .. 3 queen) whose cheapest
    /// attacker is of `class` (0 pawn, 1 minor, 2 rook, 3 queen, 4 king), `defended` or not.
    #[inline(always)]
    pub fn threat_value(&self, class: usize, victim: usize, defended: bool) -> (i32, i32) {
        threat_of(&self.threat_mg, &self.threat_eg, class, victim, defended)
    }

    /// The (mg, eg) value the side to move adds to [`threat_value`](Self::threat_value) for
    /// the same attacked piece.
    #[inline(always)]
    pub fn threat_stm_value(&self, class: usize, victim: usize, defended: bool) -> (i32, i32) {
        threat_of(
            &self.threat_stm_mg,
            &self.threat_stm_eg,
            class,
            victim,
            defended,
        )
    }
    /// The (mg, eg) value of a passed pawn on its own side's rank `rank` (0..7) with `front`
    /// before it.
    #[inline(always)]
    pub fn passer_front_value(&self, front: PasserFront, rank: usize) -> (i32, i32) {
        let (f, r) = (front as usize, rank.min(RANKS - 1));
        (
            i32::from(self.passer_front_mg[f][r]),
            i32::from(self.passer_front_eg[f][r]),
        )
    }
    /// The (mg, eg) value of a whole material `lead` (in pawns, the side's less the enemy's)
    /// with the pawns on `wings`.
    #[inline(always)]
    pub fn whole_lead_value(&self, lead: i32, wings: PawnWings) -> (i32, i32) {
        let (l, w) = (whole_lead_index(lead), wings as usize);
        (
            i32::from(self.whole_lead_mg[l][w]),
            i32::from(self.whole_lead_eg[l][w]),
        )
    }
    /// The (mg, eg) value of a pawn of `shape` on `relative` (read from its king's wing).
    #[inline(always)]
    pub fn pawn_value(&self, shape: PawnShape, relative: usize) -> (i32, i32) {
        let s = shape as usize;
        (
            i32::from(self.pawn_mg[s][relative]),
            i32::from(self.pawn_eg[s][relative]),
        )
    }

    /// The (mg, eg) value of `safe` squares of space with `many` pieces or not.
    #[inline(always)]
    pub fn space_value(&self, many: bool, safe: u32) -> (i32, i32) {
        let (r, n) = (usize::from(many), (safe as usize).min(SPACE - 1));
        (
            i32::from(self.space_mg[r][n]),
            i32::from(self.space_eg[r][n]),
        )
    }

    /// The (mg, eg) value of a material make-up: each of `minors`, `rooks`, `queens` is the
    /// side's count less the enemy's.
    #[inline(always)]
    pub fn imbalance_value(&self, minors: i32, rooks: i32, queens: i32) -> (i32, i32) {
        let [m, r, q] = imbalance_index(minors, rooks, queens);
        (
            i32::from(self.imbalance_mg[m][r][q]),
            i32::from(self.imbalance_eg[m][r][q]),
        )
    }

    /// The (mg, eg) value of a knight, bishop, rook or queen (`role_index` 1..=4) with
    /// `pawns` pawns on the board.
    #[inline(always)]
    pub fn board_pawns_value(&self, role_index: usize, pawns: u32) -> (i32, i32) {
        let (r, n) = (role_index - 1, board_pawns_index(pawns));
        (
            i32::from(self.board_pawns_mg[r][n]),
            i32::from(self.board_pawns_eg[r][n]),
        )
    }

    /// The (mg, eg) value of a pawn `lead` (the side's pawns less the enemy's) in `ending`.
    #[inline(always)]
    pub fn ending_value(&self, ending: Ending, lead: i32) -> (i32, i32) {
        let (e, l) = (ending as usize, pawn_lead_index(lead));
        (
            i32::from(self.ending_mg[e][l]),
            i32::from(self.ending_eg[e][l]),
        )
    }

    /// The (mg, eg) value of a `lead` in pieces (in pawns, the side's less the enemy's) with
    /// `pawns` pawns on the board.
    #[inline(always)]
    pub fn piece_lead_value(&self, lead: i32, pawns: u32) -> (i32, i32) {
        let (l, p) = (piece_lead_index(lead), pawn_pairs_index(pawns));
        (
            i32::from(self.piece_lead_mg[l][p]),
            i32::from(self.piece_lead_eg[l][p]),
        )
    }

    /// The (mg, eg) value of a passed pawn on `relative` (read as [`king_side`] orients it,
    /// as the squares are) whose cells from the own and the enemy king are `own` and `enemy`.
    #[inline(always)]
    pub fn passer_value(&self, relative: usize, own: usize, enemy: usize) -> (i32, i32) {
        let mg = i32::from(self.passer_mg[relative])
            + i32::from(self.passer_king_mg[OWN_KING][own])
            + i32::from(self.passer_king_mg[ENEMY_KING][enemy]);
        let eg = i32::from(self.passer_eg[relative])
            + i32::from(self.passer_king_eg[OWN_KING][own])
            + i32::from(self.passer_king_eg[ENEMY_KING][enemy]);
        (mg, eg)
    }

    /// The (mg, eg) value of a piece of `role` on the square with index `relative` from its
    /// own side, read as [`king_side`] orients it; nothing for a role the 8x8 board does not
    /// have.
    #[inline(always)]
    pub fn value(&self, role: Role, relative: usize) -> (i32, i32) {
        match (self.mg.get(role.index()), self.eg.get(role.index())) {
            (Some(mg), Some(eg)) => (i32::from(mg[relative]), i32::from(eg[relative])),
            _ => (0, 0),
        }
    }

    /// The (mg, eg) value of a piece of `role` (below the king) in `cell` from `king`
    /// ([`OWN_KING`] or [`ENEMY_KING`]).
    #[inline(always)]
    pub fn king_value(&self, king: usize, role_index: usize, cell: usize) -> (i32, i32) {
        (
            i32::from(self.king_mg[king][role_index][cell]),
            i32::from(self.king_eg[king][role_index][cell]),
        )
    }
}

/// The king table's cell of a piece on `piece` from a king on `king`, both squares as indices
/// from the piece's own side (a1 = 0, Black's mirrored by rank): the rows are the ranks the
/// piece stands ahead of the king, +7 first, the columns how many files it stands aside. The
/// file distance has no sign, so a position and its mirror by file read the same cells, as
/// they read the same squares through [`king_side`].
#[inline(always)]
pub const fn king_cell(piece: usize, king: usize) -> usize {
    let ahead = (piece / 8) as isize - (king / 8) as isize;
    let aside = ((piece % 8) as isize - (king % 8) as isize).unsigned_abs();
    (7 - ahead) as usize * 8 + aside
}

/// The index a piece's square reads in the table, given the file (0 = a) of its own king:
/// the table holds the values of a side whose king stands on the e..h files, and a side whose
/// king stands on a..d reads it mirrored by file. A square's worth depends on which wing the
/// king lives on (pawns before a castled king, pieces that guard it or attack the other one):
/// one table for both wings would average a king's shelter on g2 with the open flank of one
/// castled long. Mirrored, a king on b1 and one on g1 share what the data says of them,
/// where a second table would learn the long-castled wing from a few positions alone (on
/// 443,473 labelled chess positions the mirrored fit held out 0.019555, one table 0.019728).
#[inline(always)]
pub const fn king_side(relative: usize, king_file: u8) -> usize {
    if king_file < 4 {
        relative ^ 7
    } else {
        relative
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Leads are read from the middle column out, and any lead beyond the row's ends is read
    /// at its end (a side nine pawns up is as far up as the table says); pawns on the board
    /// by their number and by their pairs, the last column taking the rest.
    #[test]
    fn leads_and_pawn_counts_beyond_the_table_are_read_at_its_ends() {
        assert_eq!(pawn_lead_index(0), PAWN_LEADS / 2);
        assert_eq!(pawn_lead_index(1), PAWN_LEADS / 2 + 1);
        assert_eq!(pawn_lead_index(-8), 0);
        assert_eq!(pawn_lead_index(8), PAWN_LEADS - 1);
        assert_eq!(piece_lead_index(-3), PIECE_LEADS / 2 - 3);
        assert_eq!(piece_lead_index(-39), 0);
        assert_eq!(piece_lead_index(39), PIECE_LEADS - 1);
        assert_eq!(board_pawns_index(16), BOARD_PAWNS - 1);
        assert_eq!(pawn_pairs_index(3), 1);
        assert_eq!(pawn_pairs_index(16), PAWN_PAIRS - 1);
    }

    #[test]
    fn a_king_on_the_queen_side_reads_the_table_mirrored_by_file() {
        // a1 and h1, d4 and e4: the e-file king reads as stored, the d-file one mirrored.
        assert_eq!(king_side(0, 4), 0);
        assert_eq!(king_side(0, 3), 7);
        assert_eq!(king_side(27, 7), 27);
        assert_eq!(king_side(27, 0), 28);
        for sq in 0..SQUARES {
            for file in 0..8 {
                assert_eq!(king_side(king_side(sq, file), file), sq);
            }
        }
    }

    #[test]
    fn king_cells_are_rank_offset_then_file_distance() {
        // A pawn on g2 before a king on g1: one rank ahead, no file aside.
        assert_eq!(king_cell(14, 6), 6 * 8);
        // Seven ranks ahead and seven files aside (h8 from a1), seven behind (a1 from h8).
        assert_eq!(king_cell(63, 0), 7);
        assert_eq!(king_cell(0, 63), 14 * 8 + 7);
        // The mirror by file reads the same cell.
        for piece in 0..SQUARES {
            for king in 0..SQUARES {
                let cell = king_cell(piece, king);
                assert!(cell < CELLS);
                assert_eq!(king_cell(piece ^ 7, king ^ 7), cell);
            }
        }
    }

    #[test]
    fn a_table_is_zero_until_one_value_is_not() {
        assert!(SquareTable::ZERO.is_zero());
        for (role, sq) in [(0, 0), (ROLES - 1, SQUARES - 1)] {
            let mut t = SquareTable::ZERO;
            t.eg[role][sq] = -1;
            assert!(!t.is_zero());
            let mut t = SquareTable::ZERO;
            t.mg[role][sq] = 1;
            assert!(!t.is_zero());
        }
        for (king, role, cell) in [(OWN_KING, 0, 0), (ENEMY_KING, KING_ROLES - 1, CELLS - 1)] {
            let mut t = SquareTable::ZERO;
            t.king_eg[king][role][cell] = 2;
            assert!(!t.is_zero());
            let mut t = SquareTable::ZERO;
            t.king_mg[king][role][cell] = -2;
            assert!(!t.is_zero());
        }
    }
}
