//! Fuzzing the engine's readers of outside input on stable Rust: property tests that feed the
//! FEN reader, the move parsers (coordinate notation and SAN) and the UCI front end arbitrary
//! and mutated text. None of them may panic; a refusal is an error whose message names the
//! problem; an accepted FEN reads back to itself once written; the UCI loop stays answerable
//! (`isready` gives `readyok`) and answers every accepted `go` with one `bestmove`.

use std::sync::{Arc, Mutex, OnceLock};

use engine::board8::Board;
use engine::dispatch::{with_position, with_search_position, WithPosition, WithSearchPosition};
use engine::eval::SearchPosition;
use engine::notation::parse_uci;
use engine::san::{parse_san, to_san};
use engine::uci::{Output, Uci};
use engine::{gustavian, FenError, Game, Position, Rules, RulesError, Variant};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::{TestCaseError, TestRunner};

fn all_rules() -> Vec<Rules> {
    Variant::ALL
        .into_iter()
        .flat_map(|v| {
            v.rulesets()
                .iter()
                .map(move |&r| Rules::new(v, r).expect("listed rule-set"))
        })
        .collect()
}

/// Valid FENs to mutate: every start position, the perft suites' positions, and a few with a
/// legal en-passant capture (the field the writer drops when no capture is legal).
fn seeds() -> &'static [(Rules, String)] {
    static SEEDS: OnceLock<Vec<(Rules, String)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut out: Vec<(Rules, String)> = all_rules()
            .into_iter()
            .map(|r| (r, r.start_fen().to_string()))
            .collect();
        let chess = Rules::default_for(Variant::Chess);
        let secutor = Rules::default_for(Variant::Secutor);
        out.push((
            chess,
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3".into(),
        ));
        out.push((
            Rules::parse("latte", Some("both")).expect("rules"),
            "rr2k1r1/pppq1p1p/8/8/8/8/PPPQ1P1P/RR2K1RR w KQGBqgb - 0 1".into(),
        ));
        out.push((
            secutor,
            "srnbqkbnrs/*ppp1pppp*/*8*/*8*/*1Pp5*/*8*/*P1PPPPPP*/SRNBQKBNRS b KQkq c3 0 2".into(),
        ));
        for text in [
            include_str!("data/perft/chess.jsonl"),
            include_str!("data/perft/latte.jsonl"),
            include_str!("data/perft/secutor.jsonl"),
        ] {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let v: serde_json::Value = serde_json::from_str(line).expect("perft line");
                let rules = Rules::parse(
                    v["variant"].as_str().expect("variant"),
                    v["ruleset"].as_str(),
                )
                .expect("perft rules");
                let fen = v["fen"].as_str().expect("fen").to_string();
                if !out.iter().any(|(r, f)| *r == rules && *f == fen) {
                    out.push((rules, fen));
                }
            }
        }
        for (rules, fen) in &out {
            match with_search_position(*rules, ReadFen { fen }) {
                Ok(Some(_)) => {}
                Ok(None) => panic!("seed {fen} under {rules} is refused"),
                Err(e) => panic!("seed {fen} under {rules}: {e}"),
            }
        }
        out
    })
}

fn fail(message: String) -> TestCaseError {
    TestCaseError::fail(message)
}

/// Reads `fen` as `P`; an accepted FEN must be written back to a FEN that reads to the same
/// position, and its moves must go through both notations and make/unmake.
fn read_fen<P: SearchPosition>(rules: Rules, fen: &str) -> Result<Option<P>, TestCaseError> {
    let pos = match P::from_fen(rules, fen) {
        Ok(p) => p,
        Err(e) => {
            let message = e.to_string();
            prop_assert!(
                !message.trim().is_empty(),
                "empty error for {:?} under {}",
                fen,
                rules
            );
            return Ok(None);
        }
    };
    let written = pos.to_fen();
    let again = P::from_fen(rules, &written).map_err(|e| {
        fail(format!(
            "{fen:?} under {rules} was written as {written:?}, which is refused: {e}"
        ))
    })?;
    prop_assert_eq!(again.to_fen(), written.clone(), "{:?} under {}", fen, rules);
    prop_assert_eq!(
        &again,
        &pos,
        "{:?} under {}: written {:?}",
        fen,
        rules,
        written
    );
    prop_assert_eq!(pos.key(), pos.recompute_key(), "key of {:?}", fen);
    prop_assert_eq!(
        pos.eval_sums(),
        pos.recount_eval_sums(),
        "evaluation sums of {:?}",
        fen
    );
    prop_assert_eq!(pos.rules(), rules);
    Ok(Some(pos))
}

/// Every legal move of an accepted position goes through SAN, coordinate notation and
/// make/unmake: fuzzed positions (promoted pieces everywhere, kings in odd places, castling
/// rights next to attacked squares) reach corners that playouts from the start do not.
fn check_moves<P: SearchPosition>(pos: &P) -> Result<(), TestCaseError> {
    let fen = pos.to_fen();
    let moves = pos.legal_move_list();
    for &mv in &moves {
        let uci = pos.move_info(mv).uci();
        prop_assert_eq!(parse_uci(pos, &uci), Ok(mv), "UCI {} in {}", uci, fen);
        let san = to_san(pos, mv);
        prop_assert_eq!(parse_san(pos, &san), Ok(mv), "SAN {} in {}", san, fen);
        let mut after = pos.clone();
        let undo = after.make_move(mv);
        prop_assert_eq!(
            after.key(),
            after.recompute_key(),
            "key after {} in {}",
            uci,
            fen
        );
        prop_assert_eq!(
            after.eval_sums(),
            after.recount_eval_sums(),
            "evaluation sums after {} in {}",
            uci,
            fen
        );
        let written = after.to_fen();
        // The reader refuses clocks beyond 10000 / 100000 (fen_fields::parse_clocks), and a
        // move from a position at the cap steps past it: only positions within are re-read.
        if after.halfmove_clock() <= 10_000 && after.fullmove_number() <= 100_000 {
            let reread = P::from_fen(pos.rules(), &written)
                .map_err(|e| fail(format!("after {uci} in {fen}: {written} is refused: {e}")))?;
            prop_assert_eq!(reread.to_fen(), written, "after {} in {}", uci, fen);
        }
        after.unmake_move(mv, undo);
        prop_assert_eq!(&after, pos, "unmake of {} in {}", uci, fen);
    }
    Ok(())
}

/// A FEN read under its own geometry, with the move checks when accepted.
struct ReadFen<'a> {
    fen: &'a str,
}

impl WithSearchPosition for ReadFen<'_> {
    type Output = Result<Option<String>, TestCaseError>;
    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        match read_fen::<P>(rules, self.fen)? {
            Some(pos) => {
                check_moves(&pos)?;
                Ok(Some(pos.to_fen()))
            }
            None => Ok(None),
        }
    }
}

/// Reads `fen` under every rule-set with both position types: the type of the other geometry
/// must refuse it by name. Returns how many rule-sets accepted it.
fn read_everywhere(fen: &str) -> Result<usize, TestCaseError> {
    let mut accepted = 0;
    for rules in all_rules() {
        if with_search_position(rules, ReadFen { fen })?.is_some() {
            accepted += 1;
        }
        let wrong = match rules.variant() {
            Variant::Secutor => Board::from_fen(rules, fen).err(),
            _ => gustavian::Position::from_fen(rules, fen).err(),
        };
        prop_assert_eq!(
            wrong,
            Some(FenError::Rules(RulesError::WrongGeometry(rules.variant()))),
            "{:?} under {} read by the other geometry",
            fen,
            rules
        );
    }
    Ok(accepted)
}

/// Characters mutations draw from: the FEN alphabet of every variant, separators, digits that
/// `char::to_digit` does not know, and a few troublemakers.
const ALPHABET: &[char] = &[
    'p', 'n', 'b', 'r', 'q', 'k', 's', 'P', 'N', 'B', 'R', 'Q', 'K', 'S', 'G', 'g', '*', '/', ' ',
    '-', '0', '1', '2', '3', '7', '8', '9', 'w', 'a', 'e', 'h', 'i', 'j', 'x', '+', '\t', '\n',
    '\0', 'é', '٣', '９', '\u{3000}', '\u{202e}', '🂡',
];

/// Field and rank replacements: huge and negative numbers, empty fields, other fields' text.
const NASTY: &[&str] = &[
    "99999999999999999999",
    "18446744073709551616",
    "4294967295",
    "4294967296",
    "10000",
    "10001",
    "100000",
    "100001",
    "-1",
    "+3",
    "0",
    "00",
    "1e3",
    "",
    "-",
    "--",
    "w",
    "b",
    "W",
    "KQkq",
    "KQGBkqgb",
    "KKKKQQQQ",
    "e3",
    "e6",
    "c6",
    "j3",
    "a3",
    "a9",
    "a0",
    "k9",
    "e3e4",
    "*",
    "**********",
    "10",
    "11",
    "9",
    "18",
    "010",
    "1*8*1",
    "*8*",
    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppp",
    "٣",
    "８",
];

#[derive(Clone, Debug)]
enum Mutation {
    /// Replaces one character.
    Flip(Index, char),
    /// Deletes one character.
    Delete(Index),
    /// Inserts one character.
    Insert(Index, char),
    /// Cuts the text.
    Truncate(Index),
    /// Swaps two whitespace-separated fields.
    SwapFields(Index, Index),
    /// Drops a field.
    DropField(Index),
    /// Repeats a field after itself.
    DuplicateField(Index),
    /// Replaces a field by a nasty token.
    ReplaceField(Index, &'static str),
    /// Replaces one rank of the board by a nasty token.
    ReplaceRank(Index, &'static str),
    /// Swaps two ranks (valid text, often another legal position).
    SwapRanks(Index, Index),
    /// Swaps two characters of the board field (pieces move, runs break).
    SwapBoardChars(Index, Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let ch = prop::sample::select(ALPHABET);
    let nasty = prop::sample::select(NASTY);
    prop_oneof![
        (any::<Index>(), ch.clone()).prop_map(|(i, c)| Mutation::Flip(i, c)),
        any::<Index>().prop_map(Mutation::Delete),
        (any::<Index>(), ch).prop_map(|(i, c)| Mutation::Insert(i, c)),
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapFields(a, b)),
        any::<Index>().prop_map(Mutation::DropField),
        any::<Index>().prop_map(Mutation::DuplicateField),
        (any::<Index>(), nasty.clone()).prop_map(|(i, s)| Mutation::ReplaceField(i, s)),
        (any::<Index>(), nasty).prop_map(|(i, s)| Mutation::ReplaceRank(i, s)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapRanks(a, b)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapBoardChars(a, b)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let mut fields: Vec<String> = text.split(' ').map(str::to_string).collect();
    let ranks = |fields: &[String]| -> Vec<String> {
        fields
            .first()
            .map(|b| b.split('/').map(str::to_string).collect())
            .unwrap_or_default()
    };
    match m {
        Mutation::Flip(i, c) if !chars.is_empty() => {
            let i = i.index(chars.len());
            chars[i] = *c;
        }
        Mutation::Delete(i) if !chars.is_empty() => {
            chars.remove(i.index(chars.len()));
        }
        Mutation::Insert(i, c) => {
            let i = i.index(chars.len() + 1);
            chars.insert(i, *c);
        }
        Mutation::Truncate(i) => chars.truncate(i.index(chars.len() + 1)),
        Mutation::SwapFields(a, b) => {
            let (a, b) = (a.index(fields.len()), b.index(fields.len()));
            fields.swap(a, b);
            return fields.join(" ");
        }
        Mutation::DropField(i) => {
            fields.remove(i.index(fields.len()));
            return fields.join(" ");
        }
        Mutation::DuplicateField(i) => {
            let i = i.index(fields.len());
            let f = fields[i].clone();
            fields.insert(i, f);
            return fields.join(" ");
        }
        Mutation::ReplaceField(i, s) => {
            let i = i.index(fields.len());
            fields[i] = s.to_string();
            return fields.join(" ");
        }
        Mutation::ReplaceRank(i, s) => {
            let mut r = ranks(&fields);
            if !r.is_empty() {
                let i = i.index(r.len());
                r[i] = s.to_string();
                fields[0] = r.join("/");
            }
            return fields.join(" ");
        }
        Mutation::SwapRanks(a, b) => {
            let mut r = ranks(&fields);
            if !r.is_empty() {
                let n = r.len();
                r.swap(a.index(n), b.index(n));
                fields[0] = r.join("/");
            }
            return fields.join(" ");
        }
        Mutation::SwapBoardChars(a, b) => {
            let mut board: Vec<char> = fields[0].chars().collect();
            if !board.is_empty() {
                let n = board.len();
                board.swap(a.index(n), b.index(n));
                fields[0] = board.into_iter().collect();
            }
            return fields.join(" ");
        }
        _ => {}
    }
    chars.into_iter().collect()
}

/// A random position in FEN of either geometry: pieces anywhere (kings placed apart, so most
/// boards have one of each), random castling letters, en-passant squares and clocks. Many are
/// valid, which the mutations alone rarely give.
#[derive(Clone, Debug)]
struct RandomBoard {
    gustavian: bool,
    cells: Vec<u8>,
    kings: (Index, Index),
    black: bool,
    castling: Option<Vec<Index>>,
    ep: Option<(u8, u8)>,
    clocks: Option<(u64, u64)>,
}

fn random_board() -> impl Strategy<Value = RandomBoard> {
    (
        any::<bool>(),
        prop::collection::vec(0u8..48, 80),
        (any::<Index>(), any::<Index>()),
        any::<bool>(),
        prop::option::weighted(0.2, prop::collection::vec(any::<Index>(), 1..5)),
        prop::option::weighted(0.15, (0u8..10, 0u8..8)),
        prop::option::weighted(
            0.6,
            (
                prop_oneof![12 => 0u64..120, 1 => Just(10_000), 1 => Just(10_001), 1 => Just(u64::MAX)],
                prop_oneof![12 => 0u64..300, 1 => Just(100_000), 1 => Just(100_001), 1 => Just(1 << 40)],
            ),
        ),
    )
        .prop_map(
            |(gustavian, cells, kings, black, castling, ep, clocks)| RandomBoard {
                gustavian,
                cells,
                kings,
                black,
                castling,
                ep,
                clocks,
            },
        )
}

impl RandomBoard {
    fn fen(&self) -> String {
        let (files, pieces, letters): (usize, &[u8], &[u8]) = if self.gustavian {
            (10, b"PNBRQSpnbrqs", b"KQkq")
        } else {
            (8, b"PNBRQPpnbrqp", b"KQGBkqgb")
        };
        let hole = |file: usize, rank: usize| {
            self.gustavian && (1..=6).contains(&rank) && (file == 0 || file == 9)
        };
        let mut grid: Vec<Option<u8>> = (0..files * 8)
            .map(|i| {
                let code = self.cells[i];
                let piece = (code >= 36).then(|| pieces[usize::from(code - 36)])?;
                // Few pawns drawn for a first or last rank stay there.
                let back_rank = i < files || i >= files * 7;
                let pawn = piece.eq_ignore_ascii_case(&b'p');
                (!(back_rank && pawn && code != 47)).then_some(piece)
            })
            .collect();
        // Kings on real squares (a king on a hole is the mutations' job).
        let squares: Vec<usize> = (0..files * 8)
            .filter(|&i| !hole(i % files, i / files))
            .collect();
        grid[squares[self.kings.0.index(squares.len())]] = Some(b'K');
        grid[squares[self.kings.1.index(squares.len())]] = Some(b'k');
        let mut board = String::new();
        for rank in (0..8).rev() {
            let mut run = 0;
            for file in 0..files {
                let cell = if hole(file, rank) {
                    Some(b'*')
                } else {
                    grid[rank * files + file]
                };
                match cell {
                    None => run += 1,
                    Some(c) => {
                        if run > 0 {
                            board.push_str(&run.to_string());
                            run = 0;
                        }
                        board.push(char::from(c));
                    }
                }
            }
            if run > 0 {
                board.push_str(&run.to_string());
            }
            if rank > 0 {
                board.push('/');
            }
        }
        let mut castling: Vec<u8> = self
            .castling
            .iter()
            .flatten()
            .map(|i| letters[i.index(letters.len())])
            .collect();
        castling.sort_unstable();
        castling.dedup();
        let castling = if castling.is_empty() {
            "-".to_string()
        } else {
            String::from_utf8(castling).expect("ascii")
        };
        let ep = self.ep.map_or("-".to_string(), |(f, r)| {
            format!("{}{}", char::from(b'a' + f), r + 1)
        });
        let side = if self.black { "b" } else { "w" };
        let mut fen = format!("{board} {side} {castling} {ep}");
        if let Some((h, f)) = self.clocks {
            fen.push_str(&format!(" {h} {f}"));
        }
        fen
    }
}

/// Random characters of the FEN alphabet in FEN-like shape.
fn fen_shaped() -> impl Strategy<Value = String> {
    "[pnbrqksPNBRQKS1-9*]{0,11}(/[pnbrqksPNBRQKS0-9*]{0,11}){6,8}( [wbWB-]{1,2}( [KQGBkqgb-]{1,6}( [a-k1-9-]{1,3}( [0-9-]{1,6}){0,3}){0,1}){0,1}){0,1}"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_is_refused_with_a_reason_or_round_trips(text in prop_oneof![
        any::<String>(),
        fen_shaped(),
        prop::collection::vec(any::<u8>(), 0..120)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]) {
        read_everywhere(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_valid_fens_never_panic_and_round_trip(
        seed in any::<Index>(),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let (rules, fen) = &seeds()[seed.index(seeds().len())];
        let mut text = fen.clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        // Under its own rules with the move checks, and under every other rule-set.
        with_search_position(*rules, ReadFen { fen: &text })?;
        read_everywhere(&text)?;
    }

    #[test]
    fn random_boards_round_trip(board in random_board(), mutations in prop::collection::vec(mutation(), 0..2)) {
        let mut text = board.fen();
        for m in &mutations {
            text = apply(&text, m);
        }
        read_everywhere(&text)?;
    }
}

/// The mutation and random-board generators produce both accepted and refused FENs, so the
/// round-trip branch is exercised and not only the error one.
#[test]
fn generators_reach_both_outcomes() {
    let mut runner = TestRunner::deterministic();
    let (mut mutated_ok, mut mutated_err, mut random_ok, mut random_err) = (0, 0, 0, 0);
    let single = mutation();
    let boards = random_board();
    for _ in 0..400 {
        let m = single.new_tree(&mut runner).expect("tree").current();
        for (rules, fen) in seeds().iter().take(20) {
            let text = apply(fen, &m);
            match with_search_position(*rules, ReadFen { fen: &text }).expect("no property failure")
            {
                Some(_) => mutated_ok += 1,
                None => mutated_err += 1,
            }
        }
        let b = boards.new_tree(&mut runner).expect("tree").current();
        match read_everywhere(&b.fen()).expect("no property failure") {
            0 => random_err += 1,
            _ => random_ok += 1,
        }
    }
    // Seen: 1013 and 6987 mutated, 82 and 318 random.
    assert!(
        mutated_ok > 300 && mutated_err > 2000,
        "{mutated_ok} accepted, {mutated_err} refused"
    );
    assert!(
        random_ok > 30 && random_err > 30,
        "{random_ok} accepted, {random_err} refused"
    );
}

// ---------------------------------------------------------------------------------------------
// Moves: coordinate notation and SAN on arbitrary text.

/// Parses `text` as a move of `pos` in both notations: an accepted move is one of the legal
/// moves written that way; a refusal quotes the text.
fn parse_moves<P: Position>(pos: &P, text: &str) -> Result<(), TestCaseError> {
    let quoted = |e: &engine::MoveError| {
        let m = e.to_string();
        m.contains(&format!("{:?}", text.trim())) || m.contains(&format!("{text:?}"))
    };
    match parse_uci(pos, text) {
        Ok(mv) => prop_assert_eq!(pos.move_info(mv).uci(), text.trim()),
        Err(e) => prop_assert!(quoted(&e), "{} does not quote {:?}", e, text),
    }
    match parse_san(pos, text) {
        Ok(mv) => {
            prop_assert!(pos.legal_move_list().contains(&mv));
            let san = to_san(pos, mv);
            prop_assert_eq!(parse_san(pos, &san), Ok(mv), "{:?} read as {}", text, san);
        }
        Err(e) => prop_assert!(quoted(&e), "{} does not quote {:?}", e, text),
    }
    Ok(())
}

struct ParseMoves<'a> {
    fen: &'a str,
    texts: &'a [String],
    legal_pick: Index,
    mutation: &'a Mutation,
}

impl WithPosition for ParseMoves<'_> {
    type Output = Result<(), TestCaseError>;
    fn run<P: Position>(self, rules: Rules) -> Self::Output {
        let pos = P::from_fen(rules, self.fen).map_err(|e| fail(e.to_string()))?;
        for t in self.texts {
            parse_moves(&pos, t)?;
        }
        // A legal move in each notation, mutated.
        let moves = pos.legal_move_list();
        if !moves.is_empty() {
            let mv = moves[self.legal_pick.index(moves.len())];
            for written in [pos.move_info(mv).uci(), to_san(&pos, mv)] {
                parse_moves(&pos, &written)?;
                parse_moves(&pos, &apply(&written, self.mutation))?;
            }
        }
        Ok(())
    }
}

fn move_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-j][1-9][a-j][1-9][qrbnsltkpQ]?",
        "[NBRQKSP]?[a-j]?[1-8]?[x:-]?[a-j][0-9](=[QRBNSKPqx])?[+#!?]{0,2}",
        "[O0o](-[O0o]){1,3}(-[LR3l])?[+#]?",
        "[ a-jNBRQKSO0x=:+#!?1-9-]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn move_parsers_refuse_junk_by_name(
        seed in any::<Index>(),
        texts in prop::collection::vec(move_text(), 1..8),
        legal_pick in any::<Index>(),
        mutation in mutation(),
    ) {
        let (rules, fen) = &seeds()[seed.index(seeds().len())];
        with_position(*rules, ParseMoves { fen, texts: &texts, legal_pick, mutation: &mutation })?;
    }
}

// ---------------------------------------------------------------------------------------------
// The UCI front end, in process.

/// One command of a generated UCI session.
#[derive(Clone, Debug)]
enum Command {
    /// A line as is (vocabulary, junk, or lossily decoded bytes).
    Line(String),
    /// `position fen <seed> moves ...`: `plies` choices of legal moves played from the seed,
    /// then optionally one mutated move.
    Position {
        seed: Index,
        startpos: bool,
        plies: Vec<Index>,
        broken: Option<Mutation>,
    },
}

const VOCABULARY: &[&str] = &[
    "uci",
    "isready",
    "ucinewgame",
    "position",
    "startpos",
    "fen",
    "moves",
    "go",
    "depth",
    "nodes",
    "movetime",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "mate",
    "infinite",
    "ponder",
    "searchmoves",
    "stop",
    "ponderhit",
    "setoption",
    "name",
    "value",
    "UCI_Variant",
    "Ruleset",
    "Search",
    "Clear",
    "Threads",
    "d",
    "eval",
    "register",
    "debug",
    "on",
    "chess",
    "latte",
    "secutor",
    "luft",
    "both",
    "extended",
    "e2e4",
    "e7e5",
    "e1g1",
    "a7a8q",
    "0000",
    "1",
    "0",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
];

/// Values of `setoption`: ids of variants, rule-sets and searches, small hash sizes and refused
/// numbers (a valid large `Hash` would allocate that much memory, so none is generated).
const OPTION_VALUES: &[&str] = &[
    "chess",
    "latte",
    "secutor",
    "Latte",
    "normal",
    "luft",
    "tworooks",
    "both",
    "extended",
    "orthodox",
    "full",
    "plain",
    "1",
    "2",
    "4",
    "0",
    "65537",
    "-5",
    "1e3",
    "",
    "x y",
    "9223372036854775807",
    "true",
];

fn option_name() -> impl Strategy<Value = String> {
    let params: Vec<&'static str> = engine::params::SPECS.iter().map(|s| s.name).collect();
    prop_oneof![
        prop::sample::select(vec![
            "UCI_Variant",
            "uci_variant",
            "Ruleset",
            "Hash",
            "Clear Hash",
            "Search",
            "Ponder",
            "Threads",
            "MultiPV",
            "Move Overhead",
            "UCI_Chess960",
            "Nonexistent",
            "",
        ])
        .prop_map(str::to_string),
        prop::sample::select(params).prop_map(str::to_string),
    ]
}

fn position_command() -> impl Strategy<Value = Command> {
    (
        any::<Index>(),
        prop::bool::weighted(0.2),
        prop::collection::vec(any::<Index>(), 0..40),
        prop::option::weighted(0.3, mutation()),
    )
        .prop_map(|(seed, startpos, plies, broken)| Command::Position {
            seed,
            startpos,
            plies,
            broken,
        })
}

fn uci_command() -> impl Strategy<Value = Command> {
    let number = prop_oneof![
        4 => (0i64..6).prop_map(|n| n.to_string()),
        1 => prop::sample::select(vec!["-1", "9223372036854775807", "-9223372036854775808", "18446744073709551616", "x", ""]).prop_map(str::to_string),
    ];
    let go_key = prop::sample::select(vec![
        "depth",
        "nodes",
        "movetime",
        "wtime",
        "btime",
        "winc",
        "binc",
        "movestogo",
        "mate",
        "infinite",
        "ponder",
        "searchmoves",
        "junk",
    ]);
    let go = prop::collection::vec((go_key, number.clone()), 0..4).prop_map(|args| {
        let mut line = "go".to_string();
        for (k, n) in args {
            line.push(' ');
            line.push_str(k);
            if !matches!(k, "infinite" | "ponder") {
                line.push(' ');
                line.push_str(&n);
            }
        }
        Command::Line(line)
    });
    let perft = prop_oneof![
        (0u32..3).prop_map(|d| format!("go perft {d}")),
        Just("go perft".to_string()),
        Just("go perft -1".to_string()),
        Just("go perft x".to_string()),
    ]
    .prop_map(Command::Line);
    let setoption = (
        option_name(),
        prop::option::weighted(0.9, prop::sample::select(OPTION_VALUES)),
    )
        .prop_map(|(name, value)| {
            let mut line = format!("setoption name {name}");
            if let Some(v) = value {
                line.push_str(" value ");
                line.push_str(v);
            }
            Command::Line(line)
        });
    let broken_setoption = prop::sample::select(vec![
        "setoption",
        "setoption name",
        "setoption value 3",
        "setoption name value",
        "setoption name UCI_Variant value",
        "setoption name Ruleset value luft value both",
        "setoption foo name Hash value 2",
    ])
    .prop_map(|s| Command::Line(s.to_string()));
    let position = position_command();
    let fen_line =
        (any::<Index>(), prop::collection::vec(mutation(), 0..3)).prop_map(|(seed, ms)| {
            let (_, fen) = &seeds()[seed.index(seeds().len())];
            let mut text = fen.clone();
            for m in &ms {
                text = apply(&text, m);
            }
            Command::Line(format!("position fen {text}"))
        });
    let tokens = prop::collection::vec(
        prop_oneof![
            3 => prop::sample::select(VOCABULARY).prop_map(str::to_string),
            1 => "[a-zA-Z0-9_=+#*/-]{1,8}",
            1 => any::<String>(),
        ],
        0..12,
    )
    .prop_map(|t| Command::Line(t.join(" ")));
    let bytes = prop::collection::vec(any::<u8>(), 0..200)
        .prop_map(|b| Command::Line(String::from_utf8_lossy(&b).into_owned()));
    let long = (
        prop::sample::select(vec![
            "position startpos moves ",
            "go ",
            "setoption name ",
            "x",
            "position fen ",
        ]),
        "[a-z0-9 ]{1,6}",
        1000usize..20_000,
    )
        .prop_map(|(head, unit, n)| Command::Line(format!("{head}{}", unit.repeat(n))));
    let simple = prop::sample::select(vec![
        "uci",
        "isready",
        "ucinewgame",
        "stop",
        "ponderhit",
        "d",
        "eval",
        "quit",
        "",
        "   ",
        "position startpos",
        "position",
        "position fen",
        "position startpos moves",
        "position moves e2e4",
        "position fen moves e2e4",
        "go infinite",
    ])
    .prop_map(|s| Command::Line(s.to_string()));
    prop_oneof![
        3 => simple,
        3 => go,
        1 => perft,
        3 => setoption,
        1 => broken_setoption,
        3 => position,
        2 => fen_line,
        3 => tokens,
        1 => bytes,
        1 => long,
    ]
}

/// Plays `plies` choices of legal moves from `fen`; returns the moves in coordinate notation.
struct PlayChoices<'a> {
    fen: &'a str,
    plies: &'a [Index],
}

impl WithPosition for PlayChoices<'_> {
    type Output = Vec<String>;
    fn run<P: Position>(self, rules: Rules) -> Self::Output {
        let Ok(mut game) = Game::<P>::from_fen(rules, self.fen) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for pick in self.plies {
            let moves = game.position().legal_move_list();
            if moves.is_empty() {
                break;
            }
            let mv = moves[pick.index(moves.len())];
            out.push(game.position().move_info(mv).uci());
            game.play(mv);
        }
        out
    }
}

impl Command {
    fn line(&self) -> String {
        match self {
            Command::Line(l) => l.clone(),
            Command::Position {
                seed,
                startpos,
                plies,
                broken,
            } => {
                let (rules, fen) = &seeds()[seed.index(seeds().len())];
                let start = if *startpos {
                    rules.start_fen()
                } else {
                    fen.as_str()
                };
                let mut moves = with_position(*rules, PlayChoices { fen: start, plies });
                if let (Some(m), Some(last)) = (broken, moves.last_mut()) {
                    *last = apply(last, m);
                }
                let head = if *startpos {
                    "position startpos".to_string()
                } else {
                    format!("position fen {fen}")
                };
                // The variant the seed belongs to first, so the moves are legal in it.
                let setup = format!(
                    "setoption name UCI_Variant value {}\nsetoption name Ruleset value {}\n",
                    rules.variant(),
                    rules.ruleset()
                );
                if moves.is_empty() {
                    format!("{setup}{head}")
                } else {
                    format!("{setup}{head} moves {}", moves.join(" "))
                }
            }
        }
    }
}

/// An in-process UCI engine writing into a buffer.
struct Session {
    uci: Uci,
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl Session {
    fn new() -> Session {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let out: Output = buffer.clone();
        let mut uci = Uci::new(out);
        // Small tables: the test creates many engines.
        assert!(uci.handle("setoption name Hash value 1"));
        let mut s = Session { uci, buffer };
        s.take();
        s
    }

    /// Output since the last call.
    fn take(&mut self) -> Vec<String> {
        let bytes = std::mem::take(&mut *self.buffer.lock().unwrap_or_else(|p| p.into_inner()));
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// Output lines split into what the command loop said now and the bestmove lines (which the
/// search threads write whenever they finish).
fn check_errors(lines: &[String], line: &str) -> Result<usize, TestCaseError> {
    let mut errors = 0;
    for l in lines {
        if let Some(message) = l.strip_prefix("info string error:") {
            prop_assert!(!message.trim().is_empty(), "empty error for {:?}", line);
            errors += 1;
        }
    }
    Ok(errors)
}

fn run_session(commands: &[Command]) -> Result<(), TestCaseError> {
    let mut s = Session::new();
    let mut accepted_gos = 0usize;
    let mut bestmoves = 0usize;
    let mut all = Vec::new();
    for c in commands {
        for line in c.line().split('\n') {
            let first = line.split_whitespace().next();
            let go_on = s.uci.handle(line);
            prop_assert_eq!(go_on, first != Some("quit"), "return value of {:?}", line);
            let out = s.take();
            let errors = check_errors(&out, line)?;
            prop_assert!(errors <= 1, "{} errors for {:?}: {:?}", errors, line, out);
            let is_search = first == Some("go") && line.split_whitespace().nth(1) != Some("perft");
            if is_search && errors == 0 {
                accepted_gos += 1;
            }
            bestmoves += out.iter().filter(|l| l.starts_with("bestmove ")).count();
            all.extend(out);
        }
    }
    prop_assert!(s.uci.handle("stop"));
    prop_assert!(s.uci.handle("isready"));
    let out = s.take();
    bestmoves += out.iter().filter(|l| l.starts_with("bestmove ")).count();
    prop_assert_eq!(
        out.last().map(String::as_str),
        Some("readyok"),
        "after {:?}",
        out
    );
    // Every accepted search ends in exactly one bestmove (a search thread that panicked
    // would not write one).
    prop_assert_eq!(
        bestmoves,
        accepted_gos,
        "bestmove lines vs accepted go commands"
    );

    // The position the engine holds is one it can write and read again.
    prop_assert!(s.uci.handle("d"));
    let out = s.take();
    let d = out.last().cloned().unwrap_or_default();
    let rest = d
        .strip_prefix("info string variant ")
        .ok_or_else(|| fail(format!("d answered {out:?}")))?;
    let mut parts = rest.splitn(4, ' ');
    let variant = parts.next().unwrap_or("");
    prop_assert_eq!(parts.next(), Some("ruleset"));
    let ruleset = parts.next().unwrap_or("");
    let fen = parts
        .next()
        .and_then(|f| f.strip_prefix("fen "))
        .ok_or_else(|| fail(format!("d answered {d:?}")))?;
    let rules = Rules::parse(variant, Some(ruleset)).map_err(|e| fail(e.to_string()))?;
    prop_assert!(
        with_search_position(rules, ReadFen { fen })?.is_some(),
        "the engine holds {} under {}, which it refuses",
        fen,
        rules
    );
    prop_assert!(s.uci.handle("eval"));
    let out = s.take();
    prop_assert!(
        out.last()
            .is_some_and(|l| l.starts_with("info string eval ")),
        "eval answered {:?}",
        out
    );
    prop_assert!(!s.uci.handle("quit"));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn uci_sessions_never_panic_and_stay_answerable(commands in prop::collection::vec(uci_command(), 1..14)) {
        run_session(&commands)?;
    }
}

/// The session checks catch what they claim to: a refused command is seen as refused, an
/// accepted `go` is answered, and a bad position leaves the previous one in place.
#[test]
fn uci_session_checks_see_errors_and_answers() {
    let mut s = Session::new();
    assert!(s.uci.handle("position fen 8/8/8/8/8/8/8/8 w - - 0 1"));
    let out = s.take();
    assert_eq!(check_errors(&out, "").expect("non-empty"), 1, "{out:?}");
    assert!(out[0].contains("no white king"), "{out:?}");
    assert!(s.uci.handle("go nodes 50"));
    assert!(s.uci.handle("stop"));
    let out = s.take();
    assert_eq!(
        out.iter().filter(|l| l.starts_with("bestmove ")).count(),
        1,
        "{out:?}"
    );
    assert!(s.uci.handle("setoption name Hash value 65537"));
    let out = s.take();
    assert!(out[0].contains("65537"), "{out:?}");
    run_session(&[Command::Line("go depth 3".into())]).expect("accepted go answered");

    // Generated positions with legal moves are accepted, so sessions get past `position`.
    let mut runner = TestRunner::deterministic();
    let strategy = position_command();
    let mut clean = 0;
    for _ in 0..30 {
        let c = strategy.new_tree(&mut runner).expect("tree").current();
        if matches!(c, Command::Position { broken: None, .. }) {
            for line in c.line().split('\n') {
                assert!(s.uci.handle(line));
                let out = s.take();
                assert_eq!(
                    check_errors(&out, line).expect("non-empty"),
                    0,
                    "{line}: {out:?}"
                );
            }
            clean += 1;
        }
    }
    assert!(clean > 10, "{clean}");
}

/// A network file changed at random: bytes overwritten, the file cut short or lengthened, with
/// the digest made to match again or not (a file can be made so on purpose).
#[derive(Clone, Debug)]
struct NetMutation {
    writes: Vec<(Index, u8)>,
    cut: Option<Index>,
    extra: Vec<u8>,
    redigest: bool,
}

fn net_mutation() -> impl Strategy<Value = NetMutation> {
    (
        prop::collection::vec((any::<Index>(), any::<u8>()), 0..6),
        prop::option::weighted(0.2, any::<Index>()),
        prop::collection::vec(any::<u8>(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(writes, cut, extra, redigest)| NetMutation {
            writes,
            cut,
            extra,
            redigest,
        })
}

/// The shipped networks' files, the starting points of the mutations.
fn net_files() -> &'static [Vec<u8>] {
    static FILES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        [Variant::Chess, Variant::Latte]
            .into_iter()
            .map(|v| {
                let net = engine::board8::builtin_net(Rules::default_for(v)).expect("a network");
                engine::board8::net_file::to_bytes(net, v)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// A damaged or forged network file never panics the reader: it is refused with a reason
    /// naming the file, or, when every check passes, read as a network whose every weight is
    /// within the limits (so the engine's sums cannot overflow on it).
    #[test]
    fn mutated_network_files_never_panic(which in any::<Index>(), m in net_mutation()) {
        use sha2::{Digest, Sha256};
        let files = net_files();
        let mut bytes = files[which.index(files.len())].clone();
        for (at, value) in &m.writes {
            let i = at.index(bytes.len());
            bytes[i] = *value;
        }
        if let Some(cut) = &m.cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        bytes.extend_from_slice(&m.extra);
        if m.redigest && bytes.len() >= 32 {
            let n = bytes.len() - 32;
            let digest = Sha256::digest(&bytes[..n]);
            bytes[n..].copy_from_slice(&digest);
        }
        match engine::board8::net_file::parse(&bytes, "fuzzed.net") {
            Ok((_, net)) => {
                use engine::board8::net::{MAX_INPUT, MAX_OUTPUT, MAX_OUTPUT_BIAS};
                prop_assert!(net.input.iter().flatten().chain(&net.bias).all(|&w| i32::from(w).abs() <= MAX_INPUT));
                prop_assert!(net.output.iter().flatten().all(|&w| w.abs() <= MAX_OUTPUT));
                prop_assert!(net.output_bias.abs() <= MAX_OUTPUT_BIAS);
            }
            Err(e) => prop_assert!(e.to_string().contains("fuzzed.net"), "{e}"),
        }
    }
}
