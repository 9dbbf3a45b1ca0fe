//! The chart's rows drawn as a self-contained SVG: no script, no external font or image, every
//! bar's whole story in a `<title>` (a viewer's tooltip).

use super::layout::{Chart, Kind, Row};
use super::words;
use seq_exec::engine::{GroupStatus, ItemStatus};
use std::fmt::Write;

const MARGIN: f64 = 16.0;
/// The column of labels, left of the axis.
const LABEL_W: f64 = 280.0;
const CHART_W: f64 = 840.0;
/// Right of the axis: room for the duration written after a bar that reaches the end.
const TAIL_W: f64 = 60.0;
const ROW_H: f64 = 20.0;
/// Each further line of a wrapped label adds this to its row.
const LINE_H: f64 = 14.0;
/// A label longer than its column wraps onto at most this many lines (the whole name is in
/// the tooltip).
const MAX_LABEL_LINES: usize = 4;
const BAR_H: f64 = 12.0;
/// Where the first row starts: below the title, the legend and the axis labels.
const TOP: f64 = 96.0;
/// Average advance of a character of the 12 px labels, to cut labels to their column.
const CHAR_W: f64 = 7.0;
const INDENT: f64 = 14.0;
/// Average advance of a character of the 11 px texts after a bar.
const REASON_W: f64 = 6.2;
/// A failure's reason goes before its bar when fewer characters fit after it.
const MIN_REASON_CHARS: usize = 24;
/// The narrowest bar drawn: a 0 ms item is still seen.
const MIN_BAR: f64 = 1.5;
const FONT: &str = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif";

/// Colours by status, the same in the legend and on the bars.
fn item_colour(status: ItemStatus) -> &'static str {
    match status {
        ItemStatus::Ok => "#3b9b5b",
        ItemStatus::Failed => "#d1453b",
        ItemStatus::Skipped => "#b4b4b4",
        ItemStatus::Degraded => "#e09b2d",
        ItemStatus::Cancelled => "#8a74c0",
        // A failure kept as data: the run went on as if it succeeded.
        ItemStatus::Caught => "#2f8f9d",
    }
}

fn group_colour(status: GroupStatus) -> &'static str {
    match status {
        GroupStatus::Ran => "#3b9b5b",
        GroupStatus::Skipped => "#b4b4b4",
        GroupStatus::Failed => "#d1453b",
        GroupStatus::Partial => "#e09b2d",
        GroupStatus::Cancelled => "#8a74c0",
    }
}

const AGGREGATE: &str = "#4a78b5";

/// A row as drawn: its label's lines and where it starts.
struct Placed<'a> {
    row: &'a Row,
    lines: Vec<String>,
    y: f64,
}

impl Placed<'_> {
    fn height(&self) -> f64 {
        ROW_H + LINE_H * self.lines.len().saturating_sub(1) as f64
    }
}

/// The SVG of `chart`.
pub fn render(chart: &Chart) -> String {
    let width = MARGIN * 2.0 + LABEL_W + CHART_W + TAIL_W;
    let mut y = TOP;
    let placed: Vec<Placed<'_>> = chart
        .rows
        .iter()
        .map(|row| {
            let placed = Placed {
                row,
                lines: wrap(&row.label, label_room(row.depth), MAX_LABEL_LINES),
                y,
            };
            y += placed.height();
            placed
        })
        .collect();
    let height = y + MARGIN;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"{FONT}\" font-size=\"12\">"
    );
    svg.push_str(concat!(
        r#"<defs><pattern id="retried" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">"#,
        r##"<rect width="6" height="6" fill="#f0a8a2"/><rect width="3" height="6" fill="#d1453b"/></pattern></defs>"##
    ));
    let _ = write!(
        svg,
        r##"<rect width="{width}" height="{height}" fill="#ffffff"/><text class="title" x="{MARGIN}" y="26" font-size="15" font-weight="bold" fill="#222">{}</text>"##,
        escape(&chart.title)
    );
    legend(&mut svg);
    let scale = Scale {
        end_ms: chart.end_ms,
    };
    bands(&mut svg, &placed, width);
    axis(&mut svg, &scale, height);
    for row in &placed {
        draw_row(&mut svg, row, &scale, width);
    }
    svg.push_str("</svg>\n");
    svg
}

struct Scale {
    end_ms: u64,
}

impl Scale {
    fn x(&self, ms: u64) -> f64 {
        MARGIN + LABEL_W + CHART_W * (ms as f64 / self.end_ms.max(1) as f64)
    }

    fn width(&self, duration_ms: u64) -> f64 {
        (CHART_W * (duration_ms as f64 / self.end_ms.max(1) as f64)).max(MIN_BAR)
    }
}

fn legend(svg: &mut String) {
    let entries: [(&str, &str); 7] = [
        ("ok / ran", item_colour(ItemStatus::Ok)),
        ("failed", item_colour(ItemStatus::Failed)),
        ("degraded / partial", item_colour(ItemStatus::Degraded)),
        ("skipped", item_colour(ItemStatus::Skipped)),
        ("cancelled", item_colour(ItemStatus::Cancelled)),
        ("caught", item_colour(ItemStatus::Caught)),
        ("many items (in flight)", AGGREGATE),
    ];
    svg.push_str(r#"<g class="legend">"#);
    let mut x = MARGIN;
    let y = 42.0;
    for (label, colour) in entries {
        let _ = write!(
            svg,
            r##"<rect x="{x}" y="{y}" width="12" height="12" fill="{colour}"/><text x="{}" y="{}" fill="#333">{label}</text>"##,
            x + 16.0,
            y + 10.0
        );
        x += 16.0 + CHAR_W * label.chars().count() as f64 + 14.0;
    }
    let _ = write!(
        svg,
        r##"<rect x="{x}" y="{y}" width="12" height="12" fill="url(#retried)"/><text x="{}" y="{}" fill="#333">attempt retried</text>"##,
        x + 16.0,
        y + 10.0
    );
    x += 16.0 + CHAR_W * 15.0 + 14.0;
    let _ = write!(
        svg,
        r##"<rect x="{x}" y="{y}" width="12" height="12" fill="#ffffff" stroke="#111" stroke-width="2"/><text x="{}" y="{}" fill="#333">slowest path</text>"##,
        x + 16.0,
        y + 10.0
    );
    svg.push_str("</g>\n");
}

/// Every group of the run, its called groups and items, on a band of its own shade.
fn bands(svg: &mut String, rows: &[Placed<'_>], width: f64) {
    let starts: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, placed)| placed.row.depth == 0)
        .map(|(n, _)| n)
        .collect();
    let bottom = rows.last().map_or(TOP, |last| last.y + last.height());
    for (k, &start) in starts.iter().enumerate() {
        let top = rows[start].y;
        let stop = starts.get(k + 1).map_or(bottom, |&next| rows[next].y);
        let shade = if k % 2 == 0 { "#f3f5f8" } else { "#ffffff" };
        let _ = writeln!(
            svg,
            "<rect class=\"band\" x=\"{MARGIN}\" y=\"{top}\" width=\"{}\" height=\"{}\" fill=\"{shade}\"/>",
            width - 2.0 * MARGIN,
            stop - top
        );
    }
}

/// Gridlines at round times, labelled above the first row.
fn axis(svg: &mut String, scale: &Scale, height: f64) {
    let step = tick_step(scale.end_ms);
    svg.push_str(r#"<g class="axis">"#);
    let mut at = 0;
    while at <= scale.end_ms {
        let x = scale.x(at);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{}" stroke="#d8dce2" stroke-width="1"/><text x="{x:.1}" y="{}" fill="#555" text-anchor="middle" font-size="11">{}</text>"##,
            TOP - 6.0,
            height - MARGIN,
            TOP - 10.0,
            words::duration(at)
        );
        // A report's times are the user's: near `u64::MAX` the next tick is past the end.
        match at.checked_add(step) {
            Some(next) => at = next,
            None => break,
        }
    }
    svg.push_str("</g>\n");
}

/// A round step that gives 4 to 10 ticks: 1, 2 or 5 times a power of ten.
fn tick_step(end_ms: u64) -> u64 {
    let mut power = 1u64;
    loop {
        for factor in [1, 2, 5] {
            let step = power.saturating_mul(factor);
            if end_ms / step <= 8 {
                return step.max(1);
            }
        }
        power = power.saturating_mul(10);
    }
}

fn draw_row(svg: &mut String, placed: &Placed<'_>, scale: &Scale, width: f64) {
    let (row, y) = (placed.row, placed.y);
    let (class, colour) = match row.kind {
        Kind::Group(status) => ("group", group_colour(status)),
        Kind::Item(status) => ("item", item_colour(status)),
        Kind::Aggregate => ("aggregate", AGGREGATE),
    };
    let status = match row.kind {
        Kind::Group(status) => status.as_str(),
        Kind::Item(status) => status.as_str(),
        Kind::Aggregate => "many",
    };
    let critical = if row.critical { " critical" } else { "" };
    let _ = write!(
        svg,
        r#"<g class="row {class} {status}{critical}" data-depth="{}"><title>{}</title>"#,
        row.depth,
        escape(&row.detail)
    );
    let label_x = label_x(row.depth);
    let weight = if row.depth == 0 { "bold" } else { "normal" };
    let _ = write!(
        svg,
        r##"<text class="label" x="{label_x}" y="{}" font-weight="{weight}" fill="#222">"##,
        y + 14.0
    );
    // One line is the text itself; a wrapped label's lines are spans one under another.
    match placed.lines.as_slice() {
        [line] => svg.push_str(&escape(line)),
        lines => {
            for (n, line) in lines.iter().enumerate() {
                let dy = if n == 0 { 0.0 } else { LINE_H };
                let _ = write!(
                    svg,
                    r#"<tspan x="{label_x}" dy="{dy}">{}</tspan>"#,
                    escape(line)
                );
            }
        }
    }
    svg.push_str("</text>");
    let x = scale.x(row.started_ms);
    let w = scale.width(row.duration_ms);
    match row.kind {
        Kind::Group(_) => {
            let _ = write!(
                svg,
                r#"<rect class="bar" x="{x:.1}" y="{:.1}" width="{w:.1}" height="{}" fill="{colour}" fill-opacity="0.25" stroke="{colour}" stroke-width="1.5"/>"#,
                y + 2.0,
                ROW_H - 4.0
            );
        }
        Kind::Item(_) => item_bar(svg, row, y, x, w, colour, scale),
        Kind::Aggregate => profile(svg, row, y),
    }
    // The duration after the bar (an aggregate's is in its tooltip: its profile fills the row).
    if row.kind != Kind::Aggregate {
        let duration = words::duration(row.duration_ms);
        let _ = write!(
            svg,
            r##"<text class="duration" x="{:.1}" y="{}" font-size="11" fill="#444">{duration}</text>"##,
            x + w + 4.0,
            y + 14.0,
        );
        if let Some(reason) = &row.reason {
            let after = x + w + 4.0 + REASON_W * (duration.chars().count() + 2) as f64;
            reason_text(svg, reason, after, x, y, width);
        }
    }
    svg.push_str("</g>\n");
}

/// Why a row failed, written after its bar and duration when there is room to the right,
/// else before its bar, cut to the room there (the whole of it is in the tooltip).
fn reason_text(svg: &mut String, reason: &str, after: f64, bar_x: f64, y: f64, width: f64) {
    let right = ((width - MARGIN - after) / REASON_W) as usize;
    let left = ((bar_x - 4.0 - (MARGIN + LABEL_W)) / REASON_W) as usize;
    let (x, anchor, room) = if right >= MIN_REASON_CHARS || right >= left {
        (after, "start", right)
    } else {
        (bar_x - 4.0, "end", left)
    };
    if room < 2 {
        return;
    }
    let _ = write!(
        svg,
        r##"<text class="reason" x="{x:.1}" y="{}" font-size="11" fill="#a3281f" text-anchor="{anchor}">{}</text>"##,
        y + 14.0,
        escape(&cut(reason, room))
    );
}

/// Where a label at `depth` starts.
fn label_x(depth: usize) -> f64 {
    MARGIN + 6.0 + INDENT * depth as f64
}

/// How many characters a line of a label at `depth` holds.
fn label_room(depth: usize) -> usize {
    ((MARGIN + LABEL_W - 8.0 - label_x(depth)) / CHAR_W).max(4.0) as usize
}

/// `text` in lines of at most `room` characters, broken after a space, `/`, `-`, `_` or `.`
/// where one is near, else anywhere; past `max` lines the last is cut with an ellipsis.
fn wrap(text: &str, room: usize, max: usize) -> Vec<String> {
    let room = room.max(1);
    let chars: Vec<char> = text.chars().collect();
    let mut lines = Vec::new();
    let mut start = 0;
    while chars.len() - start > room {
        if lines.len() + 1 == max {
            let rest: String = chars[start..].iter().collect();
            lines.push(cut(&rest, room));
            return lines;
        }
        let window = &chars[start..start + room];
        // Break after the last separator in the line's second half, if any.
        let at = window
            .iter()
            .rposition(|c| matches!(c, ' ' | '/' | '-' | '_' | '.'))
            .filter(|&p| p + 1 >= room / 2)
            .map_or(room, |p| p + 1);
        lines.push(
            chars[start..start + at]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_owned(),
        );
        start += at;
    }
    lines.push(chars[start..].iter().collect());
    lines
}

fn item_bar(svg: &mut String, row: &Row, y: f64, x: f64, w: f64, colour: &str, scale: &Scale) {
    let top = y + (ROW_H - BAR_H) / 2.0;
    let outline = if row.critical {
        r##" stroke="#111" stroke-width="2""##
    } else {
        ""
    };
    if row.subs.is_empty() {
        let _ = write!(
            svg,
            r#"<rect class="bar" x="{x:.1}" y="{top:.1}" width="{w:.1}" height="{BAR_H}" rx="2" fill="{colour}"{outline}/>"#
        );
        return;
    }
    // Retried: the pauses between attempts as a thin line, each attempt a bar of its own.
    let _ = write!(
        svg,
        r#"<rect class="bar" x="{x:.1}" y="{:.1}" width="{w:.1}" height="2" fill="{colour}"{outline}/>"#,
        y + ROW_H / 2.0 - 1.0
    );
    for sub in &row.subs {
        let fill = if sub.failed { "url(#retried)" } else { colour };
        let _ = write!(
            svg,
            r#"<rect class="attempt{}" x="{:.1}" y="{top:.1}" width="{:.1}" height="{BAR_H}" rx="2" fill="{fill}"{outline}><title>{}</title></rect>"#,
            if sub.failed { " retried" } else { "" },
            scale.x(sub.started_ms),
            scale.width(sub.duration_ms),
            escape(&sub.label)
        );
    }
}

/// An aggregate row: how many of its items are in flight, column by column.
fn profile(svg: &mut String, row: &Row, y: f64) {
    let peak = f64::from(row.profile.iter().copied().max().unwrap_or(0).max(1));
    let column = CHART_W / row.profile.len().max(1) as f64;
    let bottom = y + ROW_H - 2.0;
    let mut path = format!("M{:.1} {bottom:.1}", MARGIN + LABEL_W);
    for (n, &count) in row.profile.iter().enumerate() {
        let top = bottom - (ROW_H - 4.0) * (f64::from(count) / peak);
        let x0 = MARGIN + LABEL_W + column * n as f64;
        let _ = write!(path, " L{x0:.1} {top:.1} L{:.1} {top:.1}", x0 + column);
    }
    let _ = write!(path, " L{:.1} {bottom:.1} Z", MARGIN + LABEL_W + CHART_W);
    let _ = write!(
        svg,
        r#"<path class="profile" d="{path}" fill="{AGGREGATE}" fill-opacity="0.8"/>"#
    );
}

/// `text` cut to `room` characters, with an ellipsis when cut.
fn cut(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_owned();
    }
    let kept: String = text.chars().take(room.saturating_sub(1)).collect();
    format!("{kept}…")
}

/// Text for an element's content or a quoted attribute: names and errors are the user's.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters and the noncharacters U+FFFE and U+FFFF are not XML 1.0
            // characters: a document holding one is not well formed.
            c if (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{fffe}' | '\u{ffff}') =>
            {
                out.push('\u{fffd}')
            }
            c => out.push(c),
        }
    }
    out
}
