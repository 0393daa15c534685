//! What the worker sends about its work, kept within the API's limits (`proto::limits`): the
//! coordinator refuses a whole report over any of them, so a pair whose PGN is too large is
//! sent without it rather than holding back every result of the lease.

use std::io::Write;

use proto::limits;
use proto::v1 as pb;

use crate::record::PairResult;

/// The report form of a finished pair.
pub(crate) fn to_proto(r: &PairResult) -> pb::PairResult {
    let games = r
        .games
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let s = g.study_record(&r.ruleset);
            pb::GameFacts {
                outcome: match s.result {
                    stats::study::Outcome::WhiteWin => pb::GameOutcome::WhiteWin,
                    stats::study::Outcome::Draw => pb::GameOutcome::Draw,
                    stats::study::Outcome::BlackWin => pb::GameOutcome::BlackWin,
                } as i32,
                first_is_white: i == 0,
                termination: s.termination,
                plies: s.plies,
                castlings: s
                    .castlings
                    .into_iter()
                    .map(|c| pb::Castling {
                        white: c.side == stats::study::Side::White,
                        kind: c.kind,
                        move_number: c.move_number,
                    })
                    .collect(),
                milestones: s
                    .milestones
                    .into_iter()
                    .map(|m| pb::Milestone {
                        white: m.side == stats::study::Side::White,
                        kind: m.kind.id().to_string(),
                        move_number: m.move_number,
                    })
                    .collect(),
                ruleset: r.ruleset.clone(),
                variant: r.variant.clone(),
            }
        })
        .collect();
    pb::PairResult {
        index: r.pair_index,
        games,
        pgn_gz: r
            .pgn
            .as_deref()
            .map_or_else(Vec::new, |text| pgn_gz(r.pair_index, text)),
    }
}

/// The pair's PGN compressed, or nothing (with a warning) when it is over the API's limits:
/// the results still count, only the PGN is lost.
fn pgn_gz(index: u64, text: &str) -> Vec<u8> {
    if text.len() > limits::PGN_TEXT_BYTES {
        tracing::warn!(
            pair = index,
            bytes = text.len(),
            limit = limits::PGN_TEXT_BYTES,
            "pgn too large, reporting the pair without it"
        );
        return Vec::new();
    }
    let gz = match gzip(text) {
        Ok(gz) => gz,
        Err(e) => {
            tracing::warn!(
                pair = index,
                error = %e,
                "cannot compress pgn, reporting the pair without it"
            );
            return Vec::new();
        }
    };
    if gz.len() > limits::PGN_GZ_BYTES {
        tracing::warn!(
            pair = index,
            bytes = gz.len(),
            limit = limits::PGN_GZ_BYTES,
            "compressed pgn too large, reporting the pair without it"
        );
        return Vec::new();
    }
    gz
}

fn gzip(text: &str) -> std::io::Result<Vec<u8>> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes())?;
    e.finish()
}

/// A lease failure reason as the API takes it: at most `limits::FAILURE_BYTES`, cut on a
/// character boundary so that it stays UTF-8 (a protobuf `string` must be).
pub(crate) fn failure_reason(reason: &str) -> &str {
    truncate_bytes(reason, limits::FAILURE_BYTES)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn truncate_bytes(s: &str, max: usize) -> &str {
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
    use std::io::Read;

    use super::*;

    #[test]
    fn milestones_are_reported_by_id() {
        use crate::record::{GameRecord, GameResult, Termination};
        use stats::study::{Milestone, MilestoneKind, Side};
        let game = |milestones: Vec<Milestone>| GameRecord {
            white: "a".into(),
            black: "b".into(),
            start_fen: String::new(),
            result: GameResult::Draw,
            termination: Termination::Threefold,
            plies: 40,
            moves: Vec::new(),
            castlings: Vec::new(),
            milestones,
        };
        let lost = Milestone {
            side: Side::Black,
            kind: MilestoneKind::RightsLostRookCaptured,
            move_number: 12,
        };
        let corner = Milestone {
            side: Side::White,
            kind: MilestoneKind::KingCorner,
            move_number: 30,
        };
        let pair = PairResult {
            pair_index: 3,
            seed: 1,
            variant: "latte".into(),
            ruleset: "normal".into(),
            opening_fen: String::new(),
            games: [game(vec![lost, corner]), game(Vec::new())],
            pgn: None,
        };
        let p = to_proto(&pair);
        assert_eq!(
            p.games[0].milestones,
            [
                pb::Milestone {
                    white: false,
                    kind: "rights-lost-rook-captured".into(),
                    move_number: 12,
                },
                pb::Milestone {
                    white: true,
                    kind: "king-corner".into(),
                    move_number: 30,
                },
            ]
        );
        assert!(p.games[1].milestones.is_empty());
    }

    #[test]
    fn short_reasons_are_kept_whole() {
        assert_eq!(failure_reason(""), "");
        assert_eq!(failure_reason("missing book"), "missing book");
        let exact = "x".repeat(limits::FAILURE_BYTES);
        assert_eq!(failure_reason(&exact), exact);
    }

    #[test]
    fn long_reasons_are_cut_on_a_char_boundary() {
        let ascii = "y".repeat(limits::FAILURE_BYTES + 10);
        assert_eq!(failure_reason(&ascii).len(), limits::FAILURE_BYTES);
        // 'é' is two bytes and '€' three: with one ASCII byte in front, the limit falls inside
        // a character, which must be dropped whole.
        for (ch, width) in [('é', 2), ('€', 3)] {
            let s: String = std::iter::once('a')
                .chain(std::iter::repeat_n(ch, limits::FAILURE_BYTES))
                .collect();
            let cut = failure_reason(&s);
            assert!(cut.len() <= limits::FAILURE_BYTES);
            assert!(cut.len() > limits::FAILURE_BYTES - width, "{}", cut.len());
            assert!(s.starts_with(cut));
            assert!(cut.ends_with(ch));
        }
        assert_eq!(truncate_bytes("aé", 2), "a");
        assert_eq!(truncate_bytes("€", 2), "");
    }

    #[test]
    fn small_pgns_are_compressed_and_large_ones_dropped() {
        let text = "[Event \"x\"]\n\n1. e4 e5 *\n";
        let gz = pgn_gz(0, text);
        let mut back = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut back)
            .expect("gzip");
        assert_eq!(back, text);
        // Incompressible text over the compressed limit but under the inflated one.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let noisy: String = (0..limits::PGN_GZ_BYTES * 2)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                char::from(b'!' + (state % 90) as u8)
            })
            .collect();
        assert!(noisy.len() < limits::PGN_TEXT_BYTES);
        assert!(pgn_gz(1, &noisy).is_empty());
        let huge = "a".repeat(limits::PGN_TEXT_BYTES + 1);
        assert!(pgn_gz(2, &huge).is_empty());
    }
}
