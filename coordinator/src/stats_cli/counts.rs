//! Parsing `W,D,L` and `a,b,c,d,e` count lists, with messages that name the problem.

use stats::{Pentanomial, Trinomial};

fn parse_list<const N: usize>(text: &str, names: &str) -> Result<[u64; N], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != N {
        return Err(format!(
            "expected {N} comma-separated counts ({names}), got {}",
            parts.len()
        ));
    }
    let mut out = [0u64; N];
    for (i, (slot, part)) in out.iter_mut().zip(&parts).enumerate() {
        let which = names.split(',').nth(i).unwrap_or("count");
        if part.is_empty() {
            return Err(format!("count {} ({which}) is empty", i + 1));
        }
        if part.starts_with('-') && part[1..].parse::<f64>().is_ok() {
            return Err(format!(
                "count {} ({which}) is negative: '{part}'; counts must be whole numbers ≥ 0",
                i + 1
            ));
        }
        *slot = part.parse::<u64>().map_err(|_| {
            format!(
                "count {} ({which}) is not a whole number ≥ 0: '{part}'",
                i + 1
            )
        })?;
    }
    Ok(out)
}

/// Parse `W,D,L` (wins, draws, losses of the tested engine).
pub(crate) fn parse_wdl(text: &str) -> Result<Trinomial, String> {
    let [wins, draws, losses] = parse_list::<3>(text, "wins,draws,losses")?;
    Ok(Trinomial {
        wins,
        draws,
        losses,
    })
}

/// Parse `a,b,c,d,e`: pairs scoring 0, ½, 1, 1½, 2 for the tested engine.
pub(crate) fn parse_ptnml(text: &str) -> Result<Pentanomial, String> {
    parse_list::<5>(text, "LL,LD,DD+WL,WD,WW").map(Pentanomial)
}

/// A finite real number (rejects `nan`, `inf`).
pub(crate) fn parse_finite(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(format!("'{text}' is not a finite number")),
    }
}

/// A probability strictly between 0 and 1.
pub(crate) fn parse_probability(text: &str) -> Result<f64, String> {
    let x = parse_finite(text)?;
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(format!("{x} is not strictly between 0 and 1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_explains() {
        assert_eq!(
            parse_wdl("5, 4,3").unwrap(),
            Trinomial {
                wins: 5,
                draws: 4,
                losses: 3
            }
        );
        assert_eq!(
            parse_ptnml("1,2,3,4,5").unwrap(),
            Pentanomial([1, 2, 3, 4, 5])
        );
        assert!(parse_wdl("1,2").unwrap_err().contains("expected 3"));
        assert!(parse_wdl("1,-2,3").unwrap_err().contains("negative"));
        assert!(parse_wdl("1,x,3")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_wdl("1,,3").unwrap_err().contains("empty"));
        assert!(parse_ptnml("1,2,3").unwrap_err().contains("expected 5"));
        assert!(parse_finite("nan").is_err());
        assert!(parse_probability("1").is_err());
    }
}
