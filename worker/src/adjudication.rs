//! Ending games early from the engines' own scores, as fastchess and cutechess do.
//!
//! * **Resign**: for `move_count` moves of each side (2 × `move_count` consecutive plies) every
//!   score agrees that the same side is winning by at least `score` centipawns (mate scores
//!   count). Both players must agree, so one engine's blunder of judgement does not end a
//!   game (fastchess's `twosided`, plus the requirement that the sign agrees).
//! * **Draw**: once the game has reached full move `move_number` (of the FEN's count, so
//!   opening moves count), for 2 × `move_count` consecutive plies every score is within
//!   ±`score`; a capture or pawn move restarts the count, as in fastchess.
//! * **Maximum length**: after `max_moves` moves of each side from the start position the game
//!   is a draw.
//!
//! Defaults are the ones fishtest passes to fastchess: resign after 3 moves at 600 cp, draw
//! from move 34 after 8 moves within 20 cp, no maximum length (the 50-move rule bounds games).
//! A ply without a score (an engine that reports none) restarts both counts.

use serde::{Deserialize, Serialize};

use engine::Color;

/// The resign rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResignRule {
    /// Moves of each side the scores must agree for.
    pub move_count: u32,
    /// The winning margin in centipawns (reached at exactly this value).
    pub score: i32,
}

/// The draw rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawRule {
    /// The full-move number from which the rule may fire.
    pub move_number: u32,
    /// Moves of each side the scores must stay small for.
    pub move_count: u32,
    /// The largest absolute score in centipawns that counts as drawish.
    pub score: i32,
}

/// All adjudication rules; `None` turns a rule off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    /// Resign rule.
    pub resign: Option<ResignRule>,
    /// Draw rule.
    pub draw: Option<DrawRule>,
    /// Maximum game length in moves of each side.
    pub max_moves: Option<u32>,
}

impl Default for Adjudication {
    fn default() -> Self {
        Adjudication {
            resign: Some(ResignRule {
                move_count: 3,
                score: 600,
            }),
            draw: Some(DrawRule {
                move_number: 34,
                move_count: 8,
                score: 20,
            }),
            max_moves: None,
        }
    }
}

impl Adjudication {
    /// No adjudication at all: games end only by the rules.
    pub const OFF: Adjudication = Adjudication {
        resign: None,
        draw: None,
        max_moves: None,
    };
}

/// What adjudication decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The scores agree this side is winning.
    Resign {
        /// The winner.
        winner: Color,
    },
    /// The scores stayed near zero.
    Draw,
    /// The game is too long.
    MaxMoves,
}

/// The running state of the rules over one game.
#[derive(Clone, Debug)]
pub struct Tracker {
    rules: Adjudication,
    resign_plies: u32,
    resign_winner: Option<Color>,
    draw_plies: u32,
    plies: u32,
}

impl Tracker {
    /// A tracker at the start of a game.
    pub fn new(rules: Adjudication) -> Self {
        Tracker {
            rules,
            resign_plies: 0,
            resign_winner: None,
            draw_plies: 0,
            plies: 0,
        }
    }

    /// Records a ply just played: who moved, the mover's score, and the position's half-move
    /// clock and full-move number after the move. Returns the verdict if a rule fires now.
    pub fn update(
        &mut self,
        mover: Color,
        score: Option<i32>,
        halfmove_clock: u32,
        fullmove_number: u32,
    ) -> Option<Verdict> {
        self.plies += 1;
        match score {
            None => {
                self.resign_plies = 0;
                self.resign_winner = None;
                self.draw_plies = 0;
            }
            Some(s) => {
                // White's point of view.
                let white = if mover == Color::White { s } else { -s };
                if let Some(r) = self.rules.resign {
                    if white.abs() >= r.score {
                        let winner = if white > 0 {
                            Color::White
                        } else {
                            Color::Black
                        };
                        if self.resign_winner == Some(winner) {
                            self.resign_plies += 1;
                        } else {
                            self.resign_winner = Some(winner);
                            self.resign_plies = 1;
                        }
                    } else {
                        self.resign_plies = 0;
                        self.resign_winner = None;
                    }
                }
                if let Some(d) = self.rules.draw {
                    if halfmove_clock == 0 {
                        self.draw_plies = 0;
                    }
                    if white.abs() <= d.score {
                        self.draw_plies += 1;
                    } else {
                        self.draw_plies = 0;
                    }
                }
            }
        }
        if let (Some(r), Some(winner)) = (self.rules.resign, self.resign_winner) {
            if self.resign_plies >= 2 * r.move_count {
                return Some(Verdict::Resign { winner });
            }
        }
        if let Some(d) = self.rules.draw {
            if fullmove_number >= d.move_number && self.draw_plies >= 2 * d.move_count {
                return Some(Verdict::Draw);
            }
        }
        if let Some(m) = self.rules.max_moves {
            if self.plies >= 2 * m {
                return Some(Verdict::MaxMoves);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resign_only(count: u32, score: i32) -> Tracker {
        Tracker::new(Adjudication {
            resign: Some(ResignRule {
                move_count: count,
                score,
            }),
            ..Adjudication::OFF
        })
    }

    /// Feeds alternating plies (White first) with scores given from White's view.
    fn feed(
        t: &mut Tracker,
        white_scores: &[i32],
        hmvc: u32,
        fullmove: u32,
    ) -> Vec<Option<Verdict>> {
        white_scores
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                let mover = if i % 2 == 0 {
                    Color::White
                } else {
                    Color::Black
                };
                let s = if mover == Color::White { w } else { -w };
                t.update(mover, Some(s), hmvc, fullmove)
            })
            .collect()
    }

    #[test]
    fn resign_fires_exactly_after_two_n_agreeing_plies() {
        let mut t = resign_only(3, 600);
        let v = feed(&mut t, &[600, 650, 600, 700, 601], 5, 20);
        assert!(v.iter().all(Option::is_none));
        assert_eq!(
            t.update(Color::Black, Some(-600), 5, 20),
            Some(Verdict::Resign {
                winner: Color::White
            })
        );
    }

    #[test]
    fn resign_needs_the_threshold_and_agreement() {
        let mut t = resign_only(3, 600);
        // 599 is below the threshold: the count restarts.
        let v = feed(&mut t, &[600, 600, 600, 600, 600, 599], 5, 20);
        assert!(v.iter().all(Option::is_none));
        // A change of the winning side restarts it too.
        let mut t = resign_only(1, 600);
        let v = feed(&mut t, &[700, -700, -700], 5, 20);
        assert_eq!(v[..2], [None, None]);
        assert_eq!(
            v[2],
            Some(Verdict::Resign {
                winner: Color::Black
            })
        );
        // A ply without a score restarts it.
        let mut t = resign_only(1, 600);
        assert_eq!(t.update(Color::White, Some(900), 1, 10), None);
        assert_eq!(t.update(Color::Black, None, 1, 10), None);
        assert_eq!(t.update(Color::White, Some(900), 1, 10), None);
    }

    #[test]
    fn mate_scores_count_for_resign() {
        let mut t = resign_only(1, 600);
        let mate = engine::search::MATE - 5;
        assert_eq!(t.update(Color::White, Some(mate), 1, 10), None);
        assert_eq!(
            t.update(Color::Black, Some(-mate), 1, 10),
            Some(Verdict::Resign {
                winner: Color::White
            })
        );
    }

    fn draw_only(number: u32, count: u32, score: i32) -> Tracker {
        Tracker::new(Adjudication {
            draw: Some(DrawRule {
                move_number: number,
                move_count: count,
                score,
            }),
            ..Adjudication::OFF
        })
    }

    #[test]
    fn draw_fires_exactly_at_its_thresholds() {
        let mut t = draw_only(34, 8, 20);
        let v = feed(&mut t, &[20; 15], 3, 40);
        assert!(v.iter().all(Option::is_none));
        assert_eq!(
            t.update(Color::Black, Some(-20), 3, 40),
            Some(Verdict::Draw)
        );

        // 21 cp is outside.
        let mut t = draw_only(34, 1, 20);
        assert_eq!(t.update(Color::White, Some(21), 3, 40), None);
        assert_eq!(t.update(Color::Black, Some(0), 3, 40), None);
        assert_eq!(t.update(Color::White, Some(0), 3, 40), Some(Verdict::Draw));
    }

    #[test]
    fn draw_waits_for_the_move_number() {
        let mut t = draw_only(34, 1, 20);
        assert_eq!(t.update(Color::White, Some(0), 3, 33), None);
        assert_eq!(t.update(Color::Black, Some(0), 3, 33), None);
        assert_eq!(t.update(Color::White, Some(0), 3, 34), Some(Verdict::Draw));
    }

    #[test]
    fn draw_count_restarts_on_capture_or_pawn_move() {
        let mut t = draw_only(1, 1, 20);
        assert_eq!(t.update(Color::White, Some(0), 4, 40), None);
        // This ply reset the half-move clock: it starts a new count of one.
        assert_eq!(t.update(Color::Black, Some(0), 0, 40), None);
        assert_eq!(t.update(Color::White, Some(0), 1, 41), Some(Verdict::Draw));
    }

    #[test]
    fn max_moves_fires_at_the_limit() {
        let mut t = Tracker::new(Adjudication {
            max_moves: Some(2),
            ..Adjudication::OFF
        });
        for _ in 0..3 {
            assert_eq!(t.update(Color::White, None, 1, 1), None);
        }
        assert_eq!(t.update(Color::Black, None, 1, 1), Some(Verdict::MaxMoves));
    }
}
