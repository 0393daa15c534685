//! Opening books: one FEN/EPD position per line, per variant and rule-set.
//!
//! The books shipped in `worker/books/<variant>-<ruleset>.epd` are compiled into the library,
//! so a worker needs no files; `--book FILE` reads another. Lines hold a full FEN (6 fields)
//! or an EPD (4 fields, operations after them ignored); `#` starts a comment line. Every
//! position is checked under the rules it is played with.
//!
//! [`generate`] makes a book: random legal plies from the start position, then a short search
//! keeps positions whose score is within ±`max_score`, without duplicates.

use std::collections::HashSet;
use std::path::Path;

use engine::dispatch::{with_position, with_search_position, WithPosition, WithSearchPosition};
use engine::eval::SearchPosition;
use engine::search::{Limits, Searcher};
use engine::{Game, Position, Rules};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::WorkerError;

/// A checked list of opening positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    /// Where it came from (file name or built-in name).
    pub name: String,
    /// The positions as FEN, normalised by the engine's writer.
    pub positions: Vec<String>,
}

/// The text of the book shipped for `rules`.
pub fn builtin_text(rules: Rules) -> &'static str {
    use engine::{Ruleset as R, Variant as V};
    match (rules.variant(), rules.ruleset()) {
        (V::Chess, _) => include_str!("../books/chess-normal.epd"),
        (V::Latte, R::Luft) => include_str!("../books/latte-luft.epd"),
        (V::Latte, R::TwoRooks) => include_str!("../books/latte-tworooks.epd"),
        (V::Latte, R::Both) => include_str!("../books/latte-both.epd"),
        (V::Latte, _) => include_str!("../books/latte-normal.epd"),
        (V::Secutor, R::Orthodox) => include_str!("../books/secutor-orthodox.epd"),
        (V::Secutor, _) => include_str!("../books/secutor-extended.epd"),
    }
}

/// The file name of the book of `rules` under `worker/books/`.
pub fn builtin_name(rules: Rules) -> String {
    format!("{}-{}.epd", rules.variant().id(), rules.ruleset().id())
}

impl Book {
    /// The book shipped for `rules`.
    pub fn builtin(rules: Rules) -> Result<Book, WorkerError> {
        let name = builtin_name(rules);
        let book = Book::parse(&name, builtin_text(rules), rules)?;
        if book.positions.is_empty() {
            return Err(WorkerError::MissingBook(rules.to_string()));
        }
        Ok(book)
    }

    /// Reads a book file.
    pub fn load(path: &Path, rules: Rules) -> Result<Book, WorkerError> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkerError::BookUnreadable {
            path: path.to_path_buf(),
            source,
        })?;
        let book = Book::parse(&path.display().to_string(), &text, rules)?;
        if book.positions.is_empty() {
            return Err(WorkerError::EmptyBook(path.display().to_string()));
        }
        Ok(book)
    }

    /// Parses and checks a book's text.
    pub fn parse(name: &str, text: &str, rules: Rules) -> Result<Book, WorkerError> {
        let positions = with_position(rules, ParseJob { name, text })?;
        Ok(Book {
            name: name.to_string(),
            positions,
        })
    }

    /// The order a run plays the openings in: a permutation of the indices, shuffled by
    /// `seed` (pair `i` plays opening `order[i % len]`).
    pub fn order(&self, seed: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.positions.len()).collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        order.shuffle(&mut rng);
        order
    }
}

/// The FEN part of a book line: 6 fields when the clocks are there, else the 4 EPD fields.
fn fen_of_line(line: &str) -> Option<String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 4 {
        return None;
    }
    let clocks = fields.len() >= 6
        && fields[4].parse::<u32>().is_ok()
        && fields[5].trim_end_matches(';').parse::<u32>().is_ok();
    let n = if clocks { 6 } else { 4 };
    Some(
        fields[..n]
            .iter()
            .map(|f| f.trim_end_matches(';'))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

struct ParseJob<'a> {
    name: &'a str,
    text: &'a str,
}

impl WithPosition for ParseJob<'_> {
    type Output = Result<Vec<String>, WorkerError>;
    fn run<P: Position>(self, rules: Rules) -> Self::Output {
        let mut out = Vec::new();
        for (i, raw) in self.text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |detail: String| WorkerError::BookLine {
                path: self.name.to_string(),
                line: i + 1,
                detail,
            };
            let fen = fen_of_line(line).ok_or_else(|| bad(format!("not a FEN: {line:?}")))?;
            let pos = P::from_fen(rules, &fen).map_err(|e| bad(e.to_string()))?;
            if pos.legal_move_list().is_empty() {
                return Err(bad(format!("{fen:?} has no legal move")));
            }
            out.push(pos.to_fen());
        }
        Ok(out)
    }
}

/// How to make a book.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookConfig {
    /// Variant and rule-set.
    pub rules: Rules,
    /// Positions wanted.
    pub count: usize,
    /// Random stream seed.
    pub seed: u64,
    /// Fewest random plies from the start.
    pub min_plies: u32,
    /// Most random plies from the start.
    pub max_plies: u32,
    /// Nodes of the checking search.
    pub nodes: u64,
    /// Largest absolute score kept, in centipawns.
    pub max_score: i32,
    /// Whether the random plies may castle. Books shared by rule-sets never do: a castling
    /// move exists under one rule-set and not another.
    pub castling_plies: bool,
}

impl BookConfig {
    /// Defaults: 6 to 9 random plies, a 5000-node search, scores within ±100 cp.
    pub fn new(rules: Rules, count: usize, seed: u64) -> Self {
        BookConfig {
            rules,
            count,
            seed,
            min_plies: 6,
            max_plies: 9,
            nodes: 5000,
            max_score: 100,
            castling_plies: true,
        }
    }
}

/// Makes a book; fails if far too many candidates are rejected to reach `count`.
pub fn generate(config: &BookConfig) -> Result<Vec<String>, WorkerError> {
    if config.min_plies > config.max_plies {
        return Err(WorkerError::Invalid(format!(
            "min plies {} is above max plies {}",
            config.min_plies, config.max_plies
        )));
    }
    with_search_position(config.rules, GenerateJob { config })
}

/// The rule-set a variant's shared book is generated under: the one with the most castling
/// rights, so that each other rule-set's rights are a subset to keep.
fn widest_ruleset(variant: engine::Variant) -> engine::Ruleset {
    use engine::{Ruleset as R, Variant as V};
    match variant {
        V::Latte => R::Both,
        V::Secutor => R::Extended,
        V::Chess => R::Normal,
    }
}

/// One book per rule-set of `config.rules`' variant, with the same positions in the same
/// order: a study then compares rule-sets on identical openings, not on books that differ.
/// Positions come from random plies that never castle, under the rule-set with the widest
/// castling rights, and are written under each rule-set with the rights it has (the FEN
/// reader drops the others, e.g. Latte's G/B letters under `normal`).
pub fn generate_shared(config: &BookConfig) -> Result<Vec<(Rules, Vec<String>)>, WorkerError> {
    let variant = config.rules.variant();
    let widest = Rules::new(variant, widest_ruleset(variant))
        .map_err(|e| WorkerError::Invalid(e.to_string()))?;
    let positions = generate(&BookConfig {
        rules: widest,
        castling_plies: false,
        ..*config
    })?;
    variant
        .rulesets()
        .iter()
        .map(|&r| {
            let rules = Rules::new(variant, r).map_err(|e| WorkerError::Invalid(e.to_string()))?;
            let fens = positions
                .iter()
                .map(|fen| with_search_position(rules, Rewrite { fen }))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((rules, fens))
        })
        .collect()
}

/// A FEN read and written again under other rules.
struct Rewrite<'a> {
    fen: &'a str,
}

impl WithSearchPosition for Rewrite<'_> {
    type Output = Result<String, WorkerError>;
    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        P::from_fen(rules, self.fen)
            .map(|p| p.to_fen())
            .map_err(|source| WorkerError::Fen {
                context: self.fen.to_string(),
                source,
            })
    }
}

struct GenerateJob<'a> {
    config: &'a BookConfig,
}

impl WithSearchPosition for GenerateJob<'_> {
    type Output = Result<Vec<String>, WorkerError>;
    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        let c = self.config;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(c.seed);
        let mut searcher = Searcher::<P>::new(4, engine::params::Params::default());
        let limits = Limits {
            nodes: Some(c.nodes),
            ..Limits::default()
        };
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(c.count);
        let max_attempts = c.count.saturating_mul(500).max(1000);
        let mut attempts = 0;
        while out.len() < c.count {
            attempts += 1;
            if attempts > max_attempts {
                return Err(WorkerError::Invalid(format!(
                    "only {} of {} positions found in {max_attempts} attempts",
                    out.len(),
                    c.count
                )));
            }
            let mut game = Game::<P>::new(rules).map_err(|source| WorkerError::Fen {
                context: "start position".into(),
                source,
            })?;
            let plies = rng.gen_range(c.min_plies..=c.max_plies);
            let mut ok = true;
            for _ in 0..plies {
                let pos = game.position();
                let moves: Vec<P::Move> = pos
                    .legal_move_list()
                    .iter()
                    .copied()
                    .filter(|&m| c.castling_plies || pos.move_info(m).castle.is_none())
                    .collect();
                if moves.is_empty() {
                    ok = false;
                    break;
                }
                let mv = moves[rng.gen_range(0..moves.len())];
                game.play(mv);
            }
            if !ok || game.outcome().is_some() {
                continue;
            }
            let fen = game.position().to_fen();
            let key: String = fen.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
            if seen.contains(&key) {
                continue;
            }
            searcher.new_game();
            let r = searcher.search(game.position(), game.history_keys(), &limits, |_| {});
            seen.insert(key);
            if r.score.abs() <= c.max_score {
                out.push(fen);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_books_hold_the_same_positions_under_each_rule_set() {
        let rules = Rules::parse("latte", Some("normal")).expect("rules");
        let mut c = BookConfig::new(rules, 12, 5);
        c.nodes = 200;
        let books = generate_shared(&c).expect("books");
        assert_eq!(books.len(), 4);
        let board = |fen: &str| fen.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        for (_, fens) in &books {
            let a: Vec<String> = fens.iter().map(|f| board(f)).collect();
            let b: Vec<String> = books[0].1.iter().map(|f| board(f)).collect();
            assert_eq!(a, b);
        }
        for (r, fens) in &books {
            for f in fens {
                let rights = f.split_whitespace().nth(2).unwrap_or("-");
                let g_letters = rights.chars().any(|ch| "GBgb".contains(ch));
                if r.ruleset() == engine::Ruleset::Normal {
                    assert!(!g_letters, "{r}: {f}");
                }
            }
        }
    }

    #[test]
    fn shipped_books_of_a_variant_share_their_positions() {
        for v in [engine::Variant::Latte, engine::Variant::Secutor] {
            let boards: Vec<Vec<String>> = v
                .rulesets()
                .iter()
                .map(|&r| {
                    let rules = Rules::new(v, r).expect("listed");
                    Book::builtin(rules)
                        .expect("book")
                        .positions
                        .iter()
                        .map(|f| f.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
                        .collect()
                })
                .collect();
            assert!(boards.iter().all(|b| *b == boards[0]), "{v:?} books differ");
        }
    }

    #[test]
    fn every_shipped_book_is_valid_and_large() {
        for v in engine::Variant::ALL {
            for &r in v.rulesets() {
                let rules = Rules::new(v, r).expect("listed");
                let book = Book::builtin(rules).expect("valid book");
                assert!(book.positions.len() >= 200, "{}", book.name);
                let unique: HashSet<_> = book.positions.iter().collect();
                assert_eq!(unique.len(), book.positions.len(), "{}", book.name);
            }
        }
    }

    #[test]
    fn bad_lines_are_named() {
        let rules = Rules::parse("latte", Some("both")).expect("rules");
        let err = Book::parse("b.epd", "# c\n\nrrnqknrr/8/8 w - -\n", rules).expect_err("bad");
        let text = err.to_string();
        assert!(text.contains("b.epd") && text.contains("line 3"), "{text}");
        let ok = Book::parse(
            "b.epd",
            "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQkq - bm e3; id \"x\";\n",
            rules,
        )
        .expect("EPD with operations");
        assert_eq!(ok.positions.len(), 1);
    }

    #[test]
    fn generation_is_reproducible_and_balanced() {
        let rules = Rules::parse("latte", Some("luft")).expect("rules");
        let mut c = BookConfig::new(rules, 5, 7);
        c.nodes = 500;
        let a = generate(&c).expect("book");
        assert_eq!(a, generate(&c).expect("book"));
        assert_eq!(a.len(), 5);
        let book = Book::parse("gen", &a.join("\n"), rules).expect("valid");
        assert_eq!(book.positions, a);
    }
}
