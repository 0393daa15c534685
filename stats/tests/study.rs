//! Running study totals against the figures computed from the records (proptest).

use proptest::prelude::*;
use stats::study::{
    ruleset_figures, study, CastlingEvent, GameRecord, Milestone, MilestoneKind, Outcome,
    RulesetTally, Side, Study, StudyError, StudyTally,
};

const RULESETS: [&str; 4] = ["std", "luft", "two_rooks", "latte"];
const KINDS: [&str; 4] = ["O-O", "O-O-O", "long", "short"];
const REASONS: [&str; 5] = [
    "checkmate",
    "stalemate",
    "repetition",
    "adjudication",
    "fifty_moves",
];

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::WhiteWin),
        Just(Outcome::Draw),
        Just(Outcome::BlackWin)
    ]
}

/// At most one castling per side and kind... and now and then a second one of the same kind
/// (extended castling rules allow it), which counts as a move but not as another game.
fn castlings() -> impl Strategy<Value = Vec<CastlingEvent>> {
    let side = prop_oneof![Just(Side::White), Just(Side::Black)];
    prop::collection::vec((side, 0..KINDS.len(), 1u32..60), 0..4).prop_map(|events| {
        events
            .into_iter()
            .map(|(side, kind, move_number)| CastlingEvent {
                side,
                kind: KINDS[kind].to_string(),
                move_number,
            })
            .collect()
    })
}

/// Milestones in any order, at most one per side and kind; now and then two ways of losing the
/// rights for one side (which the figures must count once); move numbers in a narrow range, so
/// that ties are common. [`consistent`] then drops what contradicts the castlings.
fn milestones() -> impl Strategy<Value = Vec<Milestone>> {
    let side = prop_oneof![Just(Side::White), Just(Side::Black)];
    let kind = (0..MilestoneKind::ALL.len()).prop_map(|i| MilestoneKind::ALL[i]);
    prop::collection::vec((side, kind, 1u32..30), 0..5).prop_map(|events| {
        let mut seen = Vec::new();
        events
            .into_iter()
            .filter(|&(side, kind, _)| {
                let first = !seen.contains(&(side, kind));
                seen.push((side, kind));
                first
            })
            .map(|(side, kind, move_number)| Milestone {
                side,
                kind,
                move_number,
            })
            .collect()
    })
}

/// The milestones a worker could record next to these castlings: a side that castled did
/// not lose its rights without castling.
fn consistent(milestones: Vec<Milestone>, castlings: &[CastlingEvent]) -> Vec<Milestone> {
    milestones
        .into_iter()
        .filter(|m| !m.kind.is_rights_lost() || castlings.iter().all(|c| c.side != m.side))
        .collect()
}

fn record() -> impl Strategy<Value = GameRecord> {
    (
        // Skewed, so that some rule-sets have few games (or one) and others many.
        prop_oneof![4 => Just(0usize), 2 => Just(1), 1 => Just(2), 1 => Just(3)],
        outcome(),
        // Wide lengths, and a narrow band where ties (and equal quartile neighbours) are common.
        prop_oneof![1u32..600, 38u32..42],
        0..REASONS.len(),
        castlings(),
        milestones(),
    )
        .prop_map(
            |(ruleset, result, plies, reason, castlings, milestones)| GameRecord {
                ruleset: RULESETS[ruleset].to_string(),
                result,
                plies,
                termination: REASONS[reason].to_string(),
                milestones: consistent(milestones, &castlings),
                castlings,
            },
        )
}

fn records() -> impl Strategy<Value = Vec<GameRecord>> {
    prop::collection::vec(record(), 0..400)
}

fn baseline() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        Just(None),
        (0..RULESETS.len()).prop_map(|i| Some(RULESETS[i])),
        Just(Some("absent")),
    ]
}

/// Equal values and equal JSON: the JSON (shortest round-trip floats) also tells 0.0 from
/// -0.0, so equal text means equal bits.
fn same<T: PartialEq + std::fmt::Debug + serde::Serialize>(
    a: &T,
    b: &T,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(a, b);
    prop_assert_eq!(
        serde_json::to_string(a).unwrap(),
        serde_json::to_string(b).unwrap()
    );
    Ok(())
}

/// [`same`] for studies; errors just equal.
fn same_study(
    a: &Result<Study, StudyError>,
    b: &Result<Study, StudyError>,
) -> Result<(), TestCaseError> {
    match (a, b) {
        (Ok(a), Ok(b)) => same(a, b),
        _ => {
            prop_assert_eq!(a, b);
            Ok(())
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tally_figures_equal_record_figures_bit_for_bit(
        records in records(),
        baseline in baseline(),
        cut in any::<prop::sample::Index>(),
    ) {
        let whole: StudyTally = records.iter().collect();
        same_study(&whole.study(baseline), &study(&records, baseline))?;
        same(&whole.ruleset_figures(), &ruleset_figures(&records))?;
        prop_assert_eq!(whole.games(), records.len() as u64);

        // Two partial tallies merged, either way round, are the whole tally.
        let cut = cut.index(records.len() + 1);
        let (a, b): (StudyTally, StudyTally) =
            (records[..cut].iter().collect(), records[cut..].iter().collect());
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b;
        ba.merge(&a);
        prop_assert_eq!(&ab, &whole);
        prop_assert_eq!(&ba, &whole);
        same_study(&ab.study(baseline), &study(&records, baseline))?;

        // Per rule-set tallies give the same figures as the study's.
        for f in ruleset_figures(&records) {
            let mut t = RulesetTally::new();
            for r in records.iter().filter(|r| r.ruleset == f.ruleset) {
                t.add(r);
            }
            same(&t.figures(&f.ruleset), &Some(f))?;
        }
    }

    #[test]
    fn a_tally_survives_a_json_round_trip(records in records(), baseline in baseline()) {
        let tally: StudyTally = records.iter().collect();
        let json = serde_json::to_string(&tally).unwrap();
        let back: StudyTally = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&back, &tally);
        prop_assert_eq!(serde_json::to_string(&back).unwrap(), json);
        same_study(&back.study(baseline), &tally.study(baseline))?;
    }

    #[test]
    fn figures_do_not_depend_on_the_order_of_the_games(
        shuffled in records().prop_flat_map(|r| (Just(r.clone()), Just(r).prop_shuffle())),
        baseline in baseline(),
    ) {
        let (records, shuffled) = shuffled;
        same_study(&study(&shuffled, baseline), &study(&records, baseline))?;
    }
}

#[test]
fn a_tally_grows_with_distinct_values_not_with_games() {
    let game = |i: u32| GameRecord {
        ruleset: RULESETS[(i % 2) as usize].to_string(),
        result: [Outcome::WhiteWin, Outcome::Draw, Outcome::BlackWin][(i % 3) as usize],
        plies: 60 + i % 7,
        termination: REASONS[(i % 3) as usize].to_string(),
        castlings: vec![CastlingEvent {
            side: Side::White,
            kind: "O-O".into(),
            move_number: 8 + i % 5,
        }],
        milestones: Vec::new(),
    };
    let mut tally = StudyTally::new();
    let mut size_at = Vec::new();
    for i in 0..20_000 {
        tally.add(&game(i));
        if i == 999 || i == 19_999 {
            size_at.push(serde_json::to_string(&tally).unwrap().len());
        }
    }
    assert_eq!(tally.games(), 20_000);
    // Only the counts' digits grow.
    assert!(size_at[1] < size_at[0] + 200, "{size_at:?}");
}

/// The games `data/study_tally_before_sides.json` was made from, by the tally as it was before
/// side figures: a [`StudyTally`] serialised then, with `milestones` in no record.
fn games_before_sides() -> Vec<GameRecord> {
    let game =
        |ruleset: &str, result, plies, termination: &str, castlings: &[(Side, &str, u32)]| {
            GameRecord {
                ruleset: ruleset.into(),
                result,
                plies,
                termination: termination.into(),
                castlings: castlings
                    .iter()
                    .map(|&(side, kind, move_number)| CastlingEvent {
                        side,
                        kind: kind.into(),
                        move_number,
                    })
                    .collect(),
                milestones: Vec::new(),
            }
        };
    use Outcome::*;
    use Side::*;
    vec![
        game(
            "std",
            WhiteWin,
            81,
            "checkmate",
            &[(White, "O-O", 7), (Black, "O-O-O", 11)],
        ),
        game("std", Draw, 120, "repetition", &[(White, "O-O", 9)]),
        game("std", BlackWin, 64, "checkmate", &[]),
        game("latte", Draw, 97, "adjudication", &[(Black, "long", 14)]),
        game("latte", WhiteWin, 55, "checkmate", &[(White, "short", 6)]),
    ]
}

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The coordinator keeps its tallies as JSON: one stored before the side figures must load,
/// give the figures it gave, and count new games, side figures included, from then on.
#[test]
fn a_tally_stored_before_side_figures_loads_and_keeps_counting() {
    let old = games_before_sides();
    let mut tally: StudyTally =
        serde_json::from_str(&data("study_tally_before_sides.json")).unwrap();
    assert_eq!(tally.games(), old.len() as u64);
    let mut expected = ruleset_figures(&old);
    for f in &mut expected {
        f.sides.clear();
    }
    assert_eq!(tally.ruleset_figures(), expected);
    let reloaded: StudyTally =
        serde_json::from_str(&serde_json::to_string(&tally).unwrap()).unwrap();
    assert_eq!(reloaded, tally);

    // New games, with milestones: the rule-set's figures cover old and new games alike, the
    // side figures the new ones only.
    let mut new = games_before_sides();
    new.truncate(2);
    new[1].milestones = vec![Milestone {
        side: Side::Black,
        kind: MilestoneKind::RightsLostRookMoved,
        move_number: 12,
    }];
    tally.extend(&new);
    let all: Vec<GameRecord> = old.iter().chain(&new).cloned().collect();
    let std = tally.ruleset("std").unwrap().figures("std").unwrap();
    let mut expected = ruleset_figures(&all).pop().unwrap();
    expected.sides = ruleset_figures(&new).pop().unwrap().sides;
    assert_eq!(std, expected);
    assert_eq!((std.games, std.sides[0].games), (5, 2));
    assert_eq!(std.sides[1].rights_lost.count, 1);
    // Latte counted no new game: still no side figures, and so no side comparison.
    let s = tally.study(Some("std")).unwrap();
    assert!(s.rulesets[0].sides.is_empty());
    assert!(s.comparisons[0].sides.is_empty());
}

/// Figures and comparisons stored before the side figures (a run's saved study) still load.
#[test]
fn a_study_stored_before_side_figures_loads() {
    let old: Study = serde_json::from_str(&data("study_before_sides.json")).unwrap();
    let tally: StudyTally = games_before_sides().iter().collect();
    let mut now = tally.study(Some("std")).unwrap();
    for f in &mut now.rulesets {
        f.sides.clear();
    }
    for c in &mut now.comparisons {
        c.sides.clear();
        // The standard error came later too: saved figures load with 0.
        c.white_score.se = 0.0;
        c.draw_rate.se = 0.0;
    }
    assert_eq!(old, now);
}
