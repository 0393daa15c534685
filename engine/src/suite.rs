//! Perft suites in the JSON Lines format of `tests/data/perft/README.md`: reading records and
//! checking one, with a per-move comparison when a count is wrong.

use std::collections::BTreeMap;

use serde::Deserialize;
use thiserror::Error;

use crate::dispatch::{with_position, WithPosition};
use crate::error::{FenError, RulesError};
use crate::perft::{divide, perft};
use crate::position::Position;
use crate::variant::Rules;

/// One line of a perft file. Unknown fields are ignored, as the format asks.
#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    /// Position name.
    pub id: String,
    /// Variant id.
    pub variant: String,
    /// Rule-set id.
    pub ruleset: String,
    /// The position.
    pub fen: String,
    /// Plies.
    pub depth: u32,
    /// Expected leaf count.
    pub nodes: u64,
    /// Expected per-root-move counts, if given.
    #[serde(default)]
    pub divide: Option<BTreeMap<String, u64>>,
}

/// Why a suite line could not be checked.
#[derive(Debug, Error)]
pub enum SuiteError {
    /// Not a JSON object of the expected shape.
    #[error("line {line}: not a perft record: {source}")]
    Json {
        /// 1-based line number.
        line: usize,
        /// The parser's complaint.
        source: serde_json::Error,
    },
    /// Unknown variant or rule-set.
    #[error("line {line} ({id}): {source}")]
    Rules {
        /// 1-based line number.
        line: usize,
        /// Record id.
        id: String,
        /// What is wrong.
        source: RulesError,
    },
    /// The FEN was refused.
    #[error("line {line} ({id}): {source}")]
    Fen {
        /// 1-based line number.
        line: usize,
        /// Record id.
        id: String,
        /// What is wrong.
        source: FenError,
    },
}

/// Parses every non-blank line of a perft file, with its 1-based line number.
pub fn parse_records(text: &str) -> Result<Vec<(usize, Record)>, SuiteError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map(|r| (i + 1, r))
                .map_err(|source| SuiteError::Json {
                    line: i + 1,
                    source,
                })
        })
        .collect()
}

/// The outcome of checking one record.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The count found.
    pub nodes: u64,
    /// For a mismatch: root moves whose counts differ, as (move, expected, found); `None`
    /// for a move on one side only.
    pub differences: Vec<(String, Option<u64>, Option<u64>)>,
}

impl Checked {
    /// Whether the count matched.
    pub fn passed(&self, record: &Record) -> bool {
        self.nodes == record.nodes
    }
}

struct CheckRecord<'a>(&'a Record, usize);

impl WithPosition for CheckRecord<'_> {
    type Output = Result<Checked, SuiteError>;
    fn run<P: Position>(self, rules: Rules) -> Self::Output {
        let CheckRecord(r, line) = self;
        let mut pos = P::from_fen(rules, &r.fen).map_err(|source| SuiteError::Fen {
            line,
            id: r.id.clone(),
            source,
        })?;
        let nodes = perft(&mut pos, r.depth);
        let mut differences = Vec::new();
        if nodes != r.nodes {
            let ours: BTreeMap<String, u64> = divide(&mut pos, r.depth).into_iter().collect();
            if let Some(theirs) = &r.divide {
                let mut names: Vec<&String> = ours.keys().chain(theirs.keys()).collect();
                names.sort();
                names.dedup();
                for name in names {
                    let (want, got) = (theirs.get(name).copied(), ours.get(name).copied());
                    if want != got {
                        differences.push((name.clone(), want, got));
                    }
                }
            }
        }
        Ok(Checked { nodes, differences })
    }
}

/// Runs perft on one record (`line` is its line number, for messages).
pub fn check_record(record: &Record, line: usize) -> Result<Checked, SuiteError> {
    let rules = Rules::parse(&record.variant, Some(&record.ruleset)).map_err(|source| {
        SuiteError::Rules {
            line,
            id: record.id.clone(),
            source,
        }
    })?;
    with_position(rules, CheckRecord(record, line))
}
