//! Small, dependency-free SVG charts for self-contained reports: line charts with optional
//! confidence bands and reference lines, and bar charts with error bars. Plotting crates
//! need font machinery to lay out text; these charts only place `<text>` elements, which any
//! browser renders, so a report opens anywhere without network or fonts installed.

use std::fmt::Write as _;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 320.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 32.0;
const BOTTOM: f64 = 44.0;

/// Colours for successive series (colour-blind safe palette).
const PALETTE: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#f0e442", "#000000",
];

/// One line of a line chart, with an optional band (x, low, high) drawn behind it.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points (x, y), in x order.
    pub points: Vec<(f64, f64)>,
    /// Confidence band (x, low, high), in x order.
    pub band: Vec<(f64, f64, f64)>,
}

/// A line chart.
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// Label under the x axis.
    pub x_label: String,
    /// Label beside the y axis.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// Horizontal reference lines (y, label), e.g. SPRT bounds.
    pub hlines: Vec<(f64, String)>,
}

/// One bar with an optional interval.
#[derive(Debug, Clone, Default)]
pub struct Bar {
    /// Label under the bar.
    pub label: String,
    /// Height.
    pub value: f64,
    /// Interval (low, high), drawn as an error bar.
    pub interval: Option<(f64, f64)>,
}

/// A bar chart.
#[derive(Debug, Clone, Default)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// Label beside the y axis.
    pub y_label: String,
    /// The bars.
    pub bars: Vec<Bar>,
    /// Horizontal reference line, e.g. 50 %.
    pub reference: Option<(f64, String)>,
}

/// Escapes text for XML/HTML content and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// "Nice" tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
fn ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 50 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn fmt_tick(v: f64) -> String {
    if v.abs() >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Maps data coordinates to the plot area.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn new(xs: impl Iterator<Item = f64> + Clone, ys: impl Iterator<Item = f64> + Clone) -> Frame {
        let fin = |it: &mut dyn Iterator<Item = f64>| {
            it.filter(|v| v.is_finite())
                .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)))
        };
        let (mut x0, mut x1) = fin(&mut xs.clone());
        let (mut y0, mut y1) = fin(&mut ys.clone());
        if x0 > x1 {
            (x0, x1) = (0.0, 1.0);
        }
        if y0 > y1 {
            (y0, y1) = (0.0, 1.0);
        }
        if x1 - x0 < 1e-12 {
            x1 = x0 + 1.0;
        }
        if y1 - y0 < 1e-12 {
            y0 -= 1.0;
            y1 += 1.0;
        }
        let pad = (y1 - y0) * 0.05;
        Frame {
            x0,
            x1,
            y0: y0 - pad,
            y1: y1 + pad,
        }
    }

    fn x(&self, v: f64) -> f64 {
        LEFT + (v - self.x0) / (self.x1 - self.x0) * (WIDTH - LEFT - RIGHT)
    }

    fn y(&self, v: f64) -> f64 {
        HEIGHT - BOTTOM - (v - self.y0) / (self.y1 - self.y0) * (HEIGHT - TOP - BOTTOM)
    }
}

fn open(svg: &mut String, title: &str, x_label: &str, y_label: &str) {
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12" role="img"><title>{t}</title><rect width="100%" height="100%" fill="white"/><text x="{cx}" y="18" text-anchor="middle" font-size="14" font-weight="bold">{t}</text><text x="{cx}" y="{xl}" text-anchor="middle">{x}</text><text x="14" y="{cy}" text-anchor="middle" transform="rotate(-90 14 {cy})">{y}</text>"#,
        t = escape(title),
        cx = WIDTH / 2.0,
        xl = HEIGHT - 8.0,
        x = escape(x_label),
        cy = HEIGHT / 2.0,
        y = escape(y_label),
    );
}

fn axes(svg: &mut String, f: &Frame, x_ticks: bool) {
    for t in ticks(f.y0, f.y1, 6) {
        let y = f.y(t);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{x2}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{tx}" y="{ty:.1}" text-anchor="end">{v}</text>"##,
            x2 = WIDTH - RIGHT,
            tx = LEFT - 6.0,
            ty = y + 4.0,
            v = fmt_tick(t)
        );
    }
    if x_ticks {
        for t in ticks(f.x0, f.x1, 8) {
            let x = f.x(t);
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{y1}" y2="{y2}" stroke="#999"/><text x="{x:.1}" y="{ty}" text-anchor="middle">{v}</text>"##,
                y1 = HEIGHT - BOTTOM,
                y2 = HEIGHT - BOTTOM + 4.0,
                ty = HEIGHT - BOTTOM + 16.0,
                v = fmt_tick(t)
            );
        }
    }
    let _ = write!(
        svg,
        r##"<rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="#333"/>"##,
        w = WIDTH - LEFT - RIGHT,
        h = HEIGHT - TOP - BOTTOM
    );
}

/// A dashed horizontal line across the plot with its label at the right end.
fn reference_line(svg: &mut String, f: &Frame, y: f64, label: &str) {
    let py = f.y(y);
    let _ = write!(
        svg,
        r##"<line x1="{LEFT}" x2="{x2}" y1="{py:.1}" y2="{py:.1}" stroke="#555" stroke-dasharray="6 4"/><text x="{tx}" y="{ty:.1}" text-anchor="end" fill="#555">{l}</text>"##,
        x2 = WIDTH - RIGHT,
        tx = WIDTH - RIGHT - 4.0,
        ty = py - 4.0,
        l = escape(label)
    );
}

/// Renders a line chart. Empty series give an empty, labelled frame.
pub fn line_chart(chart: &LineChart) -> String {
    let xs = chart.series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.0)
            .chain(s.band.iter().map(|b| b.0))
    });
    let ys = chart
        .series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.band.iter().flat_map(|b| [b.1, b.2]))
        })
        .chain(chart.hlines.iter().map(|h| h.0));
    let f = Frame::new(
        xs.collect::<Vec<_>>().into_iter(),
        ys.collect::<Vec<_>>().into_iter(),
    );
    let mut svg = String::new();
    open(&mut svg, &chart.title, &chart.x_label, &chart.y_label);
    axes(&mut svg, &f, true);
    for (i, s) in chart.series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let band: Vec<_> = s
            .band
            .iter()
            .filter(|b| b.0.is_finite() && b.1.is_finite() && b.2.is_finite())
            .collect();
        if band.len() > 1 {
            let mut d = String::new();
            for (j, b) in band.iter().enumerate() {
                let _ = write!(
                    d,
                    "{}{:.1},{:.1} ",
                    if j == 0 { "M" } else { "L" },
                    f.x(b.0),
                    f.y(b.2)
                );
            }
            for b in band.iter().rev() {
                let _ = write!(d, "L{:.1},{:.1} ", f.x(b.0), f.y(b.1));
            }
            let _ = write!(
                svg,
                r#"<path d="{d}Z" fill="{colour}" fill-opacity="0.15" stroke="none"/>"#
            );
        }
        let pts: Vec<String> = s
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .map(|p| format!("{:.1},{:.1}", f.x(p.0), f.y(p.1)))
            .collect();
        if !pts.is_empty() {
            let _ = write!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                pts.join(" ")
            );
        }
        let _ = write!(
            svg,
            r#"<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colour}"/><text x="{tx}" y="{ty}">{n}</text>"#,
            lx = LEFT + 8.0,
            ly = TOP + 6.0 + 16.0 * i as f64,
            tx = LEFT + 22.0,
            ty = TOP + 15.0 + 16.0 * i as f64,
            n = escape(&s.name)
        );
    }
    for (y, label) in &chart.hlines {
        reference_line(&mut svg, &f, *y, label);
    }
    svg.push_str("</svg>");
    svg
}

/// Renders a bar chart with error bars.
pub fn bar_chart(chart: &BarChart) -> String {
    let ys: Vec<f64> = chart
        .bars
        .iter()
        .flat_map(|b| {
            let (lo, hi) = b.interval.unwrap_or((b.value, b.value));
            [b.value, lo, hi]
        })
        .chain(chart.reference.iter().map(|r| r.0))
        .chain(std::iter::once(0.0))
        .collect();
    let n = chart.bars.len().max(1) as f64;
    let f = Frame::new([0.0, n].into_iter(), ys.into_iter());
    let mut svg = String::new();
    open(&mut svg, &chart.title, "", &chart.y_label);
    axes(&mut svg, &f, false);
    let slot = (WIDTH - LEFT - RIGHT) / n;
    for (i, b) in chart.bars.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let x = LEFT + slot * (i as f64 + 0.2);
        let (top, base) = (f.y(b.value.max(0.0)), f.y(b.value.min(0.0)));
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="{top:.1}" width="{w:.1}" height="{h:.1}" fill="{colour}" fill-opacity="0.8"/><text x="{cx:.1}" y="{ly}" text-anchor="middle">{l}</text>"#,
            w = slot * 0.6,
            h = (base - top).max(0.0),
            cx = x + slot * 0.3,
            ly = HEIGHT - BOTTOM + 16.0,
            l = escape(&b.label)
        );
        if let Some((lo, hi)) = b
            .interval
            .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
        {
            let cx = x + slot * 0.3;
            let _ = write!(
                svg,
                r##"<line x1="{cx:.1}" x2="{cx:.1}" y1="{y1:.1}" y2="{y2:.1}" stroke="#222" stroke-width="1.5"/><line x1="{a:.1}" x2="{b:.1}" y1="{y1:.1}" y2="{y1:.1}" stroke="#222"/><line x1="{a:.1}" x2="{b:.1}" y1="{y2:.1}" y2="{y2:.1}" stroke="#222"/>"##,
                y1 = f.y(lo),
                y2 = f.y(hi),
                a = cx - 6.0,
                b = cx + 6.0
            );
        }
    }
    if let Some((y, label)) = &chart.reference {
        reference_line(&mut svg, &f, *y, label);
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(-3.7, 2.9, 6);
        assert!(t.first().is_some_and(|v| *v >= -3.7) && t.last().is_some_and(|v| *v <= 2.9));
        assert_eq!(ticks(1.0, 1.0, 5), vec![1.0]);
    }

    #[test]
    fn charts_escape_text_and_survive_degenerate_data() {
        let chart = LineChart {
            title: "a <b> & c".into(),
            series: vec![Series {
                name: "x\"y".into(),
                points: vec![(0.0, f64::NAN), (1.0, 2.0)],
                band: vec![],
            }],
            hlines: vec![(2.94, "upper".into())],
            ..LineChart::default()
        };
        let svg = line_chart(&chart);
        assert!(svg.contains("a &lt;b&gt; &amp; c") && svg.contains("x&quot;y"));
        assert!(!svg.contains("NaN"));
        assert!(line_chart(&LineChart::default()).starts_with("<svg"));
        let bars = bar_chart(&BarChart {
            bars: vec![Bar {
                label: "luft".into(),
                value: 0.55,
                interval: Some((0.5, 0.6)),
            }],
            reference: Some((0.5, "50%".into())),
            ..BarChart::default()
        });
        assert!(bars.contains("luft") && bars.ends_with("</svg>"));
    }
}
