//! PGN that standard readers accept: orthodox chess and Latte under `normal` (orthodox chess
//! from a set-up position) replay in pgn-reader + shakmaty as orthodox chess from their `FEN`,
//! move for move as our engine played them; the other rule-sets carry a `Variant` tag such a
//! reader refuses, and still read back through ours, as do files written before the
//! `VariantFamily` tag. The tag scheme is documented in `worker/src/pgn.rs`.
//!
//! Data in `tests/data/`: `latte-normal-castling.pgn` (games written by `worker match`, picked
//! for O-O and O-O-O by both colours), `legacy/<variant>-<ruleset>.pgn` (the writer's output
//! before `VariantFamily`, one pair per rule-set, the rules named by the file name) and
//! `rules-tags.pgn` (tag combinations, each with the rules or the error it must give in an
//! `Expect` tag).

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use engine::board8::Board;
use engine::{Game, Rules, Ruleset, Variant};
use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, CastlingSide, Chess, Color, EnPassantMode, Position, PositionError};
use worker::adjudication::Adjudication;
use worker::book::Book;
use worker::limits::TimeControl;
use worker::matches::{run_match, InOrder, MatchConfig};
use worker::pair::{play_pair, PairSpec};
use worker::pgn::{read, reads_as_orthodox, PgnGame, PgnOptions};
use worker::player::PlayerSpec;
use worker::record::{GameRecord, PairResult};
use worker::runner::GameConfig;

// ---------------------------------------------------------------------------------------------
// A standard reader: pgn-reader + shakmaty, treating tags as python-chess does

/// `Variant` values python-chess reads as orthodox chess (`chess.Board.aliases`).
const STANDARD_NAMES: [&str; 6] = [
    "standard",
    "chess",
    "classical",
    "normal",
    "illegal",
    "from position",
];
/// `Variant` values python-chess reads as Chess960 (`chess.pgn.Headers.is_chess960`).
const CHESS960_NAMES: [&str; 5] = [
    "chess960",
    "chess 960",
    "fischerandom",
    "fischerrandom",
    "fischer random",
];

/// Why the standard reader did not replay a game.
#[derive(Debug)]
enum Refusal {
    /// A `Variant` it does not play (python-chess: "unsupported variant").
    Variant(String),
    /// A `FEN` it cannot set up.
    Fen(String),
    /// A move that is not legal orthodox chess.
    Move(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Variant(v) => write!(f, "unsupported variant: {v}"),
            Refusal::Fen(e) => write!(f, "FEN: {e}"),
            Refusal::Move(e) => write!(f, "move: {e}"),
        }
    }
}

/// The tags the standard reader acts on.
#[derive(Default)]
struct Tags {
    variant: Option<String>,
    fen: Option<String>,
}

/// A game the standard reader replayed.
#[derive(Debug)]
struct Replayed {
    /// The moves in coordinate notation (castling as the king's two-square move).
    uci: Vec<String>,
    /// The final position (en passant square only when a capture is legal, as ours).
    final_fen: String,
    checkmate: bool,
    /// Who castled to which side, in order.
    castles: Vec<(Color, CastlingSide)>,
}

struct Movetext {
    pos: Chess,
    mode: CastlingMode,
    uci: Vec<String>,
    castles: Vec<(Color, CastlingSide)>,
}

/// Replays the main line the way python-chess's `read_game` sets up a game: the `Variant`
/// tag picks the board (absent or standard: orthodox chess; other games are refused), `FEN`
/// the start position.
struct StandardReader;

impl StandardReader {
    fn start(tags: &Tags) -> Result<Movetext, Refusal> {
        let mode = match tags.variant.as_deref().map(str::to_ascii_lowercase) {
            None => CastlingMode::Standard,
            Some(v) if STANDARD_NAMES.contains(&v.as_str()) => CastlingMode::Standard,
            Some(v) if CHESS960_NAMES.contains(&v.as_str()) => CastlingMode::Chess960,
            Some(v) => return Err(Refusal::Variant(v)),
        };
        let pos = match &tags.fen {
            None => Chess::default(),
            // Latte's start has four knights, bishops and rooks a side, more than promotions
            // can give from chess's start: shakmaty's strict setup refuses that as "too much
            // material" (python-chess does not check it). The position is legal chess all the
            // same, and shakmaty has this call for taking it.
            Some(fen) => Fen::from_ascii(fen.as_bytes())
                .map_err(|e| Refusal::Fen(format!("{fen}: {e}")))?
                .into_position::<Chess>(mode)
                .or_else(PositionError::ignore_too_much_material)
                .map_err(|e| Refusal::Fen(format!("{fen}: {e}")))?,
        };
        Ok(Movetext {
            pos,
            mode,
            uci: Vec::new(),
            castles: Vec::new(),
        })
    }
}

impl Visitor for StandardReader {
    type Tags = Tags;
    type Movetext = Movetext;
    type Output = Result<Replayed, Refusal>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Tags::default())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        let value = value.decode_utf8_lossy().into_owned();
        match name {
            b"Variant" => tags.variant = Some(value),
            b"FEN" => tags.fen = Some(value),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        match Self::start(&tags) {
            Ok(movetext) => ControlFlow::Continue(movetext),
            Err(refusal) => ControlFlow::Break(Err(refusal)),
        }
    }

    fn begin_variation(
        &mut self,
        _movetext: &mut Self::Movetext,
    ) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn san(
        &mut self,
        movetext: &mut Self::Movetext,
        san_plus: SanPlus,
    ) -> ControlFlow<Self::Output> {
        let m = match san_plus.san.to_move(&movetext.pos) {
            Ok(m) => m,
            Err(e) => {
                let ply = movetext.uci.len() + 1;
                return ControlFlow::Break(Err(Refusal::Move(format!(
                    "ply {ply} {san_plus}: {e}"
                ))));
            }
        };
        if let Some(side) = m.castling_side() {
            movetext.castles.push((movetext.pos.turn(), side));
        }
        movetext.uci.push(m.to_uci(movetext.mode).to_string());
        movetext.pos.play_unchecked(m);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, movetext: Self::Movetext) -> Self::Output {
        Ok(Replayed {
            final_fen: Fen::from_position(&movetext.pos, EnPassantMode::Legal).to_string(),
            checkmate: movetext.pos.is_checkmate(),
            uci: movetext.uci,
            castles: movetext.castles,
        })
    }
}

/// Every game of `text` through the standard reader.
fn read_standard(text: &str) -> Vec<Result<Replayed, Refusal>> {
    let mut reader = Reader::new(std::io::Cursor::new(text.as_bytes()));
    let mut games = Vec::new();
    while let Some(game) = reader.read_game(&mut StandardReader).expect("in memory") {
        games.push(game);
    }
    games
}

// ---------------------------------------------------------------------------------------------
// Games, files and our engine's view of them

fn options() -> PgnOptions {
    PgnOptions {
        event: "test".into(),
        site: "here".into(),
        date: "2025.01.02".into(),
    }
}

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

fn read_data(path: &str) -> String {
    let path = data(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The pairs of a match as `worker match` plays them (in pair order).
fn match_pairs(rules: Rules, pairs: u64, nodes: u64, seed: u64) -> Vec<PairResult> {
    let config = MatchConfig {
        rules,
        book: Book::builtin(rules).expect("book"),
        pairs,
        players: [PlayerSpec::internal("one"), PlayerSpec::internal("two")],
        game: GameConfig::new(TimeControl::Nodes(nodes)),
        concurrency: 2,
        seed,
        pgn: Some(options()),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .expect("runtime");
    let mut order = InOrder::default();
    let mut done = Vec::new();
    runtime
        .block_on(run_match(config, Arc::new(AtomicBool::new(false)), |p| {
            done.extend(order.push(p.clone()));
        }))
        .expect("match");
    done
}

/// One short pair from `opening_fen`.
fn pair_from(rules: Rules, opening_fen: &str, max_moves: Option<u32>) -> PairResult {
    play_pair(&PairSpec {
        rules,
        opening_fen: opening_fen.to_string(),
        players: [PlayerSpec::internal("one"), PlayerSpec::internal("two")],
        game: GameConfig {
            adjudication: Adjudication {
                max_moves,
                ..Adjudication::default()
            },
            ..GameConfig::new(TimeControl::Nodes(200))
        },
        pair_index: 0,
        seed: 5,
        pgn: Some(options()),
    })
    .expect("pair")
}

/// The final position of a recorded game, replayed by our engine from its coordinate moves
/// (not through any PGN).
fn engine_final_fen(rules: Rules, record: &GameRecord) -> String {
    let mut game = Game::<Board>::from_fen(rules, &record.start_fen).expect("start FEN");
    for m in &record.moves {
        game.play_uci(&m.uci).expect("recorded move");
    }
    game.position().to_fen()
}

fn record_uci(record: &GameRecord) -> Vec<String> {
    record.moves.iter().map(|m| m.uci.clone()).collect()
}

/// A game of ours that must read as orthodox chess: the standard reader replays it, and its
/// moves and final position are the ones our reader gives.
fn assert_same_in_both_readers(ours: &PgnGame, standard: &Replayed, what: &str) {
    let replay = ours.replay(1).expect("our reader replays it");
    assert_eq!(standard.uci, replay.uci, "{what}: the moves");
    assert_eq!(
        standard.final_fen, replay.final_fen,
        "{what}: the final position"
    );
    let mate = matches!(replay.outcome, Some(engine::Outcome::Checkmate { .. }));
    assert_eq!(standard.checkmate, mate, "{what}: checkmate");
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn latte_normal_match_games_replay_as_orthodox_chess_from_their_fen() {
    let rules = Rules::parse("latte", Some("normal")).expect("rules");
    let pairs = match_pairs(rules, 6, 300, 4);
    assert_eq!(pairs.len(), 6);
    for p in &pairs {
        let text = p.pgn.as_deref().expect("pgn");
        let ours = read(text).expect("our reader");
        let standard = read_standard(text);
        assert_eq!(standard.len(), 2);
        for ((record, game), replayed) in p.games.iter().zip(&ours).zip(standard) {
            let what = format!("pair {} {}", p.pair_index, record.white);
            let replayed = replayed.unwrap_or_else(|e| panic!("{what}: refused: {e}"));
            assert_eq!(game.tag("Variant"), None, "{what}");
            assert_eq!(game.tag("VariantFamily"), Some("latte"));
            assert_eq!(game.tag("Ruleset"), Some("normal"));
            assert_eq!(game.tag("FEN"), Some(record.start_fen.as_str()));
            assert_eq!(game.rules().expect("rules tags"), rules);
            assert_eq!(replayed.uci, record_uci(record), "{what}: the moves played");
            assert_eq!(
                replayed.final_fen,
                engine_final_fen(rules, record),
                "{what}: the final position"
            );
            assert_eq!(
                replayed.checkmate,
                record.termination.id() == "checkmate",
                "{what}"
            );
            assert_same_in_both_readers(game, &replayed, &what);
        }
    }
}

#[test]
fn latte_normal_castling_replays_as_orthodox_castling() {
    let text = read_data("latte-normal-castling.pgn");
    let ours = read(&text).expect("our reader");
    let standard = read_standard(&text);
    assert_eq!(ours.len(), standard.len());
    let mut castles = BTreeSet::new();
    for (i, (game, replayed)) in ours.iter().zip(standard).enumerate() {
        let what = format!("game {}", i + 1);
        let replayed = replayed.unwrap_or_else(|e| panic!("{what}: refused: {e}"));
        assert_eq!(
            game.rules().expect("rules tags").to_string(),
            "latte/normal"
        );
        assert_same_in_both_readers(game, &replayed, &what);
        let plies: usize = game
            .tag("PlyCount")
            .and_then(|n| n.parse().ok())
            .expect("PlyCount");
        assert_eq!(replayed.uci.len(), plies, "{what}");
        castles.extend(
            replayed
                .castles
                .iter()
                .map(|&(c, s)| (c.char(), s.is_king_side())),
        );
    }
    // The file is there for castling: every colour castles to every side somewhere in it.
    let all: BTreeSet<_> = [('w', true), ('w', false), ('b', true), ('b', false)].into();
    assert_eq!(castles, all);
}

#[test]
fn chess_from_the_orthodox_start_has_no_fen_tag() {
    let rules = Rules::default_for(Variant::Chess);
    let p = pair_from(rules, rules.start_fen(), Some(30));
    let text = p.pgn.as_deref().expect("pgn");
    let ours = read(text).expect("our reader");
    for ((record, game), replayed) in p.games.iter().zip(&ours).zip(read_standard(text)) {
        for absent in ["Variant", "FEN", "SetUp"] {
            assert_eq!(game.tag(absent), None, "{absent}");
        }
        assert_eq!(game.rules().expect("rules tags"), rules);
        let replayed = replayed.expect("the standard reader plays it");
        assert_eq!(replayed.uci, record_uci(record));
        assert_eq!(replayed.final_fen, engine_final_fen(rules, record));
        assert_same_in_both_readers(game, &replayed, "chess");
    }
}

#[test]
fn standard_readers_refuse_the_other_rule_sets_which_ours_reads_back() {
    for v in Variant::ALL {
        for &r in v.rulesets() {
            let rules = Rules::new(v, r).expect("listed");
            // Everything but orthodox chess and Latte under `normal` differs from chess.
            let orthodox = matches!(
                (v, r),
                (Variant::Chess, _) | (Variant::Latte, Ruleset::Normal)
            );
            assert_eq!(reads_as_orthodox(rules), orthodox, "{rules}");
            if orthodox {
                continue;
            }
            let book = Book::builtin(rules).expect("book");
            let p = pair_from(rules, &book.positions[5], Some(40));
            let text = p.pgn.as_deref().expect("pgn");
            for refusal in read_standard(text) {
                assert!(
                    matches!(refusal, Err(Refusal::Variant(ref id)) if id == v.id()),
                    "{rules}: {refusal:?}"
                );
            }
            let ours = read(text).expect("our reader");
            assert_eq!(ours.len(), 2, "{rules}");
            for (record, game) in p.games.iter().zip(&ours) {
                assert_eq!(game.tag("Variant"), Some(v.id()));
                assert_eq!(game.tag("VariantFamily"), Some(v.id()));
                assert_eq!(game.tag("Ruleset"), Some(r.id()));
                assert_eq!(game.tag("FEN"), Some(record.start_fen.as_str()));
                assert_eq!(game.rules().expect("rules tags"), rules);
                let replay = game.replay(1).expect("replays");
                assert_eq!(replay.uci, record_uci(record), "{rules}");
            }
        }
    }
}

#[test]
fn files_written_before_variant_family_still_read() {
    let mut seen = BTreeSet::new();
    let dir = data("legacy");
    for entry in std::fs::read_dir(&dir).expect("tests/data/legacy") {
        let path = entry.expect("entry").path();
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("name");
        let (variant, ruleset) = stem.split_once('-').expect("<variant>-<ruleset>.pgn");
        let rules = Rules::parse(variant, Some(ruleset)).expect("rules in the file name");
        let text = std::fs::read_to_string(&path).expect("readable");
        let games = read(&text).expect("our reader");
        assert!(!games.is_empty(), "{stem}");
        for (i, game) in games.iter().enumerate() {
            let what = format!("{stem} game {}", i + 1);
            assert_eq!(game.tag("VariantFamily"), None, "{what}: not a legacy file");
            assert_eq!(game.tag("Variant"), Some(variant), "{what}");
            assert_eq!(game.rules().expect("rules tags"), rules, "{what}");
            let replay = game.replay(i + 1).expect("replays");
            let plies: usize = game
                .tag("PlyCount")
                .and_then(|n| n.parse().ok())
                .expect("PlyCount");
            assert_eq!(replay.uci.len(), plies, "{what}");
            let mate = matches!(replay.outcome, Some(engine::Outcome::Checkmate { .. }));
            assert_eq!(mate, game.tag("Termination") == Some("checkmate"), "{what}");
        }
        // What the change is for: standard readers took `[Variant "chess"]` but refused
        // Latte `normal` under `[Variant "latte"]`.
        if reads_as_orthodox(rules) {
            for replayed in read_standard(&text) {
                let refused = matches!(replayed, Err(Refusal::Variant(_)));
                assert_eq!(refused, rules.variant() == Variant::Latte, "{stem}");
            }
        }
        seen.insert(rules.to_string());
    }
    let every: BTreeSet<String> = Variant::ALL
        .into_iter()
        .flat_map(|v| v.rulesets().iter().map(move |r| format!("{v}/{r}")))
        .collect();
    assert_eq!(seen, every, "a legacy file for every rule-set");
}

#[test]
fn rules_tags_combine_as_documented() {
    let text = read_data("rules-tags.pgn");
    let games = read(&text).expect("our reader");
    assert!(!games.is_empty());
    for (i, game) in games.iter().enumerate() {
        let what = game.tag("Event").unwrap_or("?");
        let expect = game.tag("Expect").expect("an Expect tag");
        match (expect.strip_prefix("error: "), game.rules()) {
            (Some(part), Err(e)) => {
                assert!(e.to_string().contains(part), "{what}: {e}");
                assert!(game.replay(i + 1).is_err(), "{what}");
            }
            (None, Ok(rules)) => {
                assert_eq!(rules.to_string(), expect, "{what}");
                game.replay(i + 1).unwrap_or_else(|e| panic!("{what}: {e}"));
            }
            (_, got) => panic!("{what}: expected {expect}, got {got:?}"),
        }
    }
}
