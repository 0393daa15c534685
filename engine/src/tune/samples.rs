//! Reading labelled positions and turning each quiet one into what the fit needs: the fixed
//! part of its evaluation, its phase and the table entries its pieces use.

use super::TuneError;
use crate::board8::learned::{self, Feature};
use crate::board8::Bitboard;
use crate::board8::Board;
use crate::eval::squares::{
    board_pawns_index, danger_attackers, danger_units, imbalance_index, king_cell, king_side,
    pawn_lead_index, pawn_pairs_index, piece_lead_index, BOARD_PAWNS, CELLS, DANGER_UNITS,
    ENEMY_KING, IMBALANCE, KING_ROLES, MOBILITY, OWN_KING, PARTS, PART_SIZES, PAWN_LEADS,
    PAWN_PAIRS, ROLES, SPACE, SQUARES, THREAT_VICTIMS,
};
use crate::eval::squares::{whole_lead_index, PasserFront, PAWN_WINGS, RANKS};
use crate::eval::terms::{attack_classes, passer_fronts, threats};
use crate::eval::{PawnCache, SearchPosition, MAX_PHASE};
use crate::params::Params;
use crate::position::{MoveList, Position};
use crate::types::Color;
use crate::variant::Rules;

/// One position and its game's result from White's side (1, 0.5 or 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled<'a> {
    /// The FEN.
    pub fen: &'a str,
    /// The result: 1 White won, 0.5 drawn, 0 Black won.
    pub result: f32,
}

/// Parses `FEN [1.0]`, `FEN [0.5]` or `FEN [0.0]` (also `[1]`, `[0]`, `[1-0]`, `[1/2-1/2]`,
/// `[0-1]`), or any expected score in between (`FEN [0.7311]`: what `worker label` writes
/// from an engine's evaluation); `None` for a blank line or a `#` comment.
pub fn parse_line(line: usize, text: &str) -> Result<Option<Labelled<'_>>, TuneError> {
    let t = text.trim();
    if t.is_empty() || t.starts_with('#') {
        return Ok(None);
    }
    let syntax = |detail: &str| TuneError::Syntax {
        line,
        detail: detail.to_string(),
    };
    let open = t.rfind('[').ok_or_else(|| {
        syntax("no result: expected `FEN [1.0]`, `[0.5]`, `[0.0]` or a score between")
    })?;
    let label = t[open + 1..]
        .strip_suffix(']')
        .ok_or_else(|| syntax("the result has no closing `]`"))?
        .trim();
    let result = match label {
        "1" | "1.0" | "1-0" => 1.0,
        "0.5" | "1/2-1/2" => 0.5,
        "0" | "0.0" | "0-1" => 0.0,
        other => match other.parse::<f32>() {
            Ok(v) if (0.0..=1.0).contains(&v) => v,
            _ => {
                return Err(syntax(&format!(
                    "result {other:?} is none of 1-0, 1/2-1/2, 0-1 and no score from 0.0 to 1.0"
                )))
            }
        },
    };
    let fen = t[..open].trim();
    if fen.is_empty() {
        return Err(syntax("no FEN before the result"));
    }
    Ok(Some(Labelled { fen, result }))
}

/// Whether `label` is a game's result (0, 1/2 or 1) rather than an engine's expected score.
fn is_outcome(label: f32) -> bool {
    label == 0.0 || label == 0.5 || label == 1.0
}

/// Where part `part` of [`SquareTable::parts`] starts in a flat table.
const fn part_start(part: usize) -> usize {
    let mut start = 0;
    let mut i = 0;
    while i < part {
        start += PART_SIZES[i];
        i += 1;
    }
    start
}

/// A square's index in a flat table (see [`ENTRIES`]).
#[inline]
pub(super) fn entry(role_index: usize, relative: usize) -> usize {
    part_start(0) + role_index * SQUARES + relative
}

/// Entries of the squares part of a flat table; the king cells follow them.
pub(super) const SQUARE_ENTRIES: usize = PART_SIZES[0];

/// Entries of a flat table: every part of [`SquareTable::parts`] in its order.
pub(super) const ENTRIES: usize = part_start(PARTS);

/// A king cell's index in a flat table (after the squares).
#[inline]
pub(super) fn king_entry(king: usize, role_index: usize, cell: usize) -> usize {
    part_start(1) + (king * KING_ROLES + role_index) * CELLS + cell
}

/// The flat index of a knight, bishop, rook or queen (`role_index` 1..=4) reaching `count`
/// safe squares.
#[inline]
pub(super) fn mobility_entry(role_index: usize, count: u32) -> usize {
    part_start(2) + (role_index - 1) * MOBILITY + (count as usize).min(MOBILITY - 1)
}

/// The flat index of an attack's danger row and column.
#[inline]
pub(super) fn danger_entry(attackers: usize, units: usize) -> usize {
    part_start(3) + attackers * DANGER_UNITS + units
}

/// The flat index of a passed pawn's square.
#[inline]
pub(super) fn passer_entry(relative: usize) -> usize {
    part_start(4) + relative
}

/// The flat index of a passed pawn's cell from `king`.
#[inline]
pub(super) fn passer_king_entry(king: usize, cell: usize) -> usize {
    part_start(5) + king * CELLS + cell
}

/// The flat index of a threat: the victim's cheapest attacker class, the victim, defended.
#[inline]
pub(super) fn threat_entry(class: usize, victim: usize, defended: bool) -> usize {
    part_start(6) + threat_offset(class, victim, defended)
}

/// The flat index of a threat of the side to move (beside its [`threat_entry`]).
#[inline]
pub(super) fn threat_stm_entry(class: usize, victim: usize, defended: bool) -> usize {
    part_start(13) + threat_offset(class, victim, defended)
}

/// A threat's index within a threat part (see [`Threats`](crate::eval::squares::Threats)).
#[inline]
fn threat_offset(class: usize, victim: usize, defended: bool) -> usize {
    (class * THREAT_VICTIMS + victim) * 2 + usize::from(defended)
}

/// The flat index of a passed pawn's front and rank.
#[inline]
pub(super) fn passer_front_entry(front: PasserFront, rank: usize) -> usize {
    part_start(14) + front as usize * RANKS + rank.min(RANKS - 1)
}

/// Pushes the flat indices of a feature of [`learned::features`] (a passed pawn has three).
#[inline]
pub(super) fn feature_entries(feature: Feature, out: &mut Vec<u16>) {
    let e = match feature {
        Feature::Passer {
            relative,
            own,
            enemy,
        } => {
            out.push(passer_entry(relative) as u16);
            out.push(passer_king_entry(OWN_KING, own) as u16);
            passer_king_entry(ENEMY_KING, enemy)
        }
        Feature::Pawn(shape, relative) => part_start(7) + shape as usize * SQUARES + relative,
        Feature::Space { many, safe } => {
            part_start(8) + usize::from(many) * SPACE + (safe as usize).min(SPACE - 1)
        }
        Feature::Imbalance(minors, rooks, queens) => {
            let [m, r, q] = imbalance_index(minors, rooks, queens);
            part_start(9) + (m * IMBALANCE + r) * IMBALANCE + q
        }
        Feature::BoardPawns { role_index, pawns } => {
            part_start(10) + (role_index - 1) * BOARD_PAWNS + board_pawns_index(pawns)
        }
        Feature::Ending(ending, lead) => {
            part_start(11) + ending as usize * PAWN_LEADS + pawn_lead_index(lead)
        }
        Feature::PieceLead { lead, pawns } => {
            part_start(12) + piece_lead_index(lead) * PAWN_PAIRS + pawn_pairs_index(pawns)
        }
        Feature::WholeLead { lead, wings } => {
            part_start(15) + whole_lead_index(lead) * PAWN_WINGS + wings as usize
        }
    };
    out.push(e as u16);
}

/// Marks an entry used by a Black piece (its value counts negatively from White's side).
const BLACK: u16 = 1 << 15;

// Every flat index fits below the colour bit.
const _: () = assert!(ENTRIES <= BLACK as usize);

/// The quiet positions of a data set, laid out flat for the fit.
#[derive(Clone, Debug)]
pub struct Samples {
    /// The evaluation without the table, from White's side, in centipawns.
    pub base: Vec<f32>,
    /// The middle-game share of the taper (phase / MAX_PHASE, clamped).
    pub mg_share: Vec<f32>,
    /// The table's weight in the evaluation (`SquareTableScale` / 100): the fit's model must
    /// scale the table as the engine does, or it fits a table for another evaluation.
    pub table_scale: f64,
    /// The game's result from White's side.
    pub result: Vec<f32>,
    /// Where each sample's entries start in `entries` (one more than samples).
    pub offsets: Vec<u32>,
    /// Table entries, by flat index into the learned table, with the top bit set for Black's pieces.
    pub entries: Vec<u16>,
    /// The game each sample came from, numbered in the order the games' lines come: what the
    /// hold-out splits by (see [`Samples::read`]).
    pub game: Vec<u32>,
    /// Games seen (the next game's number).
    pub games: u32,
    /// Lines read that held a position.
    pub read: usize,
    /// Positions skipped as not quiet (in check, or a capture that wins material).
    pub not_quiet: usize,
}

impl Default for Samples {
    fn default() -> Self {
        Samples {
            base: Vec::new(),
            mg_share: Vec::new(),
            table_scale: 1.0,
            result: Vec::new(),
            offsets: vec![0],
            entries: Vec::new(),
            game: Vec::new(),
            games: 0,
            read: 0,
            not_quiet: 0,
        }
    }
}

impl Samples {
    /// Positions kept.
    pub fn len(&self) -> usize {
        self.base.len()
    }

    /// Whether none were kept.
    pub fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// Adds the samples of `other` after these.
    pub fn append(&mut self, other: Samples) {
        if self.is_empty() {
            // Read under the same parameters as the rest (the one caller reads every file
            // with one set); an empty set has no scale of its own yet.
            self.table_scale = other.table_scale;
        }
        let shift = self.entries.len() as u32;
        self.base.extend(other.base);
        self.mg_share.extend(other.mg_share);
        self.result.extend(other.result);
        self.offsets
            .extend(other.offsets.iter().skip(1).map(|o| o + shift));
        self.entries.extend(other.entries);
        let games = self.games;
        self.game.extend(other.game.iter().map(|g| g + games));
        self.games += other.games;
        self.read += other.read;
        self.not_quiet += other.not_quiet;
    }

    /// What the reader counted.
    pub fn counts(&self) -> Counts {
        Counts {
            games: self.games,
            read: self.read,
            not_quiet: self.not_quiet,
        }
    }

    /// The entries of sample `i`: (flat index, +1 for White or -1 for Black).
    #[inline]
    pub fn entries_of(&self, i: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        self.entries[a..b].iter().map(|&e| {
            if e & BLACK != 0 {
                (usize::from(e & !BLACK), -1.0)
            } else {
                (usize::from(e), 1.0)
            }
        })
    }

    /// Reads every line of `text` under `rules`, keeping the quiet positions; `params` are the
    /// evaluation's weights (their `SquareTableScale` is set to zero here, so the base is the
    /// evaluation without the table). Refuses a malformed line or FEN with its line number.
    ///
    /// The positions of one game share its result, so a hold-out that takes every tenth
    /// position tests the fit on games it trained on: the fitted chess table that its SPRT
    /// rejected by 300 Elo had looked better held out. The lines carry no game, but
    /// `worker positions` (and the usual extractors) write a game's positions in order, so a
    /// game is told from the next by its result changing or its move number going back. An
    /// engine's score (`worker label`: any value between the results) changes every line, so
    /// only a change from one game result to another counts.
    pub fn read(text: &str, rules: Rules, params: &Params) -> Result<Samples, TuneError> {
        let mut fixed = params.clone();
        fixed.square_table_scale = 0;
        let mut pawns = PawnCache::new();
        let mut out = Samples {
            table_scale: f64::from(params.square_table_scale) / 100.0,
            ..Samples::default()
        };
        let counts = quiet_positions(text, rules, &fixed, |board, game, result| {
            out.push(&board, &fixed, &mut pawns, game, result);
        })?;
        out.games = counts.games;
        out.read = counts.read;
        out.not_quiet = counts.not_quiet;
        Ok(out)
    }

    fn push(&mut self, board: &Board, p: &Params, pawns: &mut PawnCache, game: u32, result: f32) {
        self.game.push(game);
        let eval = board.evaluate(p, pawns);
        let white = if board.turn() == Color::White {
            eval
        } else {
            -eval
        };
        let phase = board.eval_sums().phase().clamp(0, MAX_PHASE);
        self.base.push(white as f32);
        self.mg_share.push(phase as f32 / MAX_PHASE as f32);
        self.result.push(result);
        // Each side reads the squares from its king's wing (see `king_side`), and the king
        // cells from both kings, all from its own side.
        let kings = [Color::White, Color::Black].map(|c| board.king_of(c));
        for sq in Board::squares() {
            let Some(piece) = board.piece_at(*sq) else {
                continue;
            };
            let role = piece.role.index();
            if role >= ROLES {
                continue;
            }
            let side = usize::from(piece.color == Color::Black);
            let (own, enemy) = (kings[side], kings[1 - side]);
            let relative = sq.relative(piece.color).index();
            // Below `BLACK` (asserted where it is declared).
            let sign = |e: usize| match piece.color {
                Color::White => e as u16,
                Color::Black => e as u16 | BLACK,
            };
            let index = king_side(relative, own.file_index());
            self.entries.push(sign(entry(role, index)));
            if role < KING_ROLES {
                for (king, at) in [(OWN_KING, own), (ENEMY_KING, enemy)] {
                    let cell = king_cell(relative, at.relative(piece.color).index());
                    self.entries.push(sign(king_entry(king, role, cell)));
                }
            }
        }
        let classes = [Color::White, Color::Black].map(|c| attack_classes(board, c));
        let defences = classes.map(|c| c.iter().fold(Bitboard::EMPTY, |a, &b| a | b));
        for color in [Color::White, Color::Black] {
            let first = self.entries.len();
            activity_entries(board, color, &mut self.entries);
            learned::features(board, color, &mut |f| feature_entries(f, &mut self.entries));
            let (own, enemy) = (color.index(), (!color).index());
            let to_move = board.turn() == color;
            threats(
                board,
                color,
                &classes[own],
                defences[enemy],
                |class, victim, defended| {
                    self.entries
                        .push(threat_entry(class, victim, defended) as u16);
                    if to_move {
                        self.entries
                            .push(threat_stm_entry(class, victim, defended) as u16);
                    }
                },
            );
            passer_fronts(
                board,
                color,
                defences[own],
                defences[enemy],
                |front, rank| {
                    self.entries.push(passer_front_entry(front, rank) as u16);
                },
            );
            if color == Color::Black {
                self.entries[first..].iter_mut().for_each(|e| *e |= BLACK);
            }
        }
        self.offsets.push(self.entries.len() as u32);
    }
}

/// Pushes the flat indices (all below [`BLACK`]) of `color`'s mobility rows and its attack's
/// danger cell: what the evaluation reads of those parts (`eval::terms`), computed here from
/// the board alone.
fn activity_entries(board: &Board, color: Color, out: &mut Vec<u16>) {
    use crate::board8::attacks;
    use crate::eval::terms::EvalBoard;
    use crate::types::Role;
    let them = !color;
    let occ = board.occupied();
    let their_pawns = board.pieces(them, Role::Pawn);
    let safe = !board.color_bb(color) & !<Board as EvalBoard>::pawn_attack_set(them, their_pawns);
    let their_king = board.king_of(them);
    let zone = attacks::king(their_king) | their_king.bb();
    let (mut attackers, mut hits) = (0, 0);
    let mut checks = crate::board8::square::Bitboard::EMPTY;
    let diagonals = attacks::bishop(their_king, occ);
    let lines = attacks::rook(their_king, occ);
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for sq in board.pieces(color, role) {
            let (reach, checking) = match role {
                Role::Knight => (attacks::knight(sq), attacks::knight(their_king)),
                Role::Bishop => (attacks::bishop(sq, occ), diagonals),
                Role::Rook => (attacks::rook(sq, occ), lines),
                _ => (attacks::queen(sq, occ), diagonals | lines),
            };
            out.push(mobility_entry(role.index(), (reach & safe).count()) as u16);
            let h = (reach & zone).count() as i32;
            if h > 0 {
                attackers += 1;
                hits += h;
            }
            checks |= reach & checking;
        }
    }
    let units = danger_units(hits, (checks & safe).count() as i32);
    out.push(danger_entry(danger_attackers(attackers), units) as u16);
}

/// What [`quiet_positions`] counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Games told apart (see [`Samples::read`]).
    pub games: u32,
    /// Lines that held a position.
    pub read: usize,
    /// Positions skipped as not quiet.
    pub not_quiet: usize,
}

/// Calls `keep` with every quiet position of `text` (`FEN [result]` lines under `rules`), the
/// number of its game and its result, in order; `params` decide what SEE calls winning
/// material. Refuses a malformed line or FEN with its line number. The one reader of every fit
/// (the square table's, the network's and the weights', the last on either board), so they
/// split games and skip positions alike.
pub fn quiet_positions<P: SearchPosition>(
    text: &str,
    rules: Rules,
    params: &Params,
    mut keep: impl FnMut(P, u32, f32),
) -> Result<Counts, TuneError> {
    let mut counts = Counts::default();
    let mut last: Option<(f32, u32)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let Some(l) = parse_line(line, raw)? else {
            continue;
        };
        counts.read += 1;
        let moves = fullmove(l.fen);
        let same_game = last.is_some_and(|(result, before)| {
            let other_result = result != l.result && is_outcome(result) && is_outcome(l.result);
            !other_result && moves >= before
        });
        if !same_game {
            counts.games += 1;
        }
        last = Some((l.result, moves));
        let board = P::from_fen(rules, l.fen).map_err(|source| TuneError::Fen { line, source })?;
        if !is_quiet(&board, params) {
            counts.not_quiet += 1;
            continue;
        }
        // Counted above: this line's game is the last one started.
        keep(board, counts.games - 1, l.result);
    }
    Ok(counts)
}

/// The move number of a FEN (its sixth field); 0 when it has none (an EPD-style line), so
/// such lines split games by their results alone.
fn fullmove(fen: &str) -> u32 {
    fen.split_whitespace()
        .nth(5)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Whether the static evaluation of `board` is a fair guess of its worth: not in check, and no
/// capture or promotion that wins material by exchange (the search would play it first).
fn is_quiet<P: SearchPosition>(board: &P, p: &Params) -> bool {
    if board.in_check() {
        return false;
    }
    let mut moves = MoveList::new();
    board.tactical_moves(&mut moves);
    !moves.iter().any(|&mv| board.see_ge(mv, 1, p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::squares::{Ending, PawnShape, PawnWings};
    use crate::variant::Variant;

    /// The one flat index of a feature other than a passed pawn.
    fn feature_entry(feature: Feature) -> usize {
        let mut out = Vec::new();
        feature_entries(feature, &mut out);
        assert_eq!(out.len(), 1, "{feature:?}");
        usize::from(out[0])
    }

    #[test]
    fn lines_parse_in_every_spelling_and_refuse_with_the_line() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        for (label, want) in [
            ("1.0", 1.0),
            ("1-0", 1.0),
            ("0.5", 0.5),
            ("1/2-1/2", 0.5),
            ("0", 0.0),
            ("0-1", 0.0),
        ] {
            let text = format!("{start} [{label}]");
            let l = parse_line(3, &text).expect("parses").expect("a position");
            assert_eq!((l.fen, l.result), (start, want), "{label}");
        }
        assert!(parse_line(1, "  ").expect("blank").is_none());
        assert!(parse_line(1, "# comment").expect("comment").is_none());
        let scored = format!("{start} [0.7311]");
        let l = parse_line(4, &scored).expect("parses");
        assert_eq!(l.map(|l| l.result), Some(0.7311), "an expected score");
        for bad in [
            start.to_string(),
            format!("{start} [2.0]"),
            format!("{start} [-0.1]"),
            format!("{start} [NaN]"),
            format!("{start} [inf]"),
            format!("{start} [0.5x]"),
            "[1.0]".into(),
        ] {
            let e = parse_line(7, &bad).expect_err("refused");
            assert!(e.to_string().starts_with("positions line 7:"), "{e}");
        }
    }

    #[test]
    fn samples_keep_quiet_positions_with_their_pieces() {
        let rules = Rules::default_for(Variant::Chess);
        let text = "\
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [0.5]
# White's queen can take a free knight: not quiet
rnbqkb1r/pppppppp/8/8/4n3/8/PPPPQPPP/RNB1KBNR w KQkq - 0 1 [1.0]
4k3/8/8/8/8/8/4P3/4K3 b - - 0 1 [1.0]
";
        // Without the network on top, so that the start position's base is the tempo alone.
        let params = Params {
            net_scale: 0,
            ..Params::default()
        };
        let s = Samples::read(text, rules, &params).expect("reads");
        assert_eq!((s.read, s.not_quiet, s.len()), (3, 1, 2));
        // The start position, balanced but for the tempo, full middle game: 32 squares, two
        // king cells for each of the 30 pieces below the kings, the mobility of the 14 pieces
        // between pawn and king, each side's danger cell (no passed pawn), 16 connected pawns,
        // each side's space and make-up (no threat), the 14 pieces by the 16 pawns on the
        // board, each side's pawn lead (queens on: the last kind of ending), its lead in
        // pieces and its whole lead.
        assert_eq!(
            s.entries_of(0).count(),
            32 + 2 * 30 + 14 + 2 + 16 + 2 + 2 + 14 + 2 + 2 + 2
        );
        let level = feature_entry(Feature::WholeLead {
            lead: 0,
            wings: PawnWings::Both,
        });
        assert_eq!(s.entries_of(0).filter(|&(e, _)| e == level).count(), 2);
        let knight = feature_entry(Feature::BoardPawns {
            role_index: 1,
            pawns: 16,
        });
        assert_eq!(s.entries_of(0).filter(|&(e, _)| e == knight).count(), 4);
        let queens = feature_entry(Feature::Ending(Ending::Queens, 0));
        assert_eq!(s.entries_of(0).filter(|&(e, _)| e == queens).count(), 2);
        assert_eq!(s.entries_of(0).map(|(_, sign)| sign).sum::<f32>(), 0.0);
        assert_eq!(s.base[0], Params::default().tempo as f32);
        assert_eq!(s.mg_share[0], 1.0);
        // King and pawn against king: Black to move, so the base is from White's side.
        assert!(s.base[1] > 0.0);
        assert_eq!(s.mg_share[1], 0.0);
        let mut e: Vec<_> = s.entries_of(1).collect();
        e.sort_by_key(|x| x.0);
        // White's pawn on e2 (index 12), White's king on e1 (5 * 64 + 4), Black's king on e8
        // mirrored to e1; the pawn one rank ahead of its king (row 6 of the own king's cells)
        // and six behind the enemy one (row 13 of its cells), on their file; as a passed pawn
        // on e2 and in the same cells; each side's (empty) attack on the other king.
        let own = SQUARE_ENTRIES + 6 * 8;
        let enemy = SQUARE_ENTRIES + KING_ROLES * CELLS + 13 * 8;
        let mut want = vec![
            (12, 1.0),
            (5 * 64 + 4, 1.0),
            (5 * 64 + 4, -1.0),
            (own, 1.0),
            (enemy, 1.0),
            (danger_entry(0, 0), 1.0),
            (danger_entry(0, 0), -1.0),
            (passer_entry(12), 1.0),
            (passer_king_entry(OWN_KING, 6 * 8), 1.0),
            (passer_king_entry(ENEMY_KING, 13 * 8), 1.0),
            // An isolated pawn; space: of the twelve squares of files c..f on each side's
            // ranks 2..4, White's e2 pawn stands on one; few pieces; as much of everything.
            (feature_entry(Feature::Pawn(PawnShape::Isolated, 12)), 1.0),
            (
                feature_entry(Feature::Space {
                    many: false,
                    safe: 11,
                }),
                1.0,
            ),
            (
                feature_entry(Feature::Space {
                    many: false,
                    safe: 12,
                }),
                -1.0,
            ),
            (feature_entry(Feature::Imbalance(0, 0, 0)), 1.0),
            (feature_entry(Feature::Imbalance(0, 0, 0)), -1.0),
            // A pawn ending: White a pawn ahead, Black a pawn behind.
            (feature_entry(Feature::Ending(Ending::Pawns, 1)), 1.0),
            (feature_entry(Feature::Ending(Ending::Pawns, -1)), -1.0),
            // No pieces either side: level in pieces, one pawn on the board.
            (feature_entry(Feature::PieceLead { lead: 0, pawns: 1 }), 1.0),
            (
                feature_entry(Feature::PieceLead { lead: 0, pawns: 1 }),
                -1.0,
            ),
            // A pawn ahead in all, pawns on one wing; the passer's stop square e3 is free.
            (
                feature_entry(Feature::WholeLead {
                    lead: 1,
                    wings: PawnWings::One,
                }),
                1.0,
            ),
            (
                feature_entry(Feature::WholeLead {
                    lead: -1,
                    wings: PawnWings::One,
                }),
                -1.0,
            ),
            (passer_front_entry(PasserFront::Free, 1), 1.0),
        ];
        want.sort_by_key(|x| x.0);
        assert_eq!(e, want);
        assert_eq!(s.result, vec![0.5, 1.0]);
    }

    #[test]
    fn games_are_told_apart_by_their_result_or_a_move_number_going_back() {
        let rules = Rules::default_for(Variant::Chess);
        let text = "\
4k3/8/8/8/8/8/4P3/4K3 w - - 0 10 [1.0]
4k3/8/8/8/8/4P3/8/4K3 b - - 0 10 [1.0]
4k3/8/8/8/4P3/8/8/4K3 w - - 0 12 [1.0]
4k3/8/8/8/8/8/4P3/4K3 w - - 0 9 [1.0]
4k3/8/8/8/8/8/4P3/4K3 w - - 0 11 [0.5]
rnbqkb1r/pppppppp/8/8/4n3/8/PPPPQPPP/RNB1KBNR w KQkq - 0 12 [0.5]
4k3/8/8/8/4P3/8/8/4K3 w - - 0 13 [0.5]
4k3/8/8/8/8/8/4P3/4K3 w - - [0.0]
";
        let s = Samples::read(text, rules, &Params::default()).expect("reads");
        // The not-quiet position (a free knight) still counts for its game.
        assert_eq!(s.not_quiet, 1);
        assert_eq!(s.game, vec![0, 0, 0, 1, 2, 2, 3]);
        assert_eq!(s.games, 4);
        let mut both = s.clone();
        both.append(s);
        assert_eq!(both.game[7..], [4, 4, 4, 5, 6, 6, 7]);
        assert_eq!(both.games, 8);
        // Scores change every line: only the move number going back starts a game.
        let scored = "\
4k3/8/8/8/8/8/4P3/4K3 w - - 0 10 [0.6100]
4k3/8/8/8/8/4P3/8/4K3 b - - 0 10 [0.6453]
4k3/8/8/8/4P3/8/8/4K3 w - - 0 12 [0.5]
4k3/8/8/8/8/8/4P3/4K3 w - - 0 9 [0.5512]
4k3/8/8/8/8/8/4P3/4K3 w - - 0 11 [0.5]
4k3/8/8/8/8/8/4P3/4K3 w - - 0 12 [1.0]
";
        let s = Samples::read(scored, rules, &Params::default()).expect("reads");
        assert_eq!(s.game, vec![0, 0, 0, 1, 1, 2]);
    }

    #[test]
    fn a_bad_fen_is_refused_with_its_line() {
        let rules = Rules::default_for(Variant::Chess);
        let text = "4k3/8/8/8/8/8/8/4K3 w - - 0 1 [0.5]\nnot a fen [1.0]\n";
        let e = Samples::read(text, rules, &Params::default()).expect_err("refused");
        assert!(matches!(e, TuneError::Fen { line: 2, .. }), "{e}");
    }
}
