//! Parameter files: what `engine tune-weights --out` writes and every tool that takes a
//! parameter set reads (`engine tune-weights --params`, `engine tune-squares --params`,
//! `worker match --params1`, a plan's `options_file`): a JSON object of names to integers, or
//! lines `name=value` (`name value` also works; `#` starts a comment).
//!
//! The format belongs to the engine's parameters, so it is parsed here once; each tool adds
//! the path to the error it reports.

use thiserror::Error;

use crate::params::{ParamError, Params};

/// One assignment of a parameters file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The 1-based line it stands on (`None` in a JSON object, which has no lines to name).
    pub line: Option<usize>,
    /// The parameter's name as written.
    pub name: String,
    /// Its value as written.
    pub value: String,
}

/// What is wrong with a parameters file, at which line when it has lines.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{}{detail}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ParamsFileError {
    /// 1-based line, when the file is a list of lines.
    pub line: Option<usize>,
    /// What is wrong.
    pub detail: String,
}

impl ParamsFileError {
    fn new(line: Option<usize>, detail: impl Into<String>) -> ParamsFileError {
        ParamsFileError {
            line,
            detail: detail.into(),
        }
    }
}

/// Parses the text of a parameters file into its assignments, in order; names and values are
/// not checked against the engine's parameters here (a UCI engine's options are not ours).
pub fn parse(text: &str) -> Result<Vec<Entry>, ParamsFileError> {
    if text.trim_start().starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ParamsFileError::new(None, format!("invalid JSON: {e}")))?;
        let Some(object) = value.as_object() else {
            return Err(ParamsFileError::new(
                None,
                "expected a JSON object of name: integer",
            ));
        };
        return object
            .iter()
            .map(|(k, v)| match v.as_i64() {
                Some(n) => Ok(Entry {
                    line: None,
                    name: k.clone(),
                    value: n.to_string(),
                }),
                None => Err(ParamsFileError::new(
                    None,
                    format!("value of {k:?} is not an integer: {v}"),
                )),
            })
            .collect();
    }
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let malformed =
            || ParamsFileError::new(Some(i + 1), format!("expected name=value, found {line:?}"));
        let (name, value) = line
            .split_once('=')
            .or_else(|| line.split_once(char::is_whitespace))
            .ok_or_else(malformed)?;
        let (name, value) = (name.trim(), value.trim());
        if name.is_empty() || value.is_empty() {
            return Err(malformed());
        }
        out.push(Entry {
            line: Some(i + 1),
            name: name.to_string(),
            value: value.to_string(),
        });
    }
    Ok(out)
}

/// The engine's defaults with a parameters file's assignments applied: refuses an unknown
/// name, a value that is not a number or out of its range, naming the line.
pub fn params_from(text: &str) -> Result<Params, ParamsFileError> {
    let mut params = Params::default();
    for e in parse(text)? {
        params
            .set_text(&e.name, &e.value)
            .map_err(|err: ParamError| ParamsFileError::new(e.line, err.to_string()))?;
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_json_read_alike() {
        let lines = parse("# tuned\nPawnValueMg=90\nTempo 14 # more\n\n").expect("valid");
        assert_eq!(
            lines,
            [
                Entry {
                    line: Some(2),
                    name: "PawnValueMg".into(),
                    value: "90".into()
                },
                Entry {
                    line: Some(3),
                    name: "Tempo".into(),
                    value: "14".into()
                },
            ]
        );
        let json = parse(r#"{"PawnValueMg": 90}"#).expect("valid");
        assert_eq!(json[0].name, "PawnValueMg");
        assert_eq!(json[0].line, None);
    }

    #[test]
    fn malformed_files_name_the_line_and_the_problem() {
        for (text, needle) in [
            ("Tempo=14\nPawnValueMg\n", "line 2: expected name=value"),
            ("=3\n", "line 1: expected name=value"),
            ("Tempo=\n", "line 1: expected name=value"),
            (r#"{"Tempo": "x"}"#, "is not an integer"),
            (r#"{"Tempo": 1"#, "invalid JSON"),
        ] {
            let err = parse(text).expect_err(text).to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_parameter_set_is_the_defaults_with_the_file_applied() {
        let p = params_from("Tempo=30\n").expect("valid");
        assert_eq!(p.get("Tempo"), Some(30));
        assert_eq!(
            p.get("PawnValueMg"),
            Params::default().get("PawnValueMg"),
            "the rest stays"
        );
        for (text, needle) in [
            ("Tempo=30\nNoSuchWeight=1\n", "line 2"),
            ("Tempo=x\n", "line 1"),
            ("Tempo=100000\n", "line 1"),
        ] {
            let err = params_from(text).expect_err(text).to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
