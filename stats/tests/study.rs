//! Running study totals against the figures computed from the records (proptest).

use proptest::prelude::*;
use stats::study::{
    ruleset_figures, study, CastlingEvent, GameRecord, Outcome, RulesetTally, Side, Study,
    StudyError, StudyTally,
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

fn record() -> impl Strategy<Value = GameRecord> {
    (
        // Skewed, so that some rule-sets have few games (or one) and others many.
        prop_oneof![4 => Just(0usize), 2 => Just(1), 1 => Just(2), 1 => Just(3)],
        outcome(),
        // Wide lengths, and a narrow band where ties (and equal quartile neighbours) are common.
        prop_oneof![1u32..600, 38u32..42],
        0..REASONS.len(),
        castlings(),
    )
        .prop_map(|(ruleset, result, plies, reason, castlings)| GameRecord {
            ruleset: RULESETS[ruleset].to_string(),
            result,
            plies,
            termination: REASONS[reason].to_string(),
            castlings,
        })
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
