//! Checks of a reported pair against what was assigned, before anything is counted.
//!
//! A worker is not trusted: every fact that reaches the statistics (rule-set, castling kinds,
//! milestones, game length, how the game ended) must be one the assigned pair could have
//! produced, and
//! every size is capped (`proto::limits`). A report that fails any check is refused whole.

use crate::config::RunConfig;
use crate::error::CoreError;
use crate::model::{GameFacts, PairReport};
use engine::{CastleStyle, Rules};
use proto::limits;
use stats::study::{Outcome, Side};
use stats::PairScore;
use std::collections::BTreeSet;
use worker::record::Termination;

/// The castling kind ids a rule-set allows (see `engine::Castle::id`).
pub fn castling_kinds(rules: Rules) -> Vec<&'static str> {
    let r = rules.ruleset();
    let mut styles = vec![CastleStyle::Normal];
    if r.luft() {
        styles.push(CastleStyle::Luft);
    }
    if r.two_rooks() {
        styles.push(CastleStyle::TwoRooks);
    }
    if r.extended() {
        styles.push(CastleStyle::Extended);
    }
    styles
        .into_iter()
        .flat_map(|style| {
            [engine::CastleSide::King, engine::CastleSide::Queen]
                .map(|side| engine::Castle { side, style }.id())
        })
        .collect()
}

/// The rules a variant id and rule-set id name (empty rule-set: the variant's default).
pub fn rules_of(variant: &str, ruleset: &str) -> Option<Rules> {
    Rules::parse(variant, (!ruleset.is_empty()).then_some(ruleset)).ok()
}

/// Check one reported pair against the run's assignment of its index; returns `first`'s
/// score over the pair.
pub fn check_pair(config: &RunConfig, p: &PairReport) -> Result<PairScore, CoreError> {
    let bad = |m: String| CoreError::BadReport(format!("pair {}: {m}", p.index));
    if p.index >= config.pairs() {
        return Err(bad(format!(
            "index is outside the run's {} pairs",
            config.pairs()
        )));
    }
    if p.games.len() != 2 {
        return Err(bad(format!("expected 2 games, got {}", p.games.len())));
    }
    if p.games[0].first_is_white == p.games[1].first_is_white {
        return Err(bad("first must play White in exactly one game".into()));
    }
    if p.pgn_gz.len() > limits::PGN_GZ_BYTES {
        return Err(bad(format!(
            "PGN of {} bytes is over the limit of {} compressed bytes",
            p.pgn_gz.len(),
            limits::PGN_GZ_BYTES
        )));
    }
    if !p.pgn_gz.is_empty() && !p.pgn_gz.starts_with(&[0x1f, 0x8b]) {
        return Err(bad("PGN is not gzip data".into()));
    }
    let entry = config.entry_for_pair(p.index);
    let assigned = rules_of(&entry.variant, &entry.ruleset).ok_or_else(|| {
        CoreError::Internal(format!(
            "run config has unplayable rules {} {}",
            entry.variant, entry.ruleset
        ))
    })?;
    for (k, g) in p.games.iter().enumerate() {
        check_game(config, assigned, g).map_err(|m| bad(format!("game {}: {m}", k + 1)))?;
    }
    let half: u8 = p
        .games
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
        .sum();
    PairScore::from_half_points(half).ok_or_else(|| bad("impossible score".into()))
}

fn check_game(config: &RunConfig, assigned: Rules, g: &GameFacts) -> Result<(), String> {
    for (what, value, cap) in [
        ("variant", &g.variant, limits::RULES_ID_BYTES),
        ("rule-set", &g.ruleset, limits::RULES_ID_BYTES),
        ("termination", &g.termination, limits::TERMINATION_BYTES),
    ] {
        if value.len() > cap {
            return Err(format!("{what} is longer than {cap} bytes"));
        }
    }
    let played = rules_of(&g.variant, &g.ruleset).ok_or_else(|| {
        format!(
            "variant {:?} with rule-set {:?} is not a known game",
            g.variant, g.ruleset
        )
    })?;
    if played != assigned {
        return Err(format!(
            "played {} {} but the pair was assigned {} {}",
            g.variant,
            g.ruleset,
            assigned.variant(),
            assigned.ruleset()
        ));
    }
    if Termination::from_id(&g.termination).is_none() {
        return Err(format!("unknown termination {:?}", g.termination));
    }
    let max_plies = if config.limits.max_plies > 0 {
        // Adjudication at `max_plies` rounds up to whole moves.
        (config.limits.max_plies + 1).min(limits::PLIES)
    } else {
        limits::PLIES
    };
    if g.plies > max_plies {
        return Err(format!(
            "{} plies is more than the {max_plies} this run allows",
            g.plies
        ));
    }
    if g.castlings.len() > limits::CASTLINGS_PER_GAME {
        return Err(format!(
            "{} castling moves (at most {})",
            g.castlings.len(),
            limits::CASTLINGS_PER_GAME
        ));
    }
    let kinds = castling_kinds(assigned);
    let mut castled = [false; 2];
    for c in &g.castlings {
        if !kinds.contains(&c.kind.as_str()) {
            return Err(format!(
                "castling kind {:?} does not exist under {} (expected one of: {})",
                truncate(&c.kind, limits::CASTLING_KIND_BYTES),
                assigned.ruleset(),
                kinds.join(", ")
            ));
        }
        let side = usize::from(c.side == Side::Black);
        if std::mem::replace(&mut castled[side], true) {
            return Err("a side castled twice".into());
        }
        if !move_number_possible(c.move_number, g.plies) {
            return Err(format!("castling on move {} is impossible", c.move_number));
        }
    }
    check_milestones(g)
}

/// Whether a game of `plies` plies can have a move numbered `n`. The full-move number of a
/// ply p (1-based) is (p + 1) / 2 rounded up, from the opening; openings may start late, so
/// only the lower bound and a generous upper bound hold.
fn move_number_possible(n: u32, plies: u32) -> bool {
    n >= 1 && n <= plies / 2 + 1 + 10_000
}

/// Milestones must be ones a game could have: capped in number, each kind at most once per
/// side, at most one way of losing the castling rights per side (they are lost once), none
/// for a side that castled (it spent its rights), on a possible move. The kinds are known
/// ones already: the proto conversion refuses any other id.
fn check_milestones(g: &GameFacts) -> Result<(), String> {
    if g.milestones.len() > limits::MILESTONES_PER_GAME {
        return Err(format!(
            "{} milestones (at most {})",
            g.milestones.len(),
            limits::MILESTONES_PER_GAME
        ));
    }
    let mut seen = BTreeSet::new();
    let mut lost = [false; 2];
    for m in &g.milestones {
        let (side, kind) = (side_name(m.side), m.kind.id());
        if !seen.insert((m.side, m.kind)) {
            return Err(format!("{side} has milestone {kind} twice"));
        }
        if m.kind.is_rights_lost() {
            if g.castlings.iter().any(|c| c.side == m.side) {
                return Err(format!(
                    "{side} castled, so it cannot have lost its rights ({kind})"
                ));
            }
            if std::mem::replace(&mut lost[usize::from(m.side == Side::Black)], true) {
                return Err(format!("{side} lost its castling rights twice"));
            }
        }
        if !move_number_possible(m.move_number, g.plies) {
            return Err(format!(
                "milestone {kind} on move {} is impossible",
                m.move_number
            ));
        }
    }
    Ok(())
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::White => "white",
        Side::Black => "black",
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary: what
/// an error message may repeat of a hostile string.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::study::{CastlingEvent, Milestone, MilestoneKind};
    use MilestoneKind::{KingCorner, RightsLostKingMoved, RightsLostRookCaptured};

    fn config() -> RunConfig {
        RunConfig::parse(
            r#"
name = "t"
kind = "study"
games = 8
[limits]
nodes = 10
max_plies = 300
[[variants]]
variant = "latte"
ruleset = "normal"
[[variants]]
variant = "latte"
ruleset = "luft"
[first]
engine = "builtin"
"#,
        )
        .expect("valid")
    }

    fn game(first_is_white: bool, ruleset: &str, castle: &str) -> GameFacts {
        GameFacts {
            outcome: Outcome::Draw,
            first_is_white,
            termination: "threefold".into(),
            plies: 80,
            castlings: vec![CastlingEvent {
                side: Side::White,
                kind: castle.into(),
                move_number: 9,
            }],
            ruleset: ruleset.into(),
            variant: "latte".into(),
            milestones: Vec::new(),
        }
    }

    fn pair(index: u64, ruleset: &str, castle: &str) -> PairReport {
        PairReport {
            index,
            games: vec![game(true, ruleset, castle), game(false, ruleset, castle)],
            pgn_gz: Vec::new(),
        }
    }

    #[test]
    fn honest_pairs_pass() {
        let c = config();
        assert!(check_pair(&c, &pair(0, "normal", "king")).is_ok());
        assert!(check_pair(&c, &pair(1, "luft", "luft-queen")).is_ok());
    }

    #[test]
    fn forged_facts_are_refused_with_the_reason() {
        let c = config();
        let e = check_pair(&c, &pair(0, "bogus-ruleset", "king")).unwrap_err();
        assert!(e.to_string().contains("not a known game"), "{e}");
        // Pair 0 is `normal`: a Luft game is not what was assigned.
        let e = check_pair(&c, &pair(0, "luft", "king")).unwrap_err();
        assert!(e.to_string().contains("assigned"), "{e}");
        let e = check_pair(&c, &pair(0, "normal", "O-O-EVIL")).unwrap_err();
        assert!(e.to_string().contains("castling kind"), "{e}");
        // Luft castling under the normal rule-set.
        assert!(check_pair(&c, &pair(0, "normal", "luft-king")).is_err());
        let mut p = pair(0, "normal", "king");
        p.games[0].plies = 1_000_000_000;
        assert!(check_pair(&c, &p)
            .unwrap_err()
            .to_string()
            .contains("plies"));
        let mut p = pair(0, "normal", "king");
        p.games[1].termination = "x".repeat(10_000);
        assert!(check_pair(&c, &p).is_err());
        let mut p = pair(0, "normal", "king");
        p.games[1].termination = "won by charm".into();
        assert!(check_pair(&c, &p)
            .unwrap_err()
            .to_string()
            .contains("termination"));
        let mut p = pair(0, "normal", "king");
        let again = p.games[0].castlings[0].clone();
        p.games[0].castlings.push(again);
        assert!(check_pair(&c, &p)
            .unwrap_err()
            .to_string()
            .contains("twice"));
        let e = check_pair(&c, &pair(4, "normal", "king")).unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
        let mut p = pair(0, "normal", "king");
        p.pgn_gz = vec![0u8; limits::PGN_GZ_BYTES + 1];
        assert!(check_pair(&c, &p).unwrap_err().to_string().contains("PGN"));
        let mut p = pair(0, "normal", "king");
        p.games[0].variant = "chess".into();
        assert!(check_pair(&c, &p).is_err());
    }

    /// A pair of 80-ply games in which White castled on move 9, the second game with these
    /// milestones.
    fn with_milestones(milestones: &[(Side, MilestoneKind, u32)]) -> PairReport {
        let mut p = pair(0, "normal", "king");
        p.games[1].milestones = milestones
            .iter()
            .map(|&(side, kind, move_number)| Milestone {
                side,
                kind,
                move_number,
            })
            .collect();
        p
    }

    fn refusal(milestones: &[(Side, MilestoneKind, u32)]) -> String {
        check_pair(&config(), &with_milestones(milestones))
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn honest_milestones_pass() {
        let c = config();
        // White castled and its king walked to a corner later (a side that castled may
        // reach one); Black lost its rights by moving its king, then reached a corner too.
        // The latest possible move number passes, and old reports have no milestones.
        for honest in [
            &[
                (Side::Black, RightsLostKingMoved, 14),
                (Side::White, KingCorner, 30),
                (Side::Black, KingCorner, 31),
            ][..],
            &[(Side::Black, RightsLostRookCaptured, 80 / 2 + 1 + 10_000)],
            &[],
        ] {
            assert!(
                check_pair(&c, &with_milestones(honest)).is_ok(),
                "{honest:?}"
            );
        }
    }

    #[test]
    fn more_milestones_than_the_cap_are_refused() {
        let many = [(Side::Black, KingCorner, 20); limits::MILESTONES_PER_GAME + 1];
        let e = refusal(&many);
        assert!(e.contains("milestones (at most 8)"), "{e}");
    }

    #[test]
    fn a_milestone_reported_twice_is_refused() {
        let e = refusal(&[(Side::White, KingCorner, 20), (Side::White, KingCorner, 25)]);
        assert!(e.contains("white has milestone king-corner twice"), "{e}");
    }

    #[test]
    fn rights_lost_twice_by_one_side_is_refused() {
        let e = refusal(&[
            (Side::Black, RightsLostKingMoved, 10),
            (Side::Black, RightsLostRookCaptured, 12),
        ]);
        assert!(e.contains("black lost its castling rights twice"), "{e}");
    }

    #[test]
    fn rights_lost_by_a_side_that_castled_is_refused() {
        // White castled on move 9 in every game of `pair`.
        let e = refusal(&[(Side::White, MilestoneKind::RightsLostRookMoved, 5)]);
        assert!(e.contains("white castled"), "{e}");
        assert!(e.contains("game 2"), "{e}");
    }

    #[test]
    fn milestones_on_impossible_moves_are_refused() {
        for n in [0, 80 / 2 + 1 + 10_000 + 1, u32::MAX] {
            let e = refusal(&[(Side::Black, KingCorner, n)]);
            assert!(
                e.contains(&format!("king-corner on move {n} is impossible")),
                "{e}"
            );
        }
    }

    #[test]
    fn castling_kinds_follow_the_ruleset() {
        let both = Rules::parse("latte", Some("both")).unwrap();
        assert_eq!(castling_kinds(both).len(), 6);
        let ext = Rules::parse("secutor", Some("extended")).unwrap();
        assert!(castling_kinds(ext).contains(&"extended-queen"));
        let orth = Rules::parse("secutor", Some("orthodox")).unwrap();
        assert!(!castling_kinds(orth).contains(&"extended-queen"));
    }
}
