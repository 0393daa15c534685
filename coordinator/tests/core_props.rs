//! Property test of the core: valid, repeated, malformed and hostile reports, releases,
//! expiries and restarts interleaved at random, one commit per operation or in group commits
//! as the core thread runs them (with a report that fails in the database spoiling its
//! group). Whatever happens, the run's stored totals equal the sum of what was acknowledged,
//! and no pair is counted twice.

use coordinator::core::{Core, GameFacts, PairReport, PairWork, Timing};
use coordinator::store::{self, Principal, Role};
use proptest::prelude::*;
use stats::study::{CastlingEvent, Outcome, Side};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const TIMEOUT_MS: u64 = 1_000;

#[derive(Debug, Clone)]
enum Op {
    Lease {
        worker: usize,
        max: u32,
    },
    Report {
        lease: usize,
    },
    Repeat {
        lease: usize,
    },
    Forged {
        lease: usize,
        kind: u8,
    },
    Steal {
        lease: usize,
    },
    Release {
        lease: usize,
    },
    Expire,
    Restart,
    /// End the group commit and start another (grouped runs only).
    Commit,
}

/// The pair whose stored row the database refuses (a trigger), in grouped runs: its report
/// fails after the core changed memory.
const POISONED_PAIR: u64 = 5;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..2, 1u32..4).prop_map(|(worker, max)| Op::Lease { worker, max }),
        6 => (0usize..8).prop_map(|lease| Op::Report { lease }),
        2 => (0usize..8).prop_map(|lease| Op::Repeat { lease }),
        2 => (0usize..8, 0u8..4).prop_map(|(lease, kind)| Op::Forged { lease, kind }),
        1 => (0usize..8).prop_map(|lease| Op::Steal { lease }),
        1 => (0usize..8).prop_map(|lease| Op::Release { lease }),
        1 => Just(Op::Expire),
        1 => Just(Op::Restart),
        2 => Just(Op::Commit),
    ]
}

/// A lease as the (simulated) worker holding it sees it.
#[derive(Debug, Clone)]
struct Held {
    id: u64,
    worker: usize,
    pairs: Vec<PairWork>,
    done: Vec<PairReport>,
    seq: u64,
    /// The last report the coordinator acknowledged (for repeats).
    acked: Option<(u64, Vec<PairReport>)>,
}

fn outcome(index: u64, game: u64) -> Outcome {
    match (index.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (20 + game)) % 3 {
        0 => Outcome::WhiteWin,
        1 => Outcome::Draw,
        _ => Outcome::BlackWin,
    }
}

fn report(work: &PairWork) -> PairReport {
    let game = |first_is_white: bool, k: u64| GameFacts {
        outcome: outcome(work.index, k),
        first_is_white,
        termination: "checkmate".into(),
        plies: 60,
        castlings: vec![CastlingEvent {
            side: Side::White,
            kind: "king".into(),
            move_number: 7,
        }],
        ruleset: work.ruleset.clone(),
        variant: work.variant.clone(),
        milestones: Vec::new(),
    };
    PairReport {
        index: work.index,
        games: vec![game(true, 0), game(false, 1)],
        pgn_gz: Vec::new(),
    }
}

fn half_points(p: &PairReport) -> usize {
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

const RUN: &str = r#"
name = "props"
kind = "match"
games = 48
[limits]
nodes = 10
max_plies = 200
[[variants]]
variant = "latte"
ruleset = "normal"
[[variants]]
variant = "latte"
ruleset = "both"
[first]
engine = "builtin"
"#;

fn open(db: &Path, now: u64) -> Core {
    Core::open(
        db,
        Timing {
            lease_timeout_ms: TIMEOUT_MS,
            heartbeat_interval_ms: 300,
            idle_retry_ms: 10,
        },
        now,
    )
    .expect("core opens")
}

fn run_ops(ops: &[Op], grouped: bool) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("core.db");
    let tokens: Vec<String> = {
        let conn = store::open(&db).expect("db");
        if grouped {
            conn.execute_batch(&format!(
                "CREATE TRIGGER poison BEFORE INSERT ON pair_results
                 WHEN NEW.pair_index = {POISONED_PAIR}
                 BEGIN SELECT RAISE(ABORT, 'injected failure'); END;"
            ))
            .expect("trigger");
        }
        (0..2)
            .map(|k| store::add_token(&conn, &format!("w{k}"), Role::Worker, 0).expect("token"))
            .collect()
    };
    let mut now = 1_000u64;
    let mut core = open(&db, now);
    let who: Vec<Principal> = tokens
        .iter()
        .map(|t| core.authenticate(t).expect("lookup").expect("known"))
        .collect();
    let run = core.create_run(RUN, now).expect("run").id;
    let ids: Vec<u64> = who
        .iter()
        .map(|p| core.register(p, Default::default(), now).expect("register"))
        .collect();
    let mut held: Vec<Held> = Vec::new();
    // What the coordinator acknowledged: pair index -> half points of `first`. In a group,
    // what it will acknowledge if the group commits.
    let mut acked: BTreeMap<u64, usize> = BTreeMap::new();
    // At the start of the open group: what to go back to if it fails.
    let mut at_group_start = (acked.clone(), held.clone());
    let mut group_failures = 0;
    if grouped {
        core.begin_batch().expect("begin");
    }
    for op in ops {
        now += 10;
        match op {
            Op::Lease { worker, max } => {
                if let Some(g) = core
                    .lease(&who[*worker], ids[*worker], 1, *max, now)
                    .expect("lease never errs for a registered worker")
                {
                    for p in &g.pairs {
                        prop_assert!(
                            !acked.contains_key(&p.index),
                            "pair {} leased after it was counted",
                            p.index
                        );
                    }
                    held.push(Held {
                        id: g.lease.id,
                        worker: *worker,
                        pairs: g.pairs,
                        done: Vec::new(),
                        seq: 0,
                        acked: None,
                    });
                }
            }
            Op::Report { lease } => {
                let Some(h) = held.get_mut(*lease) else {
                    continue;
                };
                let Some(next) = h.pairs.get(h.done.len()) else {
                    continue;
                };
                // Incremental: only the new pair.
                let pairs = vec![report(next)];
                let seq = h.seq + 1;
                // An error means expired, released or revoked under it: nothing counted.
                if let Ok(out) =
                    core.submit(&who[h.worker], ids[h.worker], h.id, seq, pairs.clone(), now)
                {
                    {
                        prop_assert!(!out.duplicate);
                        h.seq = seq;
                        h.done.extend(pairs.iter().cloned());
                        h.acked = Some((seq, pairs.clone()));
                        let new: Vec<&PairReport> = pairs
                            .iter()
                            .filter(|p| !acked.contains_key(&p.index))
                            .collect();
                        prop_assert_eq!(out.accepted as usize, new.len());
                        for p in new {
                            acked.insert(p.index, half_points(p));
                        }
                    }
                }
            }
            Op::Repeat { lease } => {
                let Some(h) = held.get(*lease) else { continue };
                let Some((seq, pairs)) = h.acked.clone() else {
                    continue;
                };
                let out = core
                    .submit(&who[h.worker], ids[h.worker], h.id, seq, pairs, now)
                    .expect("a committed report, resent, is acknowledged");
                prop_assert!(out.duplicate);
                prop_assert_eq!(out.accepted, 0);
            }
            Op::Forged { lease, kind } => {
                let Some(h) = held.get(*lease) else { continue };
                let Some(next) = h.pairs.get(h.done.len()) else {
                    continue;
                };
                let mut bad = report(next);
                match kind {
                    0 => bad.games[0].ruleset = "bogus".into(),
                    1 => bad.games[1].plies = 1_000_000_000,
                    2 => bad.games.truncate(1),
                    _ => bad.games[0].castlings[0].kind = "O-O-EVIL".into(),
                }
                prop_assert!(core
                    .submit(
                        &who[h.worker],
                        ids[h.worker],
                        h.id,
                        h.seq + 1,
                        vec![bad],
                        now
                    )
                    .is_err());
            }
            Op::Steal { lease } => {
                let Some(h) = held.get(*lease) else { continue };
                let Some(next) = h.pairs.get(h.done.len()) else {
                    continue;
                };
                let thief = 1 - h.worker;
                let pairs = vec![report(next)];
                prop_assert!(core
                    .submit(&who[thief], ids[thief], h.id, h.seq + 1, pairs.clone(), now)
                    .is_err());
                prop_assert!(core
                    .submit(&who[thief], ids[h.worker], h.id, h.seq + 1, pairs, now)
                    .is_err());
            }
            Op::Release { lease } => {
                if *lease < held.len() {
                    let h = held.remove(*lease);
                    let _ = core.release(&who[h.worker], ids[h.worker], h.id, "", now);
                }
            }
            Op::Expire => {
                now += 2 * TIMEOUT_MS;
                core.expire(now).expect("expire");
            }
            Op::Restart => {
                // A crash: a group not committed was never acknowledged.
                drop(core);
                if grouped {
                    (acked, held) = at_group_start.clone();
                }
                core = open(&db, now);
                group_failures = 0;
                if grouped {
                    core.begin_batch().expect("begin");
                }
            }
            Op::Commit => {
                if !grouped {
                    continue;
                }
                if core.end_batch().is_err() {
                    // Refused as a whole: nothing of the group was acknowledged.
                    (acked, held) = at_group_start.clone();
                }
                at_group_start = (acked.clone(), held.clone());
                group_failures = 0;
                core.begin_batch().expect("begin");
            }
        }
        if grouped && core.group_failures() > group_failures {
            // The failure rolled the group back and reloaded memory; the rest of the group
            // runs on, to be refused at its end.
            group_failures = core.group_failures();
            (acked, held) = at_group_start.clone();
        }
        // After every step the stored totals are exactly what was acknowledged.
        let d = core.detail(run).expect("detail");
        prop_assert_eq!(d.summary.pairs_done, acked.len() as u64);
        let mut expected = [0u64; 5];
        for &h in acked.values() {
            expected[h] += 1;
        }
        prop_assert_eq!(d.pentanomial, expected);
    }
    // And so are they after a restart, read back from the database.
    if grouped && core.end_batch().is_err() {
        (acked, _) = at_group_start;
    }
    drop(core);
    let core = open(&db, now);
    let d = core.detail(run).expect("detail");
    prop_assert_eq!(d.summary.pairs_done, acked.len() as u64);
    let leased: BTreeSet<u64> = acked.keys().copied().collect();
    prop_assert_eq!(leased.len(), acked.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn totals_equal_what_was_acknowledged(ops in proptest::collection::vec(op(), 1..80)) {
        run_ops(&ops, false)?;
    }

    #[test]
    fn totals_equal_what_was_acknowledged_in_group_commits(
        ops in proptest::collection::vec(op(), 1..80)
    ) {
        run_ops(&ops, true)?;
    }
}

#[test]
fn a_corrupt_run_status_is_an_error_not_an_active_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("core.db");
    let mut core = open(&db, 0);
    let id = core.create_run(RUN, 0).expect("run").id;
    drop(core);
    let conn = store::open(&db).expect("db");
    conn.execute(
        "UPDATE runs SET status = 'stoped' WHERE id = ?1",
        [id as i64],
    )
    .expect("update");
    let err = Core::open(&db, Timing::default(), 0)
        .expect_err("a corrupt status must not load as active");
    assert!(err.to_string().contains("stoped"), "{err}");
}
