//! Variant and rule-set identifiers, validated together so that a `Rules` value can only hold a
//! combination RULES.md defines (no "secutor with luft castling").

use std::fmt;
use std::str::FromStr;

use crate::error::RulesError;

/// The board a game is played on: what decides the position type, the FEN reader, and which
/// evaluation parts (learned tables, networks) a game can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Geometry {
    /// The 8x8 board of chess and Latte (u64 bitboards).
    Square8,
    /// The 68-square Gustavian board of Secutor Chess (10x8 with holes, u128 bitboards).
    Gustavian,
}

/// A game the engine plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Orthodox chess: the yardstick.
    Chess,
    /// Latte Chess: orthodox rules from a crowded start, optional castlings.
    Latte,
    /// Secutor Chess on the 68-square Gustavian board.
    Secutor,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Chess, Variant::Latte, Variant::Secutor];

    /// The id used in files, CLIs and UCI.
    pub const fn id(self) -> &'static str {
        match self {
            Variant::Chess => "chess",
            Variant::Latte => "latte",
            Variant::Secutor => "secutor",
        }
    }

    /// The board it is played on: the one place a new variant must be placed on one.
    pub const fn geometry(self) -> Geometry {
        match self {
            Variant::Chess | Variant::Latte => Geometry::Square8,
            Variant::Secutor => Geometry::Gustavian,
        }
    }

    /// The rule-sets this variant offers; the first is the default.
    pub const fn rulesets(self) -> &'static [Ruleset] {
        match self {
            Variant::Chess => &[Ruleset::Normal],
            Variant::Latte => &[
                Ruleset::Normal,
                Ruleset::Luft,
                Ruleset::TwoRooks,
                Ruleset::Both,
            ],
            Variant::Secutor => &[Ruleset::Extended, Ruleset::Orthodox],
        }
    }

    /// The default rule-set.
    pub const fn default_ruleset(self) -> Ruleset {
        self.rulesets()[0]
    }

    /// The start position's FEN with the castling rights of `Normal`/`Extended` play.
    /// Under `luft`, `tworooks` and `both` Latte adds the G/B letters (see [`Rules::start_fen`]).
    const fn base_start_fen(self) -> &'static str {
        match self {
            Variant::Chess => "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            Variant::Latte => {
                "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQkq - 0 1"
            }
            Variant::Secutor => {
                "srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1"
            }
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Variant {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Variant::ALL
            .into_iter()
            .find(|v| v.id().eq_ignore_ascii_case(s))
            .ok_or_else(|| RulesError::UnknownVariant(s.to_string()))
    }
}

/// A rule-set id; which ones a variant accepts is decided by [`Rules::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ruleset {
    /// Orthodox castling only (`chess`, `latte`).
    Normal,
    /// Latte: normal + Luft castling.
    Luft,
    /// Latte: normal + Two Rooks castling.
    TwoRooks,
    /// Latte: normal + Luft + Two Rooks castling.
    Both,
    /// Secutor: two- and three-square castling (the inventor's rule).
    Extended,
    /// Secutor: two-square castling only.
    Orthodox,
}

impl Ruleset {
    /// Every rule-set id.
    pub const ALL: [Ruleset; 6] = [
        Ruleset::Normal,
        Ruleset::Luft,
        Ruleset::TwoRooks,
        Ruleset::Both,
        Ruleset::Extended,
        Ruleset::Orthodox,
    ];

    /// The id used in files, CLIs and UCI.
    pub const fn id(self) -> &'static str {
        match self {
            Ruleset::Normal => "normal",
            Ruleset::Luft => "luft",
            Ruleset::TwoRooks => "tworooks",
            Ruleset::Both => "both",
            Ruleset::Extended => "extended",
            Ruleset::Orthodox => "orthodox",
        }
    }

    /// Whether Luft castling is available.
    #[inline]
    pub const fn luft(self) -> bool {
        matches!(self, Ruleset::Luft | Ruleset::Both)
    }

    /// Whether Two Rooks castling is available.
    #[inline]
    pub const fn two_rooks(self) -> bool {
        matches!(self, Ruleset::TwoRooks | Ruleset::Both)
    }

    /// Whether Latte's G/B castling letters matter.
    #[inline]
    pub const fn optional_castling(self) -> bool {
        self.luft() || self.two_rooks()
    }

    /// Whether the three-square castling of Secutor Chess is available.
    #[inline]
    pub const fn extended(self) -> bool {
        matches!(self, Ruleset::Extended)
    }
}

impl fmt::Display for Ruleset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A variant together with one of its own rule-sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    variant: Variant,
    ruleset: Ruleset,
}

impl Rules {
    /// Checks that `ruleset` belongs to `variant`.
    pub fn new(variant: Variant, ruleset: Ruleset) -> Result<Rules, RulesError> {
        if variant.rulesets().contains(&ruleset) {
            Ok(Rules { variant, ruleset })
        } else {
            Err(RulesError::RulesetNotInVariant {
                variant,
                ruleset: ruleset.id().to_string(),
            })
        }
    }

    /// Parses a variant id and an optional rule-set id (the variant's default when `None`).
    pub fn parse(variant: &str, ruleset: Option<&str>) -> Result<Rules, RulesError> {
        let variant: Variant = variant.parse()?;
        let Some(name) = ruleset else {
            return Ok(Rules::default_for(variant));
        };
        let ruleset = Ruleset::ALL
            .into_iter()
            .find(|r| r.id().eq_ignore_ascii_case(name))
            .ok_or_else(|| RulesError::UnknownRuleset(name.to_string()))?;
        Rules::new(variant, ruleset).map_err(|_| RulesError::RulesetNotInVariant {
            variant,
            ruleset: name.to_string(),
        })
    }

    /// The variant with its default rule-set.
    pub const fn default_for(variant: Variant) -> Rules {
        Rules {
            variant,
            ruleset: variant.default_ruleset(),
        }
    }

    /// The variant.
    #[inline]
    pub const fn variant(self) -> Variant {
        self.variant
    }

    /// The rule-set.
    #[inline]
    pub const fn ruleset(self) -> Ruleset {
        self.ruleset
    }

    /// The start position with the full castling rights of this rule-set.
    pub const fn start_fen(self) -> &'static str {
        match (self.variant, self.ruleset.optional_castling()) {
            (Variant::Latte, true) => {
                "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQGBkqgb - 0 1"
            }
            (v, _) => v.base_start_fen(),
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.variant, self.ruleset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_pair_is_valid_and_others_are_not() {
        for v in Variant::ALL {
            for r in Ruleset::ALL {
                assert_eq!(Rules::new(v, r).is_ok(), v.rulesets().contains(&r));
            }
        }
    }

    #[test]
    fn unknown_variant_is_named() {
        let err = Rules::parse("shogi", None).unwrap_err();
        assert_eq!(err, RulesError::UnknownVariant("shogi".into()));
        assert!(err.to_string().contains("shogi"));
    }

    #[test]
    fn unknown_ruleset_is_named() {
        let err = Rules::parse("latte", Some("wild")).unwrap_err();
        assert!(matches!(err, RulesError::UnknownRuleset(ref s) if s == "wild"));
        assert!(err.to_string().contains("wild"));
    }

    #[test]
    fn ruleset_of_another_variant_is_refused() {
        let err = Rules::parse("secutor", Some("luft")).unwrap_err();
        assert!(matches!(
            err,
            RulesError::RulesetNotInVariant {
                variant: Variant::Secutor,
                ..
            }
        ));
        assert!(err.to_string().contains("luft"));
    }
}
