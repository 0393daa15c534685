//! Error values for everything that comes from outside: ids, FENs and moves.
//! Each message quotes the offending token so a user can find it in their input.

use thiserror::Error;

use crate::types::Color;
use crate::variant::Variant;

/// A variant or rule-set id that does not exist or does not fit together.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RulesError {
    /// Not one of `chess`, `latte`, `secutor`.
    #[error("unknown variant {0:?} (expected one of: chess, latte, secutor)")]
    UnknownVariant(String),
    /// Not a rule-set id of any variant.
    #[error("unknown rule-set {0:?} (expected one of: normal, luft, tworooks, both, extended, orthodox)")]
    UnknownRuleset(String),
    /// A rule-set id of another variant.
    #[error("rule-set {ruleset:?} does not exist in {variant} (its rule-sets: {})", rulesets_of(*.variant))]
    RulesetNotInVariant {
        /// The variant asked for.
        variant: Variant,
        /// The rule-set id given.
        ruleset: String,
    },
    /// A position type was asked to hold a variant of another geometry.
    #[error("variant {0} is played on another board geometry")]
    WrongGeometry(Variant),
}

fn rulesets_of(v: Variant) -> String {
    v.rulesets()
        .iter()
        .map(|r| r.id())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a FEN was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FenError {
    /// Fewer than 4 or more than 6 space-separated fields.
    #[error("FEN has {0} fields; expected 4 or 6 (board, side, castling, en passant[, halfmove, fullmove])")]
    FieldCount(usize),
    /// The board field has the wrong number of ranks.
    #[error("FEN board has {found} ranks; expected {expected}")]
    RankCount {
        /// Ranks found.
        found: usize,
        /// Ranks of the board.
        expected: usize,
    },
    /// A rank describes more or fewer cells than the board has.
    #[error("FEN rank {rank} ({text:?}) describes {found} cells; expected {expected}")]
    CellCount {
        /// Rank number, 1-based as printed on the board.
        rank: u8,
        /// The rank's text.
        text: String,
        /// Cells described.
        found: usize,
        /// Cells a rank has.
        expected: usize,
    },
    /// A character that is neither a piece letter of the variant, a digit nor `*`.
    #[error("unknown piece letter {0:?} in FEN board")]
    UnknownPiece(char),
    /// A piece, or an empty cell, stands where the board has a hole.
    #[error("FEN puts {what} on {square}, which is a hole of the Gustavian board")]
    PieceOnHole {
        /// What stands there ("a piece 'P'" or "an empty square").
        what: String,
        /// The hole's name.
        square: String,
    },
    /// A `*` on a real square.
    #[error("FEN marks {0} as a hole, but it is a square of the board")]
    HoleOnSquare(String),
    /// A pawn on the first or last rank.
    #[error("FEN has a pawn on {0}, on a first or last rank")]
    PawnOnBackRank(String),
    /// No king of a colour.
    #[error("FEN has no {0} king")]
    MissingKing(Color),
    /// More than one king of a colour.
    #[error("FEN has {count} {color} kings; exactly one is allowed")]
    ExtraKing {
        /// Whose kings.
        color: Color,
        /// How many.
        count: usize,
    },
    /// Side to move is neither `w` nor `b`.
    #[error("FEN side to move {0:?} is neither 'w' nor 'b'")]
    SideToMove(String),
    /// A castling letter the variant does not know.
    #[error("unknown castling letter {0:?} in FEN")]
    CastlingLetter(char),
    /// A castling letter whose king or rook is not on its start square.
    #[error("castling letter {letter:?} needs {needs}, which is not there")]
    CastlingPieces {
        /// The letter.
        letter: char,
        /// What it needs, e.g. "the white king on e1 and a white rook on h1".
        needs: String,
    },
    /// An en-passant field that is not a square name.
    #[error("en-passant field {0:?} is not a square")]
    EnPassantSyntax(String),
    /// An en-passant square no double step could have produced.
    #[error("en-passant square {square} is impossible: {reason}")]
    EnPassantImpossible {
        /// The square given.
        square: String,
        /// Why no double step could have produced it.
        reason: &'static str,
    },
    /// A clock field that is not a number in range.
    #[error("FEN {field} {value:?} is not a valid number")]
    Clock {
        /// `halfmove clock` or `fullmove number`.
        field: &'static str,
        /// The text.
        value: String,
    },
    /// The side that just moved left its king in check.
    #[error("the side not to move ({0}) is in check")]
    OpponentInCheck(Color),
    /// The variant belongs to another geometry.
    #[error(transparent)]
    Rules(#[from] RulesError),
}

/// Why a move in coordinate notation or SAN was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MoveError {
    /// Not a move in coordinate notation at all.
    #[error("cannot parse move {0:?}: expected coordinate notation such as e2e4, e7e8q or e1g1l")]
    Unparsable(String),
    /// Not a SAN move at all.
    #[error("cannot parse SAN {0:?}")]
    UnparsableSan(String),
    /// Well formed but not legal here.
    #[error("illegal move {mv:?} in position {fen}")]
    Illegal {
        /// The move text.
        mv: String,
        /// The position.
        fen: String,
    },
    /// A SAN that fits more than one legal move.
    #[error("ambiguous SAN {mv:?} in position {fen}")]
    Ambiguous {
        /// The move text.
        mv: String,
        /// The position.
        fen: String,
    },
}

/// An error and its causes on one line, `outer: inner: innermost`, as the binaries print a
/// failure. A cause whose text the message already holds is not repeated: most error enums
/// here name their source in their own message (so that `{e}` alone is complete) and also
/// expose it as the `source()` that a chain walk visits, which `{:#}` printed twice
/// (`cannot read x: No such file or directory: No such file or directory`).
pub fn chain_message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = c.source();
    }
    message
}

#[cfg(test)]
mod chain_tests {
    use super::chain_message;

    #[derive(Debug, thiserror::Error)]
    enum Unreadable {
        #[error("cannot read {path}: {source}")]
        File {
            path: String,
            source: std::io::Error,
        },
    }

    #[derive(Debug, thiserror::Error)]
    #[error("loading the book")]
    struct Loading(#[source] std::io::Error);

    fn not_found() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")
    }

    #[test]
    fn a_cause_the_message_already_names_is_said_once() {
        let e = anyhow::Error::from(Unreadable::File {
            path: "/x".into(),
            source: not_found(),
        })
        .context("--engine");
        assert_eq!(
            format!("{e:#}"),
            "--engine: cannot read /x: no such file: no such file",
            "what {{:#}} prints"
        );
        assert_eq!(
            chain_message(e.as_ref()),
            "--engine: cannot read /x: no such file"
        );
    }

    #[test]
    fn a_cause_the_message_does_not_name_is_appended() {
        let e = anyhow::Error::from(Loading(not_found())).context("--book");
        assert_eq!(
            chain_message(e.as_ref()),
            "--book: loading the book: no such file"
        );
    }
}
