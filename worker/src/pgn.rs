//! PGN: the writer for finished games and a reader that replays them under the project's rules.
//!
//! Tags: the seven of the standard roster, then the rules tags (below), `FEN` and `SetUp`,
//! `TimeControl`, `Termination` (our termination id) and `PlyCount`. Moves in SAN as RULES.md
//! spells it (`O-O-L`, `O-O-O-R`, `O-O-3`, `Sxa1`); each engine move carries a comment with its
//! score from the mover's view and depth (`{+0.35/12}`, `{-M3/9}`), plus the thinking time when
//! time decides the game (so games at fixed nodes write identical PGN).
//!
//! # Rules tags
//!
//! Chosen so that a standard reader (python-chess, pgn-reader + shakmaty, ...) either replays a
//! game correctly or refuses it, and never misreads it:
//!
//! | rules | `Variant` | `VariantFamily` | `Ruleset` | `FEN`, `SetUp "1"` |
//! |---|---|---|---|---|
//! | `chess` | none | `chess` | `normal` | unless it starts from the orthodox start |
//! | `latte` `normal` | none | `latte` | `normal` | always |
//! | `latte` `luft`, `tworooks`, `both` | `latte` | `latte` | the rule-set | always |
//! | `secutor` `extended`, `orthodox` | `secutor` | `secutor` | the rule-set | always |
//!
//! Latte under `normal` is orthodox chess from a set-up position: the king and the castling
//! rooks start on e1, a1 and h1 (e8, a8, h8), its FEN castling field is `KQkq` (the `G`/`B`
//! letters are written only where they matter) and O-O/O-O-O are the orthodox moves. So a
//! standard reader replays it from `FEN` as it is, and a `Variant` tag would only make it refuse
//! (python-chess: "unsupported variant"). The other rule-sets add castlings no standard reader
//! knows (`O-O-L`, `O-O-R`, and FEN letters `G`/`B` that Shredder-FEN readers would take for
//! rook files), and Secutor is played on another board: there `Variant` names the game so that
//! standard readers stop at it. `VariantFamily` and `Ruleset` are tags standard readers ignore;
//! every game we write carries them with the project's variant and rule-set ids. (Latte's
//! four knights, bishops and rooks a side are more than promotions give from chess's start:
//! shakmaty's strict setup refuses its positions as "too much material", so a reader built on
//! it needs `PositionError::ignore_too_much_material`; python-chess takes them as they are.)
//!
//! Reading ([`PgnGame::rules`]): `VariantFamily` names the variant; a `Variant` tag other than a
//! standard name ([`STANDARD_VARIANT_NAMES`]) must agree with it, and names the variant alone in
//! files older than `VariantFamily` (which wrote `[Variant "latte"]` and `[Ruleset "normal"]`
//! for every Latte game); with neither tag the game is chess. A missing `Ruleset` means the
//! variant's default. Where the tags say orthodox chess to standard readers (no `Variant`, or a
//! standard name), rules that are not orthodox chess, and Latte without a `FEN` tag, are
//! refused: standard readers would misread that file, so we do not guess.

use std::fmt::Write as _;

use engine::dispatch::{with_position, WithPosition};
use engine::error::{FenError, MoveError, RulesError};
use engine::search::MATE_BOUND;
use engine::{Game, Outcome, Position, Rules, Ruleset, Variant};
use thiserror::Error;

use crate::limits::TimeControl;
use crate::record::GameRecord;

/// Event, site and date tags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnOptions {
    /// `Event`.
    pub event: String,
    /// `Site`.
    pub site: String,
    /// `Date` as `YYYY.MM.DD`.
    pub date: String,
}

impl Default for PgnOptions {
    fn default() -> Self {
        PgnOptions {
            event: "worker match".into(),
            site: "?".into(),
            date: today(),
        }
    }
}

/// Today's UTC date as PGN writes it.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}.{m:02}.{d:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A score as a PGN comment writes it: pawns with sign, or `M<n>` for mates (moves).
pub fn score_text(score: i32) -> String {
    if score.abs() >= MATE_BOUND {
        let moves = (engine::search::MATE - score.abs() + 1) / 2;
        format!("{}M{moves}", if score > 0 { '+' } else { '-' })
    } else {
        format!("{:+.2}", f64::from(score) / 100.0)
    }
}

/// The tag naming the variant: only where standard readers must refuse the game (see the
/// module doc), since any value but a standard one makes them stop.
pub const VARIANT_TAG: &str = "Variant";
/// The tag with the project's variant id, in every game: standard readers ignore it, so it can
/// name Latte where `Variant` must stay silent.
pub const VARIANT_FAMILY_TAG: &str = "VariantFamily";
/// The tag with the project's rule-set id, in every game.
pub const RULESET_TAG: &str = "Ruleset";

/// `Variant` values that standard readers take for orthodox chess (python-chess's aliases of its
/// standard board but `Illegal`), compared ignoring case: our reader treats them as no tag.
pub const STANDARD_VARIANT_NAMES: [&str; 5] =
    ["standard", "chess", "classical", "normal", "from position"];

/// Whether standard readers replay games under `rules` correctly as orthodox chess from their
/// FEN: orthodox chess itself, and Latte under `normal` (orthodox rules, king and castling
/// rooks on the orthodox squares).
pub fn reads_as_orthodox(rules: Rules) -> bool {
    match rules.variant() {
        Variant::Chess => true,
        Variant::Latte => rules.ruleset() == Ruleset::Normal,
        Variant::Secutor => false,
    }
}

/// The rules tags and the start position's `FEN`/`SetUp`, in the order they are written.
fn rules_tags(rules: Rules, start_fen: &str) -> Vec<(&'static str, String)> {
    let mut tags = Vec::with_capacity(5);
    if !reads_as_orthodox(rules) {
        tags.push((VARIANT_TAG, rules.variant().id().to_string()));
    }
    tags.push((VARIANT_FAMILY_TAG, rules.variant().id().to_string()));
    tags.push((RULESET_TAG, rules.ruleset().id().to_string()));
    if !is_orthodox_start(rules, start_fen) {
        tags.push(("FEN", start_fen.to_string()));
        tags.push(("SetUp", "1".to_string()));
    }
    tags
}

/// Whether a game needs no `FEN` tag: every reader, ours included, starts a game without one
/// from the orthodox start, which only orthodox chess has.
fn is_orthodox_start(rules: Rules, start_fen: &str) -> bool {
    rules.variant() == Variant::Chess && start_fen == rules.start_fen()
}

/// Writes one game.
pub fn write_game(
    record: &GameRecord,
    rules: Rules,
    tc: TimeControl,
    options: &PgnOptions,
    round: &str,
) -> String {
    let mut out = String::new();
    let result = record.result.pgn();
    let mut tags: Vec<(&str, String)> = vec![
        ("Event", options.event.clone()),
        ("Site", options.site.clone()),
        ("Date", options.date.clone()),
        ("Round", round.to_string()),
        ("White", record.white.clone()),
        ("Black", record.black.clone()),
        ("Result", result.to_string()),
    ];
    tags.extend(rules_tags(rules, &record.start_fen));
    tags.extend([
        ("TimeControl", tc.pgn_tag()),
        ("Termination", record.termination.id().to_string()),
        ("PlyCount", record.plies.to_string()),
    ]);
    for (name, value) in tags {
        let _ = writeln!(out, "[{name} \"{}\"]", escape(&value));
    }
    out.push('\n');

    // Side to move and move number of the start position come from its FEN.
    let mut fields = record.start_fen.split_whitespace().skip(1);
    let mut white_to_move = fields.next() != Some("b");
    let mut number: u32 = fields.nth(3).and_then(|n| n.parse().ok()).unwrap_or(1);
    let mut tokens: Vec<String> = Vec::with_capacity(record.moves.len() * 3);
    for (i, m) in record.moves.iter().enumerate() {
        if white_to_move {
            tokens.push(format!("{number}."));
        } else if i == 0 {
            tokens.push(format!("{number}..."));
        }
        tokens.push(m.san.clone());
        if let Some(score) = m.score {
            let mut c = format!("{{{}", score_text(score));
            if let Some(d) = m.depth {
                let _ = write!(c, "/{d}");
            }
            if tc.is_timed() {
                let _ = write!(c, " {:.3}s", m.time_ms as f64 / 1000.0);
            }
            c.push('}');
            tokens.push(c);
        } else if tc.is_timed() {
            tokens.push(format!("{{{:.3}s}}", m.time_ms as f64 / 1000.0));
        }
        if !white_to_move {
            number += 1;
        }
        white_to_move = !white_to_move;
    }
    tokens.push(format!("{{{}}}", record.termination.id()));
    tokens.push(result.to_string());

    let mut line_len = 0;
    for t in tokens {
        if line_len > 0 && line_len + 1 + t.len() > 79 {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(&t);
        line_len += t.len();
    }
    out.push_str("\n\n");
    out
}

/// Why a PGN could not be read or replayed.
#[derive(Debug, Error)]
pub enum PgnError {
    /// Malformed text.
    #[error("PGN line {line}: {detail}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// Unknown variant or rule-set tag, or rules tags that disagree.
    #[error("PGN game {game}: {source}")]
    Rules {
        /// 1-based game number.
        game: usize,
        /// The error.
        source: RulesTagError,
    },
    /// A bad FEN tag.
    #[error("PGN game {game}: FEN tag: {source}")]
    Fen {
        /// 1-based game number.
        game: usize,
        /// The error.
        source: FenError,
    },
    /// A move that does not replay.
    #[error("PGN game {game}, ply {ply} ({san}): {source}")]
    Move {
        /// 1-based game number.
        game: usize,
        /// 1-based ply.
        ply: usize,
        /// The SAN text.
        san: String,
        /// The error.
        source: MoveError,
    },
}

/// Why a game's rules tags name no rules we can replay it under.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum RulesTagError {
    /// An unknown variant or rule-set id, or a rule-set of another variant.
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// `Variant` and `VariantFamily` name different games.
    #[error("tags disagree: Variant {variant:?} but VariantFamily {family:?}")]
    Disagree {
        /// The `Variant` tag.
        variant: String,
        /// The `VariantFamily` tag.
        family: String,
    },
    /// The tags say orthodox chess to standard readers (no `Variant`, or a standard name) but
    /// name rules that are not: those readers would misread the game, so we do not guess.
    #[error(
        "tags name {rules}, which is not orthodox chess, without a Variant tag that says so \
         (standard readers would misread it)"
    )]
    NotOrthodox {
        /// The rules `VariantFamily` and `Ruleset` name.
        rules: Rules,
    },
    /// The tags say orthodox chess to standard readers and name Latte under `normal`, but
    /// give no `FEN`: standard readers would start from the orthodox start.
    #[error(
        "tags name {rules} without a FEN tag or a Variant tag naming it \
         (standard readers would start from the orthodox start)"
    )]
    MissingFen {
        /// The rules `VariantFamily` and `Ruleset` name.
        rules: Rules,
    },
}

/// A game as read from PGN.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgnGame {
    /// Tags in file order.
    pub tags: Vec<(String, String)>,
    /// The main line in SAN.
    pub moves: Vec<String>,
    /// The comments after each move (joined when there are several), by ply.
    pub comments: Vec<Option<String>>,
    /// The result token ending the game.
    pub result: String,
}

/// What replaying a game gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The moves in coordinate notation.
    pub uci: Vec<String>,
    /// The final position.
    pub final_fen: String,
    /// Whether the rules ended the game in the final position.
    pub outcome: Option<Outcome>,
}

impl PgnGame {
    /// A tag's value.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The rules from the `Variant`, `VariantFamily` and `Ruleset` tags (orthodox chess
    /// without them); see the module doc for how they combine.
    pub fn rules(&self) -> Result<Rules, RulesTagError> {
        let named = self
            .tag(VARIANT_TAG)
            .filter(|v| !is_standard_variant_name(v));
        let rules = Rules::parse(self.variant_id(named)?, self.tag(RULESET_TAG))?;
        if named.is_none() {
            self.check_reads_as_orthodox(rules)?;
        }
        Ok(rules)
    }

    /// The variant id from a non-standard `Variant` value (`named`) and `VariantFamily`,
    /// which must agree when both are there.
    fn variant_id<'a>(&'a self, named: Option<&'a str>) -> Result<&'a str, RulesTagError> {
        match (named, self.tag(VARIANT_FAMILY_TAG)) {
            (Some(v), Some(f)) if !v.eq_ignore_ascii_case(f) => Err(RulesTagError::Disagree {
                variant: v.to_string(),
                family: f.to_string(),
            }),
            (Some(v), _) | (None, Some(v)) => Ok(v),
            (None, None) => Ok(Variant::Chess.id()),
        }
    }

    /// A game whose tags tell standard readers it is orthodox chess must be one they replay
    /// correctly: rules that read as orthodox, and a `FEN` unless it is chess itself.
    fn check_reads_as_orthodox(&self, rules: Rules) -> Result<(), RulesTagError> {
        if !reads_as_orthodox(rules) {
            return Err(RulesTagError::NotOrthodox { rules });
        }
        if rules.variant() != Variant::Chess && self.tag("FEN").is_none() {
            return Err(RulesTagError::MissingFen { rules });
        }
        Ok(())
    }

    /// Replays the moves under the game's rules from its `FEN` tag (or the start position).
    /// `game` is the 1-based game number for error messages.
    pub fn replay(&self, game: usize) -> Result<Replay, PgnError> {
        let rules = self
            .rules()
            .map_err(|source| PgnError::Rules { game, source })?;
        with_position(rules, ReplayJob { pgn: self, game })
    }

    /// Plays the game's moves under `rules` from its `FEN` tag (or the start position),
    /// showing `visit` each ply (0-based), the position before it and its move; gives the
    /// final game. The one replay loop behind [`PgnGame::replay`] and the position extractor,
    /// so that both read a game's moves alike. `game` is the 1-based game number for errors.
    pub fn replay_in<P: Position>(
        &self,
        rules: Rules,
        game: usize,
        mut visit: impl FnMut(usize, &P, P::Move),
    ) -> Result<Game<P>, PgnError> {
        let fen = self.tag("FEN").unwrap_or(rules.start_fen());
        let mut g =
            Game::<P>::from_fen(rules, fen).map_err(|source| PgnError::Fen { game, source })?;
        for (ply, san) in self.moves.iter().enumerate() {
            let mv =
                engine::san::parse_san(g.position(), san).map_err(|source| PgnError::Move {
                    game,
                    ply: ply + 1,
                    san: san.clone(),
                    source,
                })?;
            visit(ply, g.position(), mv);
            g.play(mv);
        }
        Ok(g)
    }
}

struct ReplayJob<'a> {
    pgn: &'a PgnGame,
    game: usize,
}

impl WithPosition for ReplayJob<'_> {
    type Output = Result<Replay, PgnError>;
    fn run<P: Position>(self, rules: Rules) -> Self::Output {
        let mut uci = Vec::with_capacity(self.pgn.moves.len());
        let g = self
            .pgn
            .replay_in::<P>(rules, self.game, |_, pos: &P, mv| {
                uci.push(pos.move_info(mv).uci())
            })?;
        Ok(Replay {
            uci,
            final_fen: g.position().to_fen(),
            outcome: g.outcome(),
        })
    }
}

/// Whether a `Variant` tag's value is one standard readers take for orthodox chess.
fn is_standard_variant_name(value: &str) -> bool {
    STANDARD_VARIANT_NAMES
        .iter()
        .any(|n| n.eq_ignore_ascii_case(value))
}

const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

/// Reads every game of a PGN text (tags, main line, comments, result; variations, NAGs and
/// `;` comments are skipped).
pub fn read(text: &str) -> Result<Vec<PgnGame>, PgnError> {
    let chars: Vec<char> = text.chars().collect();
    let mut games = Vec::new();
    let mut current = PgnGame::default();
    let mut in_moves = false;
    let mut i = 0;
    let mut line = 1;
    let syntax = |line: usize, detail: &str| PgnError::Syntax {
        line,
        detail: detail.to_string(),
    };
    let push_comment = |g: &mut PgnGame, c: String| {
        if let Some(last) = g.comments.last_mut() {
            match last {
                Some(prev) => {
                    prev.push(' ');
                    prev.push_str(&c);
                }
                None => *last = Some(c),
            }
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
                if chars.get(i) == Some(&'%') {
                    while i < chars.len() && chars[i] != '\n' {
                        i += 1;
                    }
                }
            }
            c if c.is_whitespace() => i += 1,
            '[' => {
                if in_moves {
                    // A game without a result token: close it.
                    games.push(std::mem::take(&mut current));
                    in_moves = false;
                }
                i += 1;
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && chars[i] != '"' {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\n' {
                        return Err(syntax(line, "tag without a value"));
                    }
                    i += 1;
                }
                i += 1;
                let mut value = String::new();
                loop {
                    match chars.get(i) {
                        None | Some('\n') => return Err(syntax(line, "unterminated tag value")),
                        Some('\\') => {
                            if let Some(&n) = chars.get(i + 1) {
                                value.push(n);
                            }
                            i += 2;
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some(&ch) => {
                            value.push(ch);
                            i += 1;
                        }
                    }
                }
                while i < chars.len() && chars[i] != ']' {
                    if chars[i] == '\n' {
                        return Err(syntax(line, "tag without closing ]"));
                    }
                    i += 1;
                }
                i += 1;
                if name.is_empty() {
                    return Err(syntax(line, "tag without a name"));
                }
                current.tags.push((name, value));
            }
            '{' => {
                in_moves = true;
                let start_line = line;
                i += 1;
                let start = i;
                while i < chars.len() && chars[i] != '}' {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Err(syntax(start_line, "unterminated comment"));
                }
                let body: String = chars[start..i].iter().collect();
                push_comment(&mut current, body.trim().to_string());
                i += 1;
            }
            ';' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '(' => {
                let mut depth = 0;
                let start_line = line;
                while i < chars.len() {
                    match chars[i] {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        '\n' => line += 1,
                        '{' => {
                            while i < chars.len() && chars[i] != '}' {
                                if chars[i] == '\n' {
                                    line += 1;
                                }
                                i += 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Err(syntax(start_line, "unterminated variation"));
                }
                i += 1;
            }
            ')' | ']' | '}' => return Err(syntax(line, &format!("unexpected {c:?}"))),
            _ => {
                in_moves = true;
                let start = i;
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && !matches!(chars[i], '{' | '}' | '(' | ')' | '[' | ']' | ';')
                {
                    i += 1;
                }
                let token: String = chars[start..i].iter().collect();
                if RESULTS.contains(&token.as_str()) {
                    current.result = token;
                    games.push(std::mem::take(&mut current));
                    in_moves = false;
                    continue;
                }
                if token.starts_with('$') {
                    continue;
                }
                // Move numbers: "12." "12..." or glued "12.e4".
                let rest = token.trim_start_matches(|ch: char| ch.is_ascii_digit());
                let san = if rest.len() < token.len() && rest.starts_with('.') {
                    rest.trim_start_matches('.')
                } else {
                    token.as_str()
                };
                if san.is_empty() {
                    continue;
                }
                current.moves.push(san.to_string());
                current.comments.push(None);
            }
        }
    }
    if in_moves || !current.tags.is_empty() {
        games.push(current);
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }

    #[test]
    fn scores() {
        assert_eq!(score_text(35), "+0.35");
        assert_eq!(score_text(-120), "-1.20");
        assert_eq!(score_text(engine::search::MATE - 5), "+M3");
        assert_eq!(score_text(-(engine::search::MATE - 4)), "-M2");
    }

    #[test]
    fn reads_and_replays_other_programs_pgn() {
        let text = "[Event \"a \\\"quoted\\\" event\"]\n[Site \"?\"]\n\n\
                    1.e4 e5 2. Nf3 {good} (2. f4 exf4 {gambit}) 2... Nc6 $1 3. Bb5 a6 ; Ruy\n\
                    4. Ba4 Nf6 5. O-O *\n\n[Event \"2\"]\n[Variant \"latte\"]\n[Ruleset \"both\"]\n\n\
                    1. O-O-L 1/2-1/2\n";
        let games = read(text).expect("valid");
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].tag("Event"), Some("a \"quoted\" event"));
        assert_eq!(games[0].moves.len(), 9);
        assert_eq!(games[0].comments[2].as_deref(), Some("good"));
        let r = games[0].replay(1).expect("legal");
        assert_eq!(r.uci.last().map(String::as_str), Some("e1g1"));
        // Latte's Luft castling is not legal from the start (f1 is occupied): named error.
        let err = games[1].replay(2).expect_err("illegal");
        assert!(err.to_string().contains("O-O-L"), "{err}");
        assert!(read("[Event \"x\n").is_err());
        assert!(read("1. e4 {never closed").is_err());
    }

    fn tag_names(rules: Rules, fen: &str) -> Vec<&'static str> {
        rules_tags(rules, fen).into_iter().map(|(n, _)| n).collect()
    }

    /// The table of the module doc: `Variant` only where standard readers must refuse,
    /// `FEN` only off the orthodox start.
    #[test]
    fn rules_tags_follow_the_documented_scheme() {
        let chess = Rules::default_for(Variant::Chess);
        assert_eq!(
            tag_names(chess, chess.start_fen()),
            ["VariantFamily", "Ruleset"]
        );
        for v in Variant::ALL {
            for &r in v.rulesets() {
                let rules = Rules::new(v, r).expect("listed");
                let fen = if v == Variant::Chess {
                    "8/8/8/8/8/8/8/K1k5 w - - 0 1"
                } else {
                    rules.start_fen()
                };
                let names = tag_names(rules, fen);
                assert_eq!(
                    names.contains(&"Variant"),
                    !reads_as_orthodox(rules),
                    "{rules}"
                );
                assert!(names.ends_with(&["VariantFamily", "Ruleset", "FEN", "SetUp"]));
            }
        }
        let latte = Rules::default_for(Variant::Latte);
        assert!(reads_as_orthodox(latte));
        assert!(!tag_names(latte, latte.start_fen()).contains(&"Variant"));
    }
}
