//! Tunable evaluation and search parameters, declared once.
//!
//! Each row of the `tunables!` table gives a parameter's field, its UCI/SPSA name, default,
//! bounds, default SPSA `c_end` and `r_end`, and the variants it applies to. From that one row
//! come the `Params` field and its default, the range-checked setter, the UCI `spin` option
//! and the fishtest-style SPSA line. Search and evaluation take `&Params`, never globals, so a
//! worker can play theta+ against theta- in one process.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use thiserror::Error;

use crate::variant::{Geometry, Variant};

/// Which variants a parameter matters in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every variant.
    All,
    /// Only Secutor Chess (terms of the Secutor piece).
    Secutor,
    /// Chess and Latte, the 8x8 board's games (each has a learned square table and a network
    /// fitted on its own positions).
    Board8,
}

impl Scope {
    /// The scope's name as `engine params` prints it.
    pub const fn id(self) -> &'static str {
        match self {
            Scope::All => "all",
            Scope::Secutor => "secutor",
            Scope::Board8 => "board8",
        }
    }

    /// Whether the parameter matters in `variant`.
    pub const fn applies_to(self, variant: Variant) -> bool {
        match self {
            Scope::All => true,
            Scope::Secutor => matches!(variant, Variant::Secutor),
            Scope::Board8 => matches!(variant.geometry(), Geometry::Square8),
        }
    }
}

/// The declaration of one parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// The UCI option and SPSA name.
    pub name: &'static str,
    /// The default value.
    pub default: i32,
    /// The smallest allowed value.
    pub min: i32,
    /// The largest allowed value.
    pub max: i32,
    /// SPSA's final perturbation size.
    pub c_end: f64,
    /// SPSA's final learning rate.
    pub r_end: f64,
    /// Where the parameter matters.
    pub scope: Scope,
}

/// Why a parameter assignment was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParamError {
    /// No parameter of that name.
    #[error("unknown parameter {0:?}")]
    Unknown(String),
    /// Not an integer.
    #[error("parameter {name}: value {value:?} is not an integer")]
    NotANumber {
        /// Parameter name.
        name: String,
        /// The text given.
        value: String,
    },
    /// Outside [min, max].
    #[error("parameter {name}: value {value} is outside its range [{min}, {max}]")]
    OutOfRange {
        /// Parameter name.
        name: String,
        /// The value given.
        value: i64,
        /// Lower bound.
        min: i32,
        /// Upper bound.
        max: i32,
    },
}

macro_rules! tunables {
    ($($field:ident $name:literal = $default:expr, $min:expr, $max:expr, $c_end:expr, $r_end:expr, $scope:ident;)*) => {
        /// The evaluation weights: one field per declared parameter, in centipawns (or
        /// centipawns per unit for mobility-like terms).
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct Params {
            $(
                #[doc = concat!("`", $name, "`")]
                pub $field: i32,
            )*
        }

        impl Default for Params {
            fn default() -> Self {
                Params { $($field: $default,)* }
            }
        }

        /// Every parameter's declaration, in table order.
        pub static SPECS: &[ParamSpec] = &[
            $(ParamSpec { name: $name, default: $default, min: $min, max: $max, c_end: $c_end, r_end: $r_end, scope: Scope::$scope },)*
        ];

        impl Params {
            fn slot(&mut self, index: usize) -> Option<&mut i32> {
                let mut i = 0;
                $(
                    if i == index { return Some(&mut self.$field); }
                    i += 1;
                )*
                let _ = i;
                None
            }

            fn value(&self, index: usize) -> Option<i32> {
                let mut i = 0;
                $(
                    if i == index { return Some(self.$field); }
                    i += 1;
                )*
                let _ = i;
                None
            }
        }
    };
}

tunables! {
    pawn_mg "PawnValueMg" = 70, 40, 200, 6.0, 0.002, All;
    pawn_eg "PawnValueEg" = 121, 40, 250, 6.0, 0.002, All;
    knight_mg "KnightValueMg" = 344, 150, 600, 15.0, 0.002, All;
    knight_eg "KnightValueEg" = 294, 150, 600, 15.0, 0.002, All;
    bishop_mg "BishopValueMg" = 382, 150, 600, 15.0, 0.002, All;
    bishop_eg "BishopValueEg" = 303, 150, 600, 15.0, 0.002, All;
    rook_mg "RookValueMg" = 480, 250, 900, 20.0, 0.002, All;
    rook_eg "RookValueEg" = 546, 250, 900, 20.0, 0.002, All;
    queen_mg "QueenValueMg" = 1041, 600, 1600, 30.0, 0.002, All;
    queen_eg "QueenValueEg" = 955, 600, 1600, 30.0, 0.002, All;
    secutor_mg "SecutorValueMg" = 450, 100, 700, 15.0, 0.002, Secutor;
    secutor_eg "SecutorValueEg" = 266, 100, 700, 15.0, 0.002, Secutor;
    knight_mob_mg "KnightMobilityMg" = 8, 0, 20, 1.0, 0.002, All;
    knight_mob_eg "KnightMobilityEg" = 0, 0, 20, 1.0, 0.002, All;
    bishop_mob_mg "BishopMobilityMg" = 9, 0, 20, 1.0, 0.002, All;
    bishop_mob_eg "BishopMobilityEg" = 3, 0, 20, 1.0, 0.002, All;
    rook_mob_mg "RookMobilityMg" = 8, 0, 20, 1.0, 0.002, All;
    rook_mob_eg "RookMobilityEg" = 0, 0, 20, 1.0, 0.002, All;
    queen_mob_mg "QueenMobilityMg" = 4, 0, 20, 1.0, 0.002, All;
    queen_mob_eg "QueenMobilityEg" = 0, 0, 20, 1.0, 0.002, All;
    secutor_mob_mg "SecutorMobilityMg" = 8, 0, 20, 1.0, 0.002, Secutor;
    secutor_mob_eg "SecutorMobilityEg" = 0, 0, 20, 1.0, 0.002, Secutor;
    secutor_capture_mg "SecutorCaptureThreatMg" = 20, 0, 60, 2.0, 0.002, Secutor;
    secutor_capture_eg "SecutorCaptureThreatEg" = 43, 0, 60, 2.0, 0.002, Secutor;
    bishop_pair_mg "BishopPairMg" = 47, 0, 100, 4.0, 0.002, All;
    bishop_pair_eg "BishopPairEg" = 47, 0, 120, 4.0, 0.002, All;
    rook_open_mg "RookOpenFileMg" = 44, 0, 80, 3.0, 0.002, All;
    knight_outpost_mg "KnightOutpostMg" = 30, 0, 100, 3.0, 0.002, All;
    knight_outpost_eg "KnightOutpostEg" = 17, 0, 100, 3.0, 0.002, All;
    bishop_outpost_mg "BishopOutpostMg" = 43, 0, 100, 3.0, 0.002, All;
    bishop_outpost_eg "BishopOutpostEg" = 0, 0, 100, 3.0, 0.002, All;
    rook_open_eg "RookOpenFileEg" = 0, 0, 80, 3.0, 0.002, All;
    rook_semi_mg "RookSemiOpenFileMg" = 18, 0, 60, 3.0, 0.002, All;
    rook_semi_eg "RookSemiOpenFileEg" = 22, 0, 60, 3.0, 0.002, All;
    doubled_mg "DoubledPawnMg" = 8, 0, 60, 2.0, 0.002, All;
    doubled_eg "DoubledPawnEg" = 22, 0, 60, 2.0, 0.002, All;
    isolated_mg "IsolatedPawnMg" = 11, 0, 60, 2.0, 0.002, All;
    isolated_eg "IsolatedPawnEg" = 7, 0, 60, 2.0, 0.002, All;
    connected_mg "ConnectedPawnMg" = 5, 0, 30, 1.0, 0.002, All;
    connected_eg "ConnectedPawnEg" = 4, 0, 30, 1.0, 0.002, All;
    backward_mg "BackwardPawnMg" = 10, 0, 60, 2.0, 0.002, All;
    backward_eg "BackwardPawnEg" = 13, 0, 60, 2.0, 0.002, All;
    passed2_mg "PassedRank2Mg" = 3, 0, 100, 3.0, 0.002, All;
    passed2_eg "PassedRank2Eg" = 16, 0, 100, 3.0, 0.002, All;
    passed3_mg "PassedRank3Mg" = 0, 0, 100, 3.0, 0.002, All;
    passed3_eg "PassedRank3Eg" = 0, 0, 120, 3.0, 0.002, All;
    passed4_mg "PassedRank4Mg" = 0, 0, 120, 4.0, 0.002, All;
    passed4_eg "PassedRank4Eg" = 9, 0, 150, 4.0, 0.002, All;
    passed5_mg "PassedRank5Mg" = 19, 0, 150, 5.0, 0.002, All;
    passed5_eg "PassedRank5Eg" = 30, 0, 200, 5.0, 0.002, All;
    passed6_mg "PassedRank6Mg" = 81, 0, 250, 6.0, 0.002, All;
    passed6_eg "PassedRank6Eg" = 72, 0, 300, 6.0, 0.002, All;
    passed7_mg "PassedRank7Mg" = 125, 0, 300, 8.0, 0.002, All;
    passed7_eg "PassedRank7Eg" = 138, 0, 400, 8.0, 0.002, All;
    shelter_mg "KingShelterMg" = 14, 0, 60, 2.0, 0.002, All;
    king_attack_mg "KingAttackMg" = 5, 0, 60, 2.0, 0.002, All;
    king_zone_hit_mg "KingZoneHitMg" = 0, 0, 40, 1.0, 0.002, All;
    safe_check_mg "SafeCheckMg" = 22, 0, 100, 3.0, 0.002, All;
    king_open_file_mg "KingOpenFileMg" = 26, 0, 80, 3.0, 0.002, All;
    castled_mg "CastledKingMg" = 37, 0, 100, 4.0, 0.002, All;
    castling_right_mg "CastlingRightMg" = 18, 0, 50, 2.0, 0.002, All;
    threat_pawn_mg "ThreatByPawnMg" = 55, 0, 150, 4.0, 0.002, All;
    threat_pawn_eg "ThreatByPawnEg" = 26, 0, 150, 4.0, 0.002, All;
    threat_minor_mg "ThreatByMinorMg" = 50, 0, 120, 3.0, 0.002, All;
    threat_minor_eg "ThreatByMinorEg" = 11, 0, 120, 3.0, 0.002, All;
    threat_rook_mg "ThreatByRookMg" = 51, 0, 120, 3.0, 0.002, All;
    threat_rook_eg "ThreatByRookEg" = 5, 0, 120, 3.0, 0.002, All;
    hanging_mg "HangingMg" = 19, 0, 150, 4.0, 0.002, All;
    hanging_eg "HangingEg" = 29, 0, 150, 4.0, 0.002, All;
    passer_their_king_eg "PasserTheirKingEg" = 9, 0, 40, 1.0, 0.002, All;
    passer_own_king_eg "PasserOwnKingEg" = 5, 0, 40, 1.0, 0.002, All;
    passer_blocked_eg "PasserBlockedEg" = 12, 0, 40, 1.0, 0.002, All;
    pst_scale "PstScale" = 121, 0, 200, 8.0, 0.002, All;
    // The piece-square shapes' weights per role and feature (see eval::pst).
    pst_pawn_rank_mg "PstPawnRankMg" = 2, -20, 30, 1.5, 0.002, All;
    pst_pawn_rank_eg "PstPawnRankEg" = 6, -20, 30, 1.5, 0.002, All;
    pst_pawn_centre_mg "PstPawnCentreMg" = 0, -20, 20, 1.5, 0.002, All;
    pst_pawn_centre_eg "PstPawnCentreEg" = -2, -20, 20, 1.5, 0.002, All;
    pst_pawn_central_mg "PstPawnCentralMg" = 14, -20, 50, 3.0, 0.002, All;
    pst_pawn_central_eg "PstPawnCentralEg" = 0, -20, 50, 3.0, 0.002, All;
    pst_knight_rank_mg "PstKnightRankMg" = 0, -20, 20, 1.5, 0.002, All;
    pst_knight_rank_eg "PstKnightRankEg" = 3, -20, 20, 1.5, 0.002, All;
    pst_knight_centre_mg "PstKnightCentreMg" = -10, -30, 20, 1.5, 0.002, All;
    pst_knight_centre_eg "PstKnightCentreEg" = -9, -30, 20, 1.5, 0.002, All;
    pst_bishop_rank_mg "PstBishopRankMg" = -3, -20, 20, 1.5, 0.002, All;
    pst_bishop_rank_eg "PstBishopRankEg" = 2, -20, 20, 1.5, 0.002, All;
    pst_bishop_centre_mg "PstBishopCentreMg" = -4, -30, 20, 1.5, 0.002, All;
    pst_bishop_centre_eg "PstBishopCentreEg" = -4, -30, 20, 1.5, 0.002, All;
    pst_rook_rank_mg "PstRookRankMg" = 4, -20, 20, 1.5, 0.002, All;
    pst_rook_rank_eg "PstRookRankEg" = 0, -20, 20, 1.5, 0.002, All;
    pst_rook_centre_mg "PstRookCentreMg" = 3, -20, 20, 1.5, 0.002, All;
    pst_rook_centre_eg "PstRookCentreEg" = -2, -20, 20, 1.5, 0.002, All;
    pst_rook_seventh_mg "PstRookSeventhMg" = -7, -20, 60, 3.0, 0.002, All;
    pst_rook_seventh_eg "PstRookSeventhEg" = 8, -20, 60, 3.0, 0.002, All;
    pst_rook_file_mg "PstRookFileMg" = -5, -20, 20, 1.5, 0.002, All;
    pst_rook_file_eg "PstRookFileEg" = 2, -20, 20, 1.5, 0.002, All;
    pst_queen_rank_mg "PstQueenRankMg" = -4, -20, 20, 1.5, 0.002, All;
    pst_queen_rank_eg "PstQueenRankEg" = 7, -20, 20, 1.5, 0.002, All;
    pst_queen_centre_mg "PstQueenCentreMg" = 2, -30, 20, 1.5, 0.002, All;
    pst_queen_centre_eg "PstQueenCentreEg" = -13, -30, 20, 1.5, 0.002, All;
    pst_king_rank_mg "PstKingRankMg" = -1, -40, 20, 1.5, 0.002, All;
    pst_king_rank_eg "PstKingRankEg" = 0, -40, 20, 1.5, 0.002, All;
    pst_king_centre_mg "PstKingCentreMg" = 4, -30, 20, 1.5, 0.002, All;
    pst_king_centre_eg "PstKingCentreEg" = -10, -30, 20, 1.5, 0.002, All;
    pst_king_back_mg "PstKingBackMg" = 4, -20, 50, 3.0, 0.002, All;
    pst_king_back_eg "PstKingBackEg" = -5, -20, 50, 3.0, 0.002, All;
    pst_king_wing_mg "PstKingWingMg" = 13, -20, 50, 3.0, 0.002, All;
    pst_king_wing_eg "PstKingWingEg" = 2, -20, 50, 3.0, 0.002, All;
    pst_secutor_rank_mg "PstSecutorRankMg" = 1, -20, 20, 1.5, 0.002, Secutor;
    pst_secutor_rank_eg "PstSecutorRankEg" = -8, -20, 20, 1.5, 0.002, Secutor;
    pst_secutor_centre_mg "PstSecutorCentreMg" = 2, -30, 20, 1.5, 0.002, Secutor;
    pst_secutor_centre_eg "PstSecutorCentreEg" = -3, -30, 20, 1.5, 0.002, Secutor;
    tempo "Tempo" = 35, 0, 50, 2.0, 0.002, All;
    // The weight in percent of the learned square tables of chess and Latte (see
    // eval::squares).
    square_table_scale "SquareTableScale" = 90, 0, 200, 8.0, 0.002, Board8;
    // The weight in percent of the small networks on top of chess's and Latte's evaluations
    // (see board8::net): half, as their SPRTs tested them (at full weight chess's lost).
    net_scale "NetScale" = 50, 0, 200, 8.0, 0.002, Board8;
    // The search's margins and reductions (see search/mod.rs): each is a guess about how far
    // a score can move in so many plies, which games measure better than reasoning.
    aspiration_window "AspirationWindow" = 25, 8, 80, 3.0, 0.002, All;
    rfp_margin "RfpMargin" = 75, 30, 150, 6.0, 0.002, All;
    razor_base "RazorBase" = 200, 50, 400, 15.0, 0.002, All;
    razor_depth "RazorDepth" = 150, 50, 300, 12.0, 0.002, All;
    null_move_divisor "NullMoveDivisor" = 200, 80, 400, 15.0, 0.002, All;
    lmp_base "LmpBase" = 3, 1, 10, 0.6, 0.002, All;
    futility_base "FutilityBase" = 100, 30, 250, 8.0, 0.002, All;
    futility_depth "FutilityDepth" = 100, 30, 250, 8.0, 0.002, All;
    history_prune "HistoryPruneDepth" = 3000, 500, 8000, 250.0, 0.002, All;
    see_quiet_margin "SeeQuietMargin" = 30, 5, 100, 3.0, 0.002, All;
    see_capture_margin "SeeCaptureMargin" = 100, 30, 250, 8.0, 0.002, All;
    lmr_base "LmrBase" = 75, 0, 200, 8.0, 0.002, All;
    lmr_divisor "LmrDivisor" = 225, 120, 400, 12.0, 0.002, All;
    lmr_history_divisor "LmrHistoryDivisor" = 8192, 2048, 32768, 600.0, 0.002, All;
    delta_margin "DeltaMargin" = 200, 50, 400, 15.0, 0.002, All;
    // Time management (see search/limits.rs and the iteration loop of search/mod.rs): how
    // much of the clock a move may take is a bet on the game's length and on how much a
    // deeper iteration changes the move, which only games at a clock can settle. Depth- and
    // node-limited searches (the bench, SPSA at fixed nodes) never read them.
    time_moves "TimeMovesToGo" = 18, 10, 60, 3.0, 0.002, All;
    time_inc_share "TimeIncShare" = 75, 25, 100, 6.0, 0.002, All;
    time_hard_factor "TimeHardFactor" = 300, 150, 600, 25.0, 0.002, All;
    time_stable1 "TimeStable1" = 90, 30, 100, 5.0, 0.002, All;
    time_stable2 "TimeStable2" = 75, 25, 100, 5.0, 0.002, All;
    time_stable3 "TimeStable3" = 60, 20, 100, 5.0, 0.002, All;
    time_score_drop "TimeScoreDrop" = 25, 0, 100, 5.0, 0.002, All;
    time_drop_margin "TimeDropMargin" = 30, 5, 150, 8.0, 0.002, All;
}

impl Params {
    /// The declaration of a parameter, by name (case-insensitive, as UCI option names are).
    pub fn spec(name: &str) -> Option<(usize, &'static ParamSpec)> {
        SPECS
            .iter()
            .enumerate()
            .find(|(_, s)| s.name.eq_ignore_ascii_case(name))
    }

    /// The value of a named parameter.
    pub fn get(&self, name: &str) -> Option<i32> {
        Self::spec(name).and_then(|(i, _)| self.value(i))
    }

    /// Sets a named parameter, refusing an unknown name or a value outside its range.
    pub fn set(&mut self, name: &str, value: i64) -> Result<(), ParamError> {
        let (index, spec) =
            Self::spec(name).ok_or_else(|| ParamError::Unknown(name.to_string()))?;
        if value < i64::from(spec.min) || value > i64::from(spec.max) {
            return Err(ParamError::OutOfRange {
                name: spec.name.to_string(),
                value,
                min: spec.min,
                max: spec.max,
            });
        }
        let slot = self
            .slot(index)
            .ok_or_else(|| ParamError::Unknown(name.to_string()))?;
        *slot = value as i32;
        Ok(())
    }

    /// Sets a named parameter from text.
    pub fn set_text(&mut self, name: &str, value: &str) -> Result<(), ParamError> {
        let v: i64 = value.trim().parse().map_err(|_| ParamError::NotANumber {
            name: name.to_string(),
            value: value.to_string(),
        })?;
        self.set(name, v)
    }

    /// Defaults overridden by a name=value map.
    pub fn from_map<'a>(
        values: impl IntoIterator<Item = (&'a str, i64)>,
    ) -> Result<Params, ParamError> {
        let mut p = Params::default();
        for (name, v) in values {
            p.set(name, v)?;
        }
        Ok(p)
    }

    /// Every parameter's current value by name.
    pub fn to_map(&self) -> BTreeMap<&'static str, i32> {
        SPECS
            .iter()
            .enumerate()
            .filter_map(|(i, s)| self.value(i).map(|v| (s.name, v)))
            .collect()
    }
}

/// The parameters that matter in `variant`.
pub fn specs_for(variant: Variant) -> impl Iterator<Item = &'static ParamSpec> {
    SPECS.iter().filter(move |s| s.scope.applies_to(variant))
}

/// UCI `option` lines of every parameter.
pub fn uci_options() -> String {
    let mut out = String::new();
    for s in SPECS {
        let _ = writeln!(
            out,
            "option name {} type spin default {} min {} max {}",
            s.name, s.default, s.min, s.max
        );
    }
    out
}

/// fishtest's SPSA lines, `name, default, min, max, c_end, r_end`, for `variant`.
pub fn spsa_lines(variant: Variant) -> String {
    let mut out = String::new();
    for s in specs_for(variant) {
        let _ = writeln!(
            out,
            "{}, {}, {}, {}, {}, {}",
            s.name, s.default, s.min, s.max, s.c_end, s.r_end
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_lie_within_bounds_and_names_are_unique() {
        let mut names = std::collections::HashSet::new();
        for s in SPECS {
            assert!(s.min <= s.default && s.default <= s.max, "{}", s.name);
            assert!(s.c_end > 0.0 && s.r_end >= 0.0, "{}", s.name);
            assert!(
                names.insert(s.name.to_ascii_lowercase()),
                "duplicate {}",
                s.name
            );
        }
    }

    #[test]
    fn set_checks_name_and_range() {
        let mut p = Params::default();
        p.set("knightvaluemg", 400).expect("in range");
        assert_eq!(p.knight_mg, 400);
        assert_eq!(p.get("KnightValueMg"), Some(400));
        assert_eq!(
            p.set("NoSuchThing", 1),
            Err(ParamError::Unknown("NoSuchThing".into()))
        );
        let e = p.set("KnightValueMg", 10_000).unwrap_err();
        assert!(matches!(
            e,
            ParamError::OutOfRange {
                min: 150,
                max: 600,
                ..
            }
        ));
        assert!(e.to_string().contains("KnightValueMg"));
        assert!(matches!(
            p.set_text("Tempo", "abc"),
            Err(ParamError::NotANumber { .. })
        ));
    }

    #[test]
    fn every_field_is_reachable_by_name() {
        let mut p = Params::default();
        for s in SPECS {
            p.set(s.name, i64::from(s.min)).expect("settable");
            assert_eq!(p.get(s.name), Some(s.min));
        }
        assert_eq!(p.to_map().len(), SPECS.len());
    }

    #[test]
    fn secutor_terms_only_in_secutor() {
        assert!(specs_for(Variant::Secutor).any(|s| s.name == "SecutorValueMg"));
        assert!(!specs_for(Variant::Latte).any(|s| s.name == "SecutorValueMg"));
        let first = format!(
            "PawnValueMg, {}, 40, 200, 6, 0.002",
            Params::default().pawn_mg
        );
        assert!(spsa_lines(Variant::Chess).starts_with(&first));
    }
}
