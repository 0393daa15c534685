//! Fuzzing the coordinator's readers of outside input: run configs (`RunConfig::parse` on
//! arbitrary text, on text mutations and on TOML-value mutations of the configs in
//! `examples/`), local plans (`local::plan::parse`), and the check of a reported pair
//! (`facts::check_pair`) on arbitrary reports. Nothing may panic; a refused config names its
//! field and the problem; an accepted config survives a write/read round trip and accepts
//! the honest reports of its own assignment; a report is accepted exactly when an independent
//! restatement of the rules accepts it.

use std::io::Write;
use std::sync::OnceLock;

use coordinator::config::{ConfigError, RunConfig};
use coordinator::facts::{castling_kinds, check_pair};
use coordinator::local::plan;
use coordinator::model::{GameFacts, PairReport};
use engine::Rules;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::{TestCaseError, TestRunner};
use stats::study::{CastlingEvent, Outcome, Side};
use stats::PairScore;
use worker::record::Termination;

fn fail(message: String) -> TestCaseError {
    TestCaseError::fail(message)
}

/// Where the example plans are, and the files they name (`options_file`).
fn examples_dir() -> &'static std::path::Path {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

/// The example plans, read from `examples/` (so a new example is fuzzed too).
fn plans() -> &'static [(String, String)] {
    static PLANS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    PLANS.get_or_init(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
        let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
            .expect("examples directory")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).expect("readable example");
                (p.display().to_string(), text)
            })
            .collect();
        out.sort();
        assert!(out.len() >= 3, "examples/ has plans: {out:?}");
        out
    })
}

/// Single-run configs: each run of each example plan (as `plan.rs` splits them, without the
/// plan-only `tuned_from`), and a few written here for what the examples lack.
fn seeds() -> &'static [String] {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut out = Vec::new();
        for (path, text) in plans() {
            let mut doc: toml::Table = text.parse().expect("example is TOML");
            let Some(toml::Value::Array(runs)) = doc.remove("runs") else {
                panic!("{path} has no [[runs]]");
            };
            for run in runs {
                let toml::Value::Table(mut table) = run else {
                    panic!("{path}: a run that is not a table")
                };
                table.remove("tuned_from");
                coordinator::options_file::resolve(&mut table, examples_dir(), "")
                    .unwrap_or_else(|e| panic!("{path}: {e}"));
                out.push(toml::to_string(&table).expect("serialisable"));
            }
        }
        out.extend(
            [
                r#"
name = "three rule-sets"
kind = "study"
games = 60
priority = -3
throughput = 250
seed = 99
pgn = false
batch_seconds = 30
book = "latte-normal.epd"
[limits]
nodes = 300
depth = 9
movetime_ms = 50
max_plies = 120
[adjudication]
enabled = false
resign_score = 900
draw_after_move = 40
[[variants]]
variant = "latte"
ruleset = "normal"
weight = 3
[[variants]]
variant = "latte"
ruleset = "both"
weight = 1
book = "latte-both.epd"
[[variants]]
variant = "latte"
ruleset = "tworooks"
weight = 2
[first]
name = "x"
options = { Hash = 4, KnightValueMg = 300 }
[study]
baseline = "normal"
"#,
                r#"
name = "every geometry"
kind = "match"
games = 30
[limits]
depth = 3
[[variants]]
variant = "chess"
[[variants]]
variant = "secutor"
ruleset = "extended"
weight = 2
[[variants]]
variant = "secutor"
ruleset = "orthodox"
[first]
engine = "stockfish-16"
sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
options = { Threads = 1, "Skill Level" = "5" }
[second]
engine = "builtin"
"#,
                r#"
name = "a test"
kind = "sprt"
games = 1000
[limits]
movetime_ms = 100
[[variants]]
variant = "chess"
ruleset = "normal"
[first]
[sprt]
elo0 = -1.5
elo1 = 3.0
alpha = 0.1
beta = 0.2
model = "logistic"
batch_pairs = 8
"#,
            ]
            .map(str::to_string),
        );
        for text in &out {
            if let Err(e) = RunConfig::parse(text) {
                panic!("seed config is refused: {e}\n{text}");
            }
        }
        out
    })
}

fn parsed_seeds() -> &'static [RunConfig] {
    static CONFIGS: OnceLock<Vec<RunConfig>> = OnceLock::new();
    CONFIGS.get_or_init(|| {
        seeds()
            .iter()
            .map(|t| RunConfig::parse(t).expect("seed"))
            .collect()
    })
}

// ---------------------------------------------------------------------------------------------
// Reports

fn assigned_rules(config: &RunConfig, index: u64) -> Rules {
    let entry = config.entry_for_pair(index);
    Rules::parse(
        &entry.variant,
        (!entry.ruleset.is_empty()).then_some(entry.ruleset.as_str()),
    )
    .expect("a parsed config has playable rules")
}

fn max_plies(config: &RunConfig) -> u32 {
    if config.limits.max_plies > 0 {
        (config.limits.max_plies + 1).min(proto::limits::PLIES)
    } else {
        proto::limits::PLIES
    }
}

/// Choices that make an honest pair out of a config's assignment.
#[derive(Clone, Debug)]
struct HonestShape {
    index: Index,
    first_white_in_first_game: bool,
    games: [HonestGame; 2],
    pgn: Option<Vec<u8>>,
}

#[derive(Clone, Debug)]
struct HonestGame {
    outcome: u8,
    termination: Index,
    plies: Index,
    castlings: Vec<(bool, Index, Index)>,
}

fn honest_shape() -> impl Strategy<Value = HonestShape> {
    let game = (
        0u8..3,
        any::<Index>(),
        any::<Index>(),
        prop::collection::vec((any::<bool>(), any::<Index>(), any::<Index>()), 0..3),
    )
        .prop_map(|(outcome, termination, plies, castlings)| HonestGame {
            outcome,
            termination,
            plies,
            castlings,
        });
    (
        any::<Index>(),
        any::<bool>(),
        [game.clone(), game],
        prop::option::of(prop::collection::vec(any::<u8>(), 0..300)),
    )
        .prop_map(
            |(index, first_white_in_first_game, games, pgn)| HonestShape {
                index,
                first_white_in_first_game,
                games,
                pgn,
            },
        )
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).expect("in memory");
    e.finish().expect("in memory")
}

fn outcome(k: u8) -> Outcome {
    match k % 3 {
        0 => Outcome::WhiteWin,
        1 => Outcome::Draw,
        _ => Outcome::BlackWin,
    }
}

/// A pair the assigned games could have produced, as the worker reports it.
fn honest_report(config: &RunConfig, shape: &HonestShape) -> PairReport {
    let index = shape.index.index(config.pairs() as usize) as u64;
    let entry = config.entry_for_pair(index);
    let kinds = castling_kinds(assigned_rules(config, index));
    let games = shape
        .games
        .iter()
        .enumerate()
        .map(|(k, g)| {
            let plies = g.plies.index(max_plies(config) as usize + 1) as u32;
            let mut castlings: Vec<CastlingEvent> = Vec::new();
            for &(black, kind, number) in &g.castlings {
                let side = if black { Side::Black } else { Side::White };
                if castlings.iter().any(|c| c.side == side) {
                    continue;
                }
                castlings.push(CastlingEvent {
                    side,
                    kind: kinds[kind.index(kinds.len())].to_string(),
                    move_number: 1 + number.index((plies / 2 + 1) as usize) as u32,
                });
            }
            GameFacts {
                outcome: outcome(g.outcome),
                first_is_white: shape.first_white_in_first_game == (k == 0),
                termination: Termination::ALL[g.termination.index(Termination::ALL.len())]
                    .id()
                    .to_string(),
                plies,
                castlings,
                ruleset: entry.ruleset.clone(),
                variant: entry.variant.clone(),
                milestones: Vec::new(),
            }
        })
        .collect();
    PairReport {
        index,
        games,
        pgn_gz: shape.pgn.as_deref().map(gzip).unwrap_or_default(),
    }
}

/// Whether a report should be accepted, restated from the rules in `facts.rs`'s header: the
/// assigned pair, two games with colours reversed, known ids, sizes within the limits.
fn acceptable(config: &RunConfig, p: &PairReport) -> bool {
    use proto::limits;
    if p.index >= config.pairs() || p.games.len() != 2 {
        return false;
    }
    if p.games[0].first_is_white == p.games[1].first_is_white {
        return false;
    }
    if p.pgn_gz.len() > limits::PGN_GZ_BYTES
        || !(p.pgn_gz.is_empty() || p.pgn_gz.starts_with(&[0x1f, 0x8b]))
    {
        return false;
    }
    let assigned = assigned_rules(config, p.index);
    let kinds = castling_kinds(assigned);
    p.games.iter().all(|g| {
        let played = Rules::parse(
            &g.variant,
            (!g.ruleset.is_empty()).then_some(g.ruleset.as_str()),
        );
        let mut sides = Vec::new();
        played == Ok(assigned)
            && g.variant.len() <= limits::RULES_ID_BYTES
            && g.ruleset.len() <= limits::RULES_ID_BYTES
            && Termination::from_id(&g.termination).is_some()
            && g.plies <= max_plies(config)
            && g.castlings.len() <= limits::CASTLINGS_PER_GAME
            && g.castlings.iter().all(|c| {
                let first_for_side = !sides.contains(&c.side);
                sides.push(c.side);
                kinds.contains(&c.kind.as_str())
                    && first_for_side
                    && c.move_number >= 1
                    && c.move_number <= g.plies / 2 + 1 + 10_000
            })
    })
}

/// `first`'s half points over the pair.
fn half_points(p: &PairReport) -> u8 {
    p.games
        .iter()
        .map(|g| {
            let white = match g.outcome {
                Outcome::WhiteWin => 2,
                Outcome::Draw => 1,
                Outcome::BlackWin => 0,
            };
            if g.first_is_white {
                white
            } else {
                2 - white
            }
        })
        .sum()
}

fn check_report(config: &RunConfig, p: &PairReport) -> Result<(), TestCaseError> {
    let expected = acceptable(config, p);
    match check_pair(config, p) {
        Ok(score) => {
            prop_assert!(expected, "accepted a report the rules refuse: {:?}", p);
            prop_assert_eq!(Some(score), PairScore::from_half_points(half_points(p)));
        }
        Err(e) => {
            let message = e.to_string();
            prop_assert!(
                !expected,
                "refused a report the rules accept: {} for {:?}",
                message,
                p
            );
            prop_assert!(
                message.contains(&format!("pair {}", p.index)),
                "the error does not name the pair: {}",
                message
            );
            prop_assert!(
                message.len() < 4096,
                "an unbounded error message: {} bytes",
                message.len()
            );
        }
    }
    Ok(())
}

const RULES_IDS: &[&str] = &[
    "chess", "latte", "secutor", "normal", "luft", "tworooks", "both", "extended", "orthodox", "",
    "LATTE", "Normal", "standard", "shogi", " latte", "luft ", "normal\0",
];

const TERMINATION_IDS: &[&str] = &[
    "checkmate",
    "Checkmate",
    "checkmate ",
    "won by charm",
    "draw",
    "",
    "max_moves",
];

const CASTLING_IDS: &[&str] = &[
    "king",
    "queen",
    "luft-king",
    "luft-queen",
    "tworooks-king",
    "tworooks-queen",
    "extended-king",
    "extended-queen",
    "O-O",
    "",
    "King",
    "king ",
    "luft",
    "ééééééééééééééééé",
];

fn id_string(known: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(known).prop_map(str::to_string),
        2 => prop::sample::select(Termination::ALL.map(|t| t.id()).to_vec()).prop_map(str::to_string),
        1 => any::<String>(),
        1 => "[a-z-]{0,40}",
        1 => (1usize..5000).prop_map(|n| "x".repeat(n)),
    ]
}

fn any_u32() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..400,
        any::<u32>(),
        prop::sample::select(vec![
            0,
            1,
            100_000,
            100_001,
            u32::MAX,
            u32::MAX / 2,
            u32::MAX / 2 + 10_002
        ]),
    ]
}

fn arbitrary_game() -> impl Strategy<Value = GameFacts> {
    (
        0u8..3,
        any::<bool>(),
        id_string(TERMINATION_IDS),
        any_u32(),
        prop::collection::vec(
            (any::<bool>(), id_string(CASTLING_IDS), any_u32()).prop_map(
                |(black, kind, move_number)| CastlingEvent {
                    side: if black { Side::Black } else { Side::White },
                    kind,
                    move_number,
                },
            ),
            0..7,
        ),
        id_string(RULES_IDS),
        id_string(RULES_IDS),
    )
        .prop_map(
            |(o, first_is_white, termination, plies, castlings, ruleset, variant)| GameFacts {
                outcome: outcome(o),
                first_is_white,
                termination,
                plies,
                castlings,
                ruleset,
                variant,
                milestones: Vec::new(),
            },
        )
}

fn arbitrary_pgn() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => Just(Vec::new()),
        2 => prop::collection::vec(any::<u8>(), 0..3000),
        2 => prop::collection::vec(any::<u8>(), 0..3000).prop_map(|mut b| {
            b.splice(0..0, [0x1f, 0x8b]);
            b
        }),
        1 => prop::collection::vec(any::<u8>(), 0..2000).prop_map(|b| gzip(&b)),
        1 => Just(vec![0x1f; proto::limits::PGN_GZ_BYTES + 1]),
        1 => Just({
            let mut b = vec![0u8; proto::limits::PGN_GZ_BYTES];
            b[0] = 0x1f;
            b[1] = 0x8b;
            b
        }),
    ]
}

/// A report near the honest one for its config: one field of one game changed, so the check
/// is exercised past its first refusal.
#[derive(Clone, Debug)]
enum Forgery {
    Variant(String),
    Ruleset(String),
    Termination(String),
    Plies(u32),
    Castling(CastlingEvent),
    SameColours,
    DropGame,
    ExtraGame,
    Index(u64),
    Pgn(Vec<u8>),
}

fn forgery() -> impl Strategy<Value = Forgery> {
    prop_oneof![
        id_string(RULES_IDS).prop_map(Forgery::Variant),
        id_string(RULES_IDS).prop_map(Forgery::Ruleset),
        id_string(TERMINATION_IDS).prop_map(Forgery::Termination),
        any_u32().prop_map(Forgery::Plies),
        (any::<bool>(), id_string(CASTLING_IDS), any_u32()).prop_map(
            |(black, kind, move_number)| {
                Forgery::Castling(CastlingEvent {
                    side: if black { Side::Black } else { Side::White },
                    kind,
                    move_number,
                })
            }
        ),
        Just(Forgery::SameColours),
        Just(Forgery::DropGame),
        Just(Forgery::ExtraGame),
        prop_oneof![any::<u64>(), 0u64..20_000, Just(u64::MAX)].prop_map(Forgery::Index),
        arbitrary_pgn().prop_map(Forgery::Pgn),
    ]
}

fn forge(p: &mut PairReport, f: &Forgery, which: bool) {
    let g = usize::from(which);
    match f {
        Forgery::Variant(s) => p.games[g].variant = s.clone(),
        Forgery::Ruleset(s) => p.games[g].ruleset = s.clone(),
        Forgery::Termination(s) => p.games[g].termination = s.clone(),
        Forgery::Plies(n) => p.games[g].plies = *n,
        Forgery::Castling(c) => p.games[g].castlings.push(c.clone()),
        Forgery::SameColours => p.games[1].first_is_white = p.games[0].first_is_white,
        Forgery::DropGame => {
            p.games.remove(g);
        }
        Forgery::ExtraGame => {
            let again = p.games[g].clone();
            p.games.push(again);
        }
        Forgery::Index(i) => p.index = *i,
        Forgery::Pgn(b) => p.pgn_gz = b.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn honest_reports_are_accepted(config in any::<Index>(), shape in honest_shape()) {
        let config = &parsed_seeds()[config.index(parsed_seeds().len())];
        let report = honest_report(config, &shape);
        prop_assert!(acceptable(config, &report), "the test's own rules refuse {:?}", report);
        if let Err(e) = check_pair(config, &report) {
            return Err(fail(format!("honest report refused: {e}: {report:?}")));
        }
        check_report(config, &report)?;
    }

    #[test]
    fn forged_reports_are_refused_by_name(
        config in any::<Index>(),
        shape in honest_shape(),
        forgeries in prop::collection::vec((forgery(), any::<bool>()), 1..3),
    ) {
        let config = &parsed_seeds()[config.index(parsed_seeds().len())];
        let mut report = honest_report(config, &shape);
        for (f, which) in &forgeries {
            if report.games.len() == 2 {
                forge(&mut report, f, *which);
            }
        }
        check_report(config, &report)?;
    }

    #[test]
    fn arbitrary_reports_never_panic(
        config in any::<Index>(),
        index in prop_oneof![0u64..64, any::<u64>()],
        games in prop::collection::vec(arbitrary_game(), 0..4),
        pgn_gz in arbitrary_pgn(),
    ) {
        let config = &parsed_seeds()[config.index(parsed_seeds().len())];
        check_report(config, &PairReport { index, games, pgn_gz })?;
    }
}

/// The report checks can fail: a report the rules refuse is seen as refused, and the
/// restatement agrees with `check_pair` on the unit tests' forgeries.
#[test]
fn report_oracle_sees_forgeries() {
    let config = &parsed_seeds()[0];
    let mut runner = TestRunner::deterministic();
    let shape = honest_shape()
        .new_tree(&mut runner)
        .expect("tree")
        .current();
    let honest = honest_report(config, &shape);
    assert!(acceptable(config, &honest));
    for f in [
        Forgery::Variant("shogi".into()),
        Forgery::Termination("won by charm".into()),
        Forgery::Plies(u32::MAX),
        Forgery::SameColours,
        Forgery::DropGame,
        Forgery::Index(u64::MAX),
        Forgery::Pgn(vec![1, 2, 3]),
    ] {
        let mut p = honest.clone();
        forge(&mut p, &f, true);
        assert!(!acceptable(config, &p), "{f:?}");
        assert!(check_pair(config, &p).is_err(), "{f:?}");
        check_report(config, &p).expect("agrees");
    }
}

// ---------------------------------------------------------------------------------------------
// Configs

fn check_config_error(e: &ConfigError, text: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        !e.field.trim().is_empty(),
        "no field in {:?} for {:?}",
        e,
        text
    );
    prop_assert!(
        !e.message.trim().is_empty(),
        "no message in {:?} for {:?}",
        e,
        text
    );
    prop_assert!(e.to_string().contains(e.field.as_str()));
    Ok(())
}

/// An accepted config: written back as TOML it reads to the same config, every pair has an
/// entry of the config, its honest reports pass, and its derived settings are available.
fn check_accepted(config: &RunConfig, shape: &HonestShape) -> Result<(), TestCaseError> {
    let written = toml::to_string(config).map_err(|e| fail(format!("unwritable config: {e}")))?;
    let again = RunConfig::parse(&written)
        .map_err(|e| fail(format!("written config refused: {e}\n{written}")))?;
    prop_assert_eq!(
        toml::to_string(&again).map_err(|e| fail(e.to_string()))?,
        written.clone(),
        "round trip"
    );
    prop_assert!(config.pairs() >= 1);
    let pairs = config.pairs();
    for index in [
        0,
        1,
        pairs / 2,
        pairs - 1,
        pairs.saturating_add(7),
        u64::MAX,
    ] {
        let entry = config.entry_for_pair(index);
        prop_assert!(config.variants.contains(entry));
        config.opening_for_pair(index);
    }
    config
        .spsa_config()
        .map_err(|e| fail(format!("parsed but spsa_config: {e}")))?;
    config
        .sprt_params()
        .map_err(|e| fail(format!("parsed but sprt_params: {e}")))?;
    let report = honest_report(config, shape);
    if let Err(e) = check_pair(config, &report) {
        return Err(fail(format!(
            "honest report refused: {e}\n{written}\n{report:?}"
        )));
    }
    Ok(())
}

fn check_config_text(text: &str, shape: &HonestShape) -> Result<bool, TestCaseError> {
    match RunConfig::parse(text) {
        Ok(c) => {
            check_accepted(&c, shape)?;
            Ok(true)
        }
        Err(e) => {
            check_config_error(&e, text)?;
            Ok(false)
        }
    }
}

/// Text edits of a config.
#[derive(Clone, Debug)]
enum TextEdit {
    Flip(Index, char),
    Delete(Index),
    Insert(Index, char),
    Truncate(Index),
    DropLine(Index),
    DuplicateLine(Index),
    SwapLines(Index, Index),
    /// Replaces the value after the `=` of a line.
    Value(Index, &'static str),
}

const CONFIG_CHARS: &[char] = &[
    '=', '"', '\'', '[', ']', '{', '}', ',', '.', '#', '\n', ' ', '\t', '0', '1', '9', '-', '+',
    'e', 'x', 'a', '_', '\\', '\0', 'é', '\u{feff}',
];

const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "1000",
    "1001",
    "2000000000",
    "2000000002",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "4294967296",
    "0.5",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "-0.0",
    "true",
    "\"\"",
    "\"x\"",
    "\"builtin\"",
    "\"chess\"",
    "\"secutor\"",
    "\"luft\"",
    "\"study\"",
    "\"spsa\"",
    "\"sprt\"",
    "\"match\"",
    "\"bayeselo\"",
    "\"../../etc/passwd\"",
    "\".hidden\"",
    "[]",
    "[1, \"a\"]",
    "{}",
    "{ Hash = 65537 }",
    "{ Hash = \"8\" }",
    "{ NoSuchParam = 1 }",
    "1979-05-27T07:32:00Z",
    "\"\"\"\nKnightValueMg, 300, 100, 500, 20, 0.002\n\"\"\"",
    "\"KnightValueMg, nan, nan, nan, nan, nan\"",
    "\"KnightValueMg, 300, 500, 100, 0, 0\"",
    "\"KnightValueMg, float, 300, 100, 500, inf, 0.002\"",
    "\"KnightValueMg, int, 1e308, -1e308, 1e308, 1e308, 1e308\"",
    "\"x,1,2,3,4,5\\ny,1,2\"",
];

fn text_edit() -> impl Strategy<Value = TextEdit> {
    let ch = prop::sample::select(CONFIG_CHARS);
    prop_oneof![
        1 => (any::<Index>(), ch.clone()).prop_map(|(i, c)| TextEdit::Flip(i, c)),
        1 => any::<Index>().prop_map(TextEdit::Delete),
        1 => (any::<Index>(), ch).prop_map(|(i, c)| TextEdit::Insert(i, c)),
        1 => any::<Index>().prop_map(TextEdit::Truncate),
        2 => any::<Index>().prop_map(TextEdit::DropLine),
        2 => any::<Index>().prop_map(TextEdit::DuplicateLine),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| TextEdit::SwapLines(a, b)),
        4 => (any::<Index>(), prop::sample::select(VALUES)).prop_map(|(i, v)| TextEdit::Value(i, v)),
    ]
}

fn edit_text(text: &str, e: &TextEdit) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    match e {
        TextEdit::Flip(i, c) if !chars.is_empty() => {
            let i = i.index(chars.len());
            chars[i] = *c;
        }
        TextEdit::Delete(i) if !chars.is_empty() => {
            chars.remove(i.index(chars.len()));
        }
        TextEdit::Insert(i, c) => chars.insert(i.index(chars.len() + 1), *c),
        TextEdit::Truncate(i) => chars.truncate(i.index(chars.len() + 1)),
        TextEdit::DropLine(i) if !lines.is_empty() => {
            lines.remove(i.index(lines.len()));
            return lines.join("\n");
        }
        TextEdit::DuplicateLine(i) if !lines.is_empty() => {
            let i = i.index(lines.len());
            let l = lines[i].clone();
            lines.insert(i, l);
            return lines.join("\n");
        }
        TextEdit::SwapLines(a, b) if !lines.is_empty() => {
            let n = lines.len();
            lines.swap(a.index(n), b.index(n));
            return lines.join("\n");
        }
        TextEdit::Value(i, v) => {
            let with_value: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].contains('=') && !lines[k].trim_start().starts_with('['))
                .collect();
            if !with_value.is_empty() {
                let k = with_value[i.index(with_value.len())];
                let key = lines[k].split('=').next().unwrap_or("").to_string();
                lines[k] = format!("{key}= {v}");
            }
            return lines.join("\n");
        }
        _ => {}
    }
    chars.into_iter().collect()
}

/// Edits of the config as TOML values: a value anywhere replaced, removed, or a key added.
#[derive(Clone, Debug)]
enum ValueEdit {
    Replace(Index, toml::Value),
    Remove(Index),
    Add(Index, String, toml::Value),
}

fn toml_value() -> impl Strategy<Value = toml::Value> {
    use toml::Value as V;
    let leaf = prop_oneof![
        prop::sample::select(vec![
            0i64,
            1,
            -1,
            2,
            3,
            7,
            16,
            17,
            1000,
            1001,
            65_536,
            65_537,
            2_000_000_000,
            2_000_000_002,
            4_294_967_295,
            4_294_967_296,
            i64::MAX,
            i64::MIN,
            i32::MIN as i64 - 1,
        ])
        .prop_map(V::Integer),
        any::<i64>().prop_map(V::Integer),
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(-0.0),
            Just(0.05),
            Just(0.4999),
            Just(0.5),
            Just(1000.0),
            Just(1000.0001),
            Just(1e308),
            Just(f64::MIN_POSITIVE),
        ]
        .prop_map(V::Float),
        any::<bool>().prop_map(V::Boolean),
        prop::sample::select(VALUES).prop_map(|s| V::String(s.trim_matches('"').to_string())),
        any::<String>().prop_map(V::String),
        (1usize..400).prop_map(|n| V::String("n".repeat(n))),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(toml::Value::Array),
            prop::collection::btree_map("[a-zA-Z_]{1,12}", inner, 0..4)
                .prop_map(|m| toml::Value::Table(m.into_iter().collect())),
        ]
    })
}

fn value_edit() -> impl Strategy<Value = ValueEdit> {
    prop_oneof![
        4 => (any::<Index>(), toml_value()).prop_map(|(i, v)| ValueEdit::Replace(i, v)),
        2 => any::<Index>().prop_map(ValueEdit::Remove),
        1 => (
            any::<Index>(),
            prop::sample::select(vec![
                "sprt", "spsa", "study", "second", "pgn", "book", "weight", "ruleset", "sha256",
                "options", "baseline", "extra", "tuned_from", "max_plies", "model",
            ]),
            toml_value()
        )
            .prop_map(|(i, k, v)| ValueEdit::Add(i, k.to_string(), v)),
    ]
}

/// Every path in a TOML document (keys and array positions), the root first.
fn paths(v: &toml::Value, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    match v {
        toml::Value::Table(t) => {
            for (k, child) in t {
                let mut p = prefix.clone();
                p.push(k.clone());
                paths(child, p, out);
            }
        }
        toml::Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                let mut p = prefix.clone();
                p.push(format!("#{i}"));
                paths(child, p, out);
            }
        }
        _ => {}
    }
}

fn at_path<'a>(v: &'a mut toml::Value, path: &[String]) -> Option<&'a mut toml::Value> {
    let Some((head, rest)) = path.split_first() else {
        return Some(v);
    };
    let child = match v {
        toml::Value::Table(t) => t.get_mut(head)?,
        toml::Value::Array(a) => a.get_mut(head.strip_prefix('#')?.parse::<usize>().ok()?)?,
        _ => return None,
    };
    at_path(child, rest)
}

fn edit_value(doc: &mut toml::Value, e: &ValueEdit) {
    let mut all = Vec::new();
    paths(doc, Vec::new(), &mut all);
    match e {
        ValueEdit::Replace(i, v) => {
            // Not the root: the document stays a table.
            let path = &all[1 + i.index(all.len() - 1)];
            if let Some(slot) = at_path(doc, path) {
                *slot = v.clone();
            }
        }
        ValueEdit::Remove(i) => {
            let path = &all[1 + i.index(all.len() - 1)];
            let (last, parent) = path.split_last().expect("not the root");
            match at_path(doc, parent) {
                Some(toml::Value::Table(t)) => {
                    t.remove(last);
                }
                Some(toml::Value::Array(a)) => {
                    if let Some(k) = last.strip_prefix('#').and_then(|k| k.parse::<usize>().ok()) {
                        if k < a.len() {
                            a.remove(k);
                        }
                    }
                }
                _ => {}
            }
        }
        ValueEdit::Add(i, key, v) => {
            let tables: Vec<&Vec<String>> = all
                .iter()
                .filter(|p| {
                    let mut probe = doc.clone();
                    matches!(at_path(&mut probe, p), Some(toml::Value::Table(_)))
                })
                .collect();
            let path = tables[i.index(tables.len())].clone();
            if let Some(toml::Value::Table(t)) = at_path(doc, &path) {
                t.insert(key.clone(), v.clone());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_is_refused_with_field_and_message(
        text in prop_oneof![
            any::<String>(),
            "([a-z_\\[\\]=\" .0-9\n{},-]{0,30}\n){0,12}",
            prop::collection::vec(any::<u8>(), 0..400).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        ],
        shape in honest_shape(),
    ) {
        check_config_text(&text, &shape)?;
    }

    #[test]
    fn text_mutations_of_valid_configs_never_panic(
        seed in any::<Index>(),
        edits in prop::collection::vec(text_edit(), 1..4),
        shape in honest_shape(),
    ) {
        let mut text = seeds()[seed.index(seeds().len())].clone();
        for e in &edits {
            text = edit_text(&text, e);
        }
        check_config_text(&text, &shape)?;
    }

    #[test]
    fn value_mutations_of_valid_configs_never_panic(
        seed in any::<Index>(),
        edits in prop::collection::vec(value_edit(), 1..4),
        shape in honest_shape(),
    ) {
        let text = &seeds()[seed.index(seeds().len())];
        let mut doc = toml::Value::Table(text.parse::<toml::Table>().expect("seed is TOML"));
        for e in &edits {
            edit_value(&mut doc, e);
        }
        // Some values (NaN keys, nested arrays of tables) have no TOML text; those are
        // skipped rather than counted.
        if let Ok(text) = toml::to_string(&doc) {
            check_config_text(&text, &shape)?;
        }
    }
}

/// A plan's error names the run and field; an accepted plan's runs are accepted configs.
fn check_plan_text(text: &str, scale: f64, shape: &HonestShape) -> Result<(), TestCaseError> {
    match plan::parse(text, scale, examples_dir()) {
        Ok(p) => {
            for run in &p.runs {
                check_accepted(&run.config, shape)?;
            }
        }
        Err(e) => check_config_error(&e, text)?,
    }
    Ok(())
}

/// Scales a `local --scale` may be given.
const SCALES: &[f64] = &[
    1.0,
    0.5,
    0.01,
    2.0,
    3.7,
    1e-12,
    1e12,
    0.0,
    -1.0,
    f64::NAN,
    f64::INFINITY,
];

/// Game counts a plan's runs are set to: the limits, odd numbers, and numbers that only
/// overflow once scaled.
const GAMES: &[i64] = &[
    0,
    1,
    2,
    3,
    -2,
    2_000_000_000,
    2_000_000_002,
    1 << 31,
    1 << 53,
    (1 << 61) + 2,
    1 << 62,
    i64::MAX - 1,
    i64::MAX,
    i64::MIN,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_plans_never_panic(
        plan_index in any::<Index>(),
        edits in prop::collection::vec(text_edit(), 0..3),
        games in prop::option::weighted(0.3, prop::sample::select(GAMES)),
        scale in prop::sample::select(SCALES),
        shape in honest_shape(),
    ) {
        let (_, text) = &plans()[plan_index.index(plans().len())];
        let mut text = text.clone();
        if let Some(g) = games {
            text = text
                .lines()
                .map(|l| if l.trim_start().starts_with("games") { format!("games = {g}") } else { l.to_string() })
                .collect::<Vec<_>>()
                .join("\n");
        }
        for e in &edits {
            text = edit_text(&text, e);
        }
        check_plan_text(&text, scale, &shape)?;
    }
}

/// The examples themselves are accepted plans whose every run passes the checks.
#[test]
fn example_plans_are_accepted() {
    let shape = honest_shape()
        .new_tree(&mut TestRunner::deterministic())
        .expect("tree")
        .current();
    for (path, text) in plans() {
        let p = plan::parse(text, 1.0, examples_dir()).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(!p.runs.is_empty(), "{path}");
        check_plan_text(text, 1.0, &shape).unwrap_or_else(|e| panic!("{path}: {e}"));
        check_plan_text(text, 0.01, &shape).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    assert!(seeds().len() > plans().len());
}

/// The config generators reach accepted configs as well as refusals, so the round trip and
/// the honest reports are checked on configs other than the seeds.
#[test]
fn config_mutations_reach_both_outcomes() {
    let mut runner = TestRunner::deterministic();
    let shape = honest_shape()
        .new_tree(&mut runner)
        .expect("tree")
        .current();
    let (mut text_ok, mut text_err, mut value_ok, mut value_err) = (0, 0, 0, 0);
    let texts = text_edit();
    let values = value_edit();
    for k in 0..600 {
        let seed = &seeds()[k % seeds().len()];
        let e = texts.new_tree(&mut runner).expect("tree").current();
        match check_config_text(&edit_text(seed, &e), &shape).expect("checks hold") {
            true => text_ok += 1,
            false => text_err += 1,
        }
        let mut doc = toml::Value::Table(seed.parse::<toml::Table>().expect("TOML"));
        edit_value(
            &mut doc,
            &values.new_tree(&mut runner).expect("tree").current(),
        );
        if let Ok(t) = toml::to_string(&doc) {
            match check_config_text(&t, &shape).expect("checks hold") {
                true => value_ok += 1,
                false => value_err += 1,
            }
        }
    }
    // Seen: 103, 497, 79 and 521.
    assert!(text_ok > 40 && text_err > 200, "{text_ok} {text_err}");
    assert!(value_ok > 30 && value_err > 200, "{value_ok} {value_err}");
}

/// Found by this fuzzing: `plan::parse` with a scale other than 1 and a run with a huge
/// `games` (here `i64::MAX`, scale 2) overflowed (`(...).max(1) * 2`); the scaled budget now
/// saturates and the config check refuses it, naming the field.
#[test]
fn plan_scale_overflow_is_an_error_not_a_panic() {
    let text = "[[runs]]\nname = \"a\"\nkind = \"match\"\ngames = 9223372036854775807\n\
                [runs.limits]\nnodes = 5\n[[runs.variants]]\nvariant = \"chess\"\n[runs.first]\n";
    let e = plan::parse(text, 2.0, examples_dir()).expect_err("no run has that many games");
    assert!(e.field.contains("games"), "{e}");
}
