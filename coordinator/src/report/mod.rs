//! Self-contained reports: one HTML file with inline CSS and SVG charts, viewable offline.
//! This module only renders; what goes into a report is decided by the run kinds.

pub mod charts;
pub mod json;
pub mod study;
pub mod svg;

use std::fmt::Write as _;

pub use svg::{bar_chart, escape, line_chart, Bar, BarChart, LineChart, Series};

/// A block of a report section.
#[derive(Debug, Clone)]
pub enum Block {
    /// A paragraph of plain text.
    Text(String),
    /// A table: header cells and rows of cells (plain text).
    Table {
        /// Column headers.
        headers: Vec<String>,
        /// Rows.
        rows: Vec<Vec<String>>,
    },
    /// A rendered SVG chart.
    Svg(String),
    /// Preformatted text (e.g. the terminal summary).
    Pre(String),
}

/// A titled section.
#[derive(Debug, Clone)]
pub struct Section {
    /// Heading.
    pub heading: String,
    /// Content.
    pub blocks: Vec<Block>,
}

const STYLE: &str = "body{font-family:sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}pre{background:#f8f8f8;padding:1em;overflow-x:auto}\
svg{max-width:100%;height:auto;display:block;margin:1em 0}.sub{color:#666}";

/// Renders the page.
pub fn html_page(title: &str, subtitle: &str, sections: &[Section]) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1><p class=\"sub\">{s}</p>",
        t = escape(title),
        s = escape(subtitle)
    );
    for section in sections {
        let _ = write!(out, "<h2>{}</h2>", escape(&section.heading));
        for block in &section.blocks {
            match block {
                Block::Text(t) => {
                    let _ = write!(out, "<p>{}</p>", escape(t));
                }
                Block::Pre(t) => {
                    let _ = write!(out, "<pre>{}</pre>", escape(t));
                }
                Block::Svg(s) => out.push_str(s),
                Block::Table { headers, rows } => {
                    out.push_str("<table><tr>");
                    for h in headers {
                        let _ = write!(out, "<th>{}</th>", escape(h));
                    }
                    out.push_str("</tr>");
                    for row in rows {
                        out.push_str("<tr>");
                        for c in row {
                            let _ = write!(out, "<td>{}</td>", escape(c));
                        }
                        out.push_str("</tr>");
                    }
                    out.push_str("</table>");
                }
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_escaped() {
        let page = html_page(
            "Run <1>",
            "latte / both",
            &[Section {
                heading: "Elo".into(),
                blocks: vec![
                    Block::Text("5 & 6".into()),
                    Block::Table {
                        headers: vec!["a".into()],
                        rows: vec![vec!["<x>".into()]],
                    },
                    Block::Svg(line_chart(&LineChart::default())),
                ],
            }],
        );
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(
            page.contains("Run &lt;1&gt;")
                && page.contains("5 &amp; 6")
                && page.contains("&lt;x&gt;")
        );
        assert!(page.contains("<svg"));
        // Nothing fetched from the network.
        assert!(
            !page.contains("http://")
                || page.matches("http://").count()
                    == page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        assert!(!page.contains("https://"));
    }
}
