//! The bench report as a page: the same numbers as the Markdown, and charts drawn by
//! `plotters` into SVG — pass@1 and pass@2 per language for each label, side by side, and the
//! distributions of tokens and of time per exercise. One self-contained file, nothing fetched.

use plotters::prelude::*;

use super::report::Summary;
use super::results::Record;

/// Label colours, in order.
const COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
];

/// Text for HTML: `&`, `<`, `>`, `"` and `'` escaped (labels and exercise names are the
/// user's, results files can hold anything).
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Pass@1 and pass@2 per language, a group of bars per language, a bar pair per label.
fn pass_chart(summaries: &[Summary]) -> Result<String, String> {
    let mut languages: Vec<String> = summaries
        .iter()
        .flat_map(|s| s.rates.keys().cloned())
        .collect();
    languages.sort();
    languages.dedup();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let slots = languages.len() * (summaries.len() * 2 + 1);
        let mut chart = ChartBuilder::on(&root)
            .caption("pass@1 and pass@2 (%) per language", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(40)
            .build_cartesian_2d(0..slots, 0f64..100f64)
            .map_err(|e| e.to_string())?;
        let per = summaries.len() * 2 + 1;
        chart
            .configure_mesh()
            .disable_x_mesh()
            // A tick per slot; the language's name under the middle of its group.
            .x_labels(slots + 1)
            .x_label_formatter(&|x| {
                languages
                    .get(x / per)
                    .filter(|_| x % per == summaries.len())
                    .cloned()
                    .unwrap_or_default()
            })
            .draw()
            .map_err(|e| e.to_string())?;
        for (li, lang) in languages.iter().enumerate() {
            for (si, s) in summaries.iter().enumerate() {
                let Some((p1, p2)) = s.rates.get(lang) else {
                    continue;
                };
                let colour = COLOURS[si % COLOURS.len()];
                for (k, rate, fill) in [(0, p1, colour.mix(0.5)), (1, p2, colour.mix(1.0))] {
                    let x = li * per + si * 2 + k;
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x, 0.0), (x + 1, rate.value * 100.0)],
                            fill.filled(),
                        )))
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// A histogram of one number per exercise run, one series per label.
fn histogram(title: &str, series: &[(String, Vec<f64>)]) -> Result<String, String> {
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(1.0f64, f64::max);
    const BINS: usize = 12;
    let width = max / BINS as f64;
    let counts: Vec<Vec<u32>> = series
        .iter()
        .map(|(_, values)| {
            let mut c = vec![0u32; BINS];
            for v in values {
                c[((v / width) as usize).min(BINS - 1)] += 1;
            }
            c
        })
        .collect();
    let top = counts.iter().flatten().copied().max().unwrap_or(1).max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(40)
            .build_cartesian_2d(0f64..max * 1.0001, 0u32..top + 1)
            .map_err(|e| e.to_string())?;
        chart.configure_mesh().draw().map_err(|e| e.to_string())?;
        let n = series.len().max(1) as f64;
        for (si, c) in counts.iter().enumerate() {
            let colour = COLOURS[si % COLOURS.len()];
            chart
                .draw_series(c.iter().enumerate().map(|(b, count)| {
                    let x0 = b as f64 * width + width * si as f64 / n;
                    Rectangle::new(
                        [(x0, 0), (x0 + width / n, *count)],
                        colour.mix(0.8).filled(),
                    )
                }))
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The page: the labels' tables, the charts, what flipped.
pub fn page(
    summaries: &[Summary],
    records: &[Vec<Record>],
    markdown: &str,
    flips: Option<&[(String, bool)]>,
) -> Result<String, String> {
    let per_run = |rs: &[Record], f: &dyn Fn(&Record) -> f64| -> Vec<f64> {
        let mut by: std::collections::BTreeMap<(String, String, u32), f64> = Default::default();
        for r in rs {
            *by.entry((r.language.clone(), r.exercise.clone(), r.repeat))
                .or_default() += f(r);
        }
        by.into_values().collect()
    };
    let tokens: Vec<(String, Vec<f64>)> = summaries
        .iter()
        .zip(records)
        .map(|(s, rs)| {
            (
                s.label.clone(),
                per_run(rs, &|r| (r.prompt_tokens + r.completion_tokens) as f64),
            )
        })
        .collect();
    let seconds: Vec<(String, Vec<f64>)> = summaries
        .iter()
        .zip(records)
        .map(|(s, rs)| (s.label.clone(), per_run(rs, &|r| r.wall_ms as f64 / 1000.0)))
        .collect();
    let legend: String = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let RGBColor(r, g, b) = COLOURS[i % COLOURS.len()];
            format!(
                "<span style=\"color: rgb({r},{g},{b})\">■</span> {} ",
                escape(&s.label)
            )
        })
        .collect();
    let mut html = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"><title>slmcode bench</title>\n<style>body{font-family:sans-serif;max-width:60em;margin:2em auto} pre{white-space:pre-wrap;background:#f6f6f6;padding:1em}</style></head><body>\n",
    );
    html.push_str("<h1>slmcode bench</h1>\n");
    html.push_str(&format!("<p>{legend}(pass@1 lighter, pass@2 darker)</p>\n"));
    html.push_str(&pass_chart(summaries)?);
    html.push_str(&histogram("tokens per exercise", &tokens)?);
    html.push_str(&histogram("seconds per exercise", &seconds)?);
    if let Some(flips) = flips {
        html.push_str(&format!(
            "<h2>{} exercise(s) flipped</h2>\n<ul>\n",
            flips.len()
        ));
        for (ex, first) in flips {
            let (yes, no) = match (summaries.first(), summaries.get(1)) {
                (Some(a), Some(b)) if *first => (&a.label, &b.label),
                (Some(a), Some(b)) => (&b.label, &a.label),
                _ => continue,
            };
            html.push_str(&format!(
                "<li>{}: passes with {}, not {}</li>\n",
                escape(ex),
                escape(yes),
                escape(no)
            ));
        }
        html.push_str("</ul>\n");
    }
    html.push_str(&format!(
        "<h2>Tables</h2>\n<pre>{}</pre>\n",
        escape(markdown)
    ));
    html.push_str("</body></html>\n");
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_user_wrote_stays_text() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }
}
