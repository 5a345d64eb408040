//! The budget of a page of turns as a chart, drawn by `plotters` into SVG as the bench
//! report's charts are: per turn, the prompt (the part the server's cache served darker) with
//! the completion on top, and the speed in tokens a second beneath.

use plotters::prelude::*;

use super::model::Budget;

const CACHED: RGBColor = RGBColor(31, 119, 180);
const PROMPT: RGBColor = RGBColor(158, 202, 225);
const COMPLETION: RGBColor = RGBColor(255, 127, 14);
const SPEED: RGBColor = RGBColor(44, 160, 44);

/// The chart of `budgets` (one per reply; a turn asked twice has two), as an SVG document.
pub fn budget_svg(budgets: &[Budget]) -> Result<String, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (top, bottom) = root.split_vertically(200);
        let first = budgets.iter().map(|b| b.turn).min().unwrap_or(1);
        let last = budgets.iter().map(|b| b.turn).max().unwrap_or(1).max(first);
        let tokens = budgets
            .iter()
            .map(|b| b.prompt + b.completion)
            .max()
            .unwrap_or(0)
            .max(1);
        let mut chart = ChartBuilder::on(&top)
            .caption(
                "tokens per turn: prompt (cached darker), completion",
                ("sans-serif", 14),
            )
            .margin(6)
            .x_label_area_size(18)
            .y_label_area_size(56)
            .build_cartesian_2d(first..last + 1, 0u64..tokens + tokens / 10)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(10)
            .draw()
            .map_err(|e| err(&e))?;
        let bar = |turn: usize, from: u64, to: u64, colour: RGBColor| {
            Rectangle::new([(turn, from), (turn + 1, to)], colour.filled())
        };
        chart
            .draw_series(budgets.iter().flat_map(|b| {
                let cached = b.cached.min(b.prompt);
                [
                    bar(b.turn, 0, cached, CACHED),
                    bar(b.turn, cached, b.prompt, PROMPT),
                    bar(b.turn, b.prompt, b.prompt + b.completion, COMPLETION),
                ]
            }))
            .map_err(|e| err(&e))?;
        let fastest = budgets
            .iter()
            .map(|b| b.tokens_per_sec)
            .fold(0.0f64, f64::max)
            .max(1.0);
        let mut speed = ChartBuilder::on(&bottom)
            .caption("tokens/s", ("sans-serif", 12))
            .margin(6)
            .x_label_area_size(18)
            .y_label_area_size(56)
            .build_cartesian_2d(first as f64..(last + 1) as f64, 0f64..fastest * 1.1)
            .map_err(|e| err(&e))?;
        speed
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(10)
            .y_labels(3)
            .draw()
            .map_err(|e| err(&e))?;
        speed
            .draw_series(LineSeries::new(
                budgets
                    .iter()
                    .map(|b| (b.turn as f64 + 0.5, b.tokens_per_sec)),
                SPEED.stroke_width(2),
            ))
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_is_svg_even_with_nothing_to_draw() {
        let svg = budget_svg(&[
            Budget {
                turn: 1,
                prompt: 900,
                cached: 800,
                completion: 50,
                tokens_per_sec: 12.5,
            },
            Budget {
                turn: 2,
                prompt: 1200,
                cached: 900,
                completion: 20,
                tokens_per_sec: 11.0,
            },
        ])
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(svg.contains("tokens per turn"));
        assert!(budget_svg(&[]).unwrap().starts_with("<svg"));
    }
}
