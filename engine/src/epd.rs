//! EPD test suites (`bm`/`am` opcodes, any variant): parsing and scoring.

use thiserror::Error;

use crate::dispatch::with_search_position;
use crate::error::{FenError, MoveError, RulesError};
use crate::eval::SearchPosition;
use crate::params::Params;
use crate::san::parse_san;
use crate::search::{Limits, Searcher};
use crate::variant::Rules;

/// One EPD line.
#[derive(Debug, Clone, PartialEq)]
pub struct EpdRecord {
    /// 1-based line number.
    pub line: usize,
    /// The `id` opcode, or the line number.
    pub id: String,
    /// The four FEN fields.
    pub fen: String,
    /// Best moves (SAN).
    pub best: Vec<String>,
    /// Moves to avoid (SAN).
    pub avoid: Vec<String>,
    /// `variant` opcode, if any.
    pub variant: Option<String>,
    /// `ruleset` opcode, if any.
    pub ruleset: Option<String>,
}

/// Why an EPD line could not be used.
#[derive(Debug, Error)]
pub enum EpdError {
    /// Fewer than four FEN fields or a malformed opcode.
    #[error("line {line}: {detail}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// Variant or rule-set.
    #[error("line {line}: {source}")]
    Rules {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        source: RulesError,
    },
    /// The position.
    #[error("line {line}: {source}")]
    Fen {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        source: FenError,
    },
    /// A `bm`/`am` move that is not legal.
    #[error("line {line}: {source}")]
    Move {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        source: MoveError,
    },
}

/// Parses an EPD file's text; blank lines and lines starting with `#` are skipped.
pub fn parse(text: &str) -> Result<Vec<EpdRecord>, EpdError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut parts = l.splitn(5, ' ');
        let fields: Vec<&str> = parts.by_ref().take(4).collect();
        if fields.len() < 4 {
            return Err(EpdError::Syntax {
                line,
                detail: "an EPD line needs four FEN fields".into(),
            });
        }
        let rest = parts.next().unwrap_or("");
        let mut rec = EpdRecord {
            line,
            id: format!("line {line}"),
            fen: fields.join(" "),
            best: vec![],
            avoid: vec![],
            variant: None,
            ruleset: None,
        };
        for op in rest.split(';').map(str::trim).filter(|o| !o.is_empty()) {
            let (code, arg) = op.split_once(' ').unwrap_or((op, ""));
            let arg = arg.trim();
            let words = || {
                arg.split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            match code {
                "bm" => rec.best = words(),
                "am" => rec.avoid = words(),
                "id" => rec.id = arg.trim_matches('"').to_string(),
                "variant" => rec.variant = Some(arg.trim_matches('"').to_string()),
                "ruleset" => rec.ruleset = Some(arg.trim_matches('"').to_string()),
                _ => {}
            }
        }
        if rec.best.is_empty() && rec.avoid.is_empty() {
            return Err(EpdError::Syntax {
                line,
                detail: "no bm or am opcode".into(),
            });
        }
        out.push(rec);
    }
    Ok(out)
}

/// The result of one position.
#[derive(Debug, Clone)]
pub struct EpdOutcome {
    /// The record's id.
    pub id: String,
    /// The engine's move in SAN.
    pub played: String,
    /// Whether it is among `bm` and not among `am`.
    pub solved: bool,
    /// Nodes searched.
    pub nodes: u64,
}

struct Solve<'a> {
    rec: &'a EpdRecord,
    limits: &'a Limits,
    params: &'a Params,
    hash: usize,
}

impl Solve<'_> {
    fn go<P: SearchPosition>(self, rules: Rules) -> Result<EpdOutcome, EpdError> {
        let line = self.rec.line;
        let pos =
            P::from_fen(rules, &self.rec.fen).map_err(|source| EpdError::Fen { line, source })?;
        let parse_all = |list: &[String]| -> Result<Vec<P::Move>, EpdError> {
            list.iter()
                .map(|s| parse_san(&pos, s).map_err(|source| EpdError::Move { line, source }))
                .collect()
        };
        let best = parse_all(&self.rec.best)?;
        let avoid = parse_all(&self.rec.avoid)?;
        let mut searcher = Searcher::<P>::new(self.hash, self.params.clone());
        let result = searcher.search(&pos, &[], self.limits, |_| {});
        let played = result
            .best
            .map_or("(none)".to_string(), |m| crate::san::to_san(&pos, m));
        let solved = result
            .best
            .is_some_and(|m| (best.is_empty() || best.contains(&m)) && !avoid.contains(&m));
        Ok(EpdOutcome {
            id: self.rec.id.clone(),
            played,
            solved,
            nodes: result.nodes,
        })
    }
}

impl crate::dispatch::WithSearchPosition for Solve<'_> {
    type Output = Result<EpdOutcome, EpdError>;
    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        self.go::<P>(rules)
    }
}

/// Searches one record under `default_rules` unless its opcodes name a variant/rule-set.
pub fn solve(
    rec: &EpdRecord,
    default_rules: Rules,
    limits: &Limits,
    params: &Params,
    hash: usize,
) -> Result<EpdOutcome, EpdError> {
    let rules = match (&rec.variant, &rec.ruleset) {
        (None, None) => default_rules,
        (v, r) => Rules::parse(
            v.as_deref().unwrap_or(default_rules.variant().id()),
            r.as_deref(),
        )
        .map_err(|source| EpdError::Rules {
            line: rec.line,
            source,
        })?,
    };
    with_search_position(
        rules,
        Solve {
            rec,
            limits,
            params,
            hash,
        },
    )
}
