//! What a bench found, for people: pass@1 and pass@2 per language and overall with 95%
//! confidence intervals (over the repeats when there are several — one run proves little:
//! 20.9% of exercises changed outcome between two runs in little-coder's reproduction — or a
//! Wilson interval for one run), tokens and time per exercise (median and p90), the most
//! common refusal classes, and, for two labels, the exercises that flipped.

use std::collections::{BTreeMap, BTreeSet};

use super::results::Record;
use super::BenchError;

/// The report of one or more labels, as `slmcode bench report` prints it and `slmcode view`
/// serves it: built once, rendered as Markdown or as a page.
pub struct Report {
    pub summaries: Vec<Summary>,
    pub records: Vec<Vec<Record>>,
    /// For exactly two labels: the exercises that passed with one and not the other.
    pub flips: Option<Vec<(String, bool)>>,
    pub markdown: String,
}

impl Report {
    /// Reads each label's results under `results` (`<results>/<label>/*.jsonl`); a label
    /// without any is an error naming the command that makes them.
    pub fn build(results: &std::path::Path, labels: &[String]) -> Result<Report, BenchError> {
        if labels.is_empty() {
            return Err(BenchError::Usage(
                "name the label(s) to report: slmcode bench report LABEL [LABEL…]".into(),
            ));
        }
        let mut summaries = Vec::new();
        let mut all = Vec::new();
        for label in labels {
            let records = super::results::load(&results.join(label))?;
            if records.is_empty() {
                return Err(BenchError::Usage(format!(
                    "no results for {label} under {} (slmcode bench run … --label {label})",
                    results.display()
                )));
            }
            summaries.push(summarise(label, &records));
            all.push(records);
        }
        let flips = match all.as_slice() {
            [a, b] => Some(flipped(a, b)),
            _ => None,
        };
        let markdown = markdown(&summaries, flips.as_deref());
        Ok(Report {
            summaries,
            records: all,
            flips,
            markdown,
        })
    }

    /// The page with charts ([`super::html::page`]).
    pub fn html(&self) -> Result<String, BenchError> {
        super::html::page(
            &self.summaries,
            &self.records,
            &self.markdown,
            self.flips.as_deref(),
        )
        .map_err(|e| BenchError::Results(format!("the charts could not be drawn: {e}")))
    }
}

/// The labels that have results under `results`: its subdirectories, sorted.
pub fn labels(results: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(results)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    out.sort();
    out
}

/// A pass rate with its 95% interval, as fractions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// Exercise runs it counts.
    pub n: usize,
}

/// One label's numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub label: String,
    pub models: Vec<String>,
    pub repeats: usize,
    /// Per language, then `all`: (pass@1, pass@2).
    pub rates: BTreeMap<String, (Rate, Rate)>,
    pub tokens: (u64, u64),
    pub seconds: (f64, f64),
    /// Refusal classes by count, most first.
    pub refusals: Vec<(String, u32)>,
}

/// An exercise run: its attempts, as recorded.
struct Run<'a> {
    language: &'a str,
    exercise: &'a str,
    repeat: u32,
    attempts: Vec<&'a Record>,
}

impl Run<'_> {
    fn pass_at(&self, k: u32) -> bool {
        self.attempts.iter().any(|r| r.passed && r.attempt <= k)
    }
}

fn runs(records: &[Record]) -> Vec<Run<'_>> {
    let mut by: BTreeMap<(&str, &str, u32), Vec<&Record>> = BTreeMap::new();
    for r in records {
        by.entry((&r.language, &r.exercise, r.repeat))
            .or_default()
            .push(r);
    }
    by.into_iter()
        .map(|((language, exercise, repeat), attempts)| Run {
            language,
            exercise,
            repeat,
            attempts,
        })
        .collect()
}

/// Summarises one label's records.
pub fn summarise(label: &str, records: &[Record]) -> Summary {
    let runs = runs(records);
    let repeats: BTreeSet<u32> = runs.iter().map(|r| r.repeat).collect();
    let mut languages: BTreeSet<&str> = runs.iter().map(|r| r.language).collect();
    languages.insert("all");
    let mut rates = BTreeMap::new();
    for lang in languages {
        let mine: Vec<&Run> = runs
            .iter()
            .filter(|r| lang == "all" || r.language == lang)
            .collect();
        let rate = |k: u32| rate_of(&mine, &repeats, k);
        rates.insert(lang.to_string(), (rate(1), rate(2)));
    }
    let tokens: Vec<u64> = runs
        .iter()
        .map(|r| {
            r.attempts
                .iter()
                .map(|a| a.prompt_tokens + a.completion_tokens)
                .sum()
        })
        .collect();
    let seconds: Vec<f64> = runs
        .iter()
        .map(|r| r.attempts.iter().map(|a| a.wall_ms).sum::<u64>() as f64 / 1000.0)
        .collect();
    let mut refusals: BTreeMap<String, u32> = BTreeMap::new();
    for r in records {
        for (class, n) in &r.refusals {
            *refusals.entry(class.clone()).or_default() += n;
        }
    }
    let mut refusals: Vec<(String, u32)> = refusals.into_iter().collect();
    refusals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    refusals.truncate(5);
    let models: BTreeSet<String> = records.iter().map(|r| r.model.clone()).collect();
    Summary {
        label: label.to_string(),
        models: models.into_iter().collect(),
        repeats: repeats.len(),
        rates,
        tokens: (percentile_u(&tokens, 0.5), percentile_u(&tokens, 0.9)),
        seconds: (percentile(&seconds, 0.5), percentile(&seconds, 0.9)),
        refusals,
    }
}

/// pass@k over `runs`: with several repeats, the mean of each repeat's rate and a t interval;
/// with one, the rate and its Wilson interval.
fn rate_of(runs: &[&Run], repeats: &BTreeSet<u32>, k: u32) -> Rate {
    let n = runs.len();
    let passed = runs.iter().filter(|r| r.pass_at(k)).count();
    if repeats.len() < 2 {
        let (low, high) = wilson(passed, n);
        return Rate {
            value: if n == 0 {
                0.0
            } else {
                passed as f64 / n as f64
            },
            low,
            high,
            n,
        };
    }
    let per: Vec<f64> = repeats
        .iter()
        .map(|rep| {
            let mine: Vec<&&Run> = runs.iter().filter(|r| r.repeat == *rep).collect();
            let ok = mine.iter().filter(|r| r.pass_at(k)).count();
            if mine.is_empty() {
                0.0
            } else {
                ok as f64 / mine.len() as f64
            }
        })
        .collect();
    let m = per.len() as f64;
    let mean = per.iter().sum::<f64>() / m;
    let sd = (per.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
    let half = t_975(per.len() - 1) * sd / m.sqrt();
    Rate {
        value: mean,
        low: (mean - half).max(0.0),
        high: (mean + half).min(1.0),
        n,
    }
}

/// The Wilson score interval (95%) for `k` successes of `n`.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 0.0);
    }
    let z = 1.959_964f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Student's t at 97.5% for `df` degrees of freedom (1.96 past 30).
fn t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.96)
}

fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * q).round() as usize;
    v[i.min(v.len() - 1)]
}

fn percentile_u(values: &[u64], q: f64) -> u64 {
    let f: Vec<f64> = values.iter().map(|v| *v as f64).collect();
    percentile(&f, q) as u64
}

fn pct(r: &Rate) -> String {
    format!(
        "{:.1}% ({:.1}–{:.1})",
        r.value * 100.0,
        r.low * 100.0,
        r.high * 100.0
    )
}

/// The exercises whose pass@2 (in repeat 0) differs between two labels' records: (exercise,
/// passed in the first).
pub fn flipped(a: &[Record], b: &[Record]) -> Vec<(String, bool)> {
    let outcome = |records: &[Record]| -> BTreeMap<String, bool> {
        runs(records)
            .iter()
            .filter(|r| r.repeat == 0)
            .map(|r| (format!("{}/{}", r.language, r.exercise), r.pass_at(2)))
            .collect()
    };
    let (a, b) = (outcome(a), outcome(b));
    a.iter()
        .filter_map(|(ex, pa)| b.get(ex).filter(|pb| *pb != pa).map(|_| (ex.clone(), *pa)))
        .collect()
}

/// The Markdown report of one or more labels' summaries (and, for two, what flipped).
pub fn markdown(summaries: &[Summary], flips: Option<&[(String, bool)]>) -> String {
    let mut out = String::from("# slmcode bench\n\n");
    out.push_str("| label | model | repeats | language | exercises | pass@1 (95% CI) | pass@2 (95% CI) |\n|---|---|---|---|---|---|---|\n");
    for s in summaries {
        for (lang, (p1, p2)) in &s.rates {
            out.push_str(&format!(
                "| {} | {} | {} | {lang} | {} | {} | {} |\n",
                s.label,
                s.models.join(", "),
                s.repeats,
                p1.n,
                pct(p1),
                pct(p2)
            ));
        }
    }
    out.push_str("\n| label | tokens per exercise (median / p90) | seconds per exercise (median / p90) | most common refusals |\n|---|---|---|---|\n");
    for s in summaries {
        let refusals = if s.refusals.is_empty() {
            "none".to_string()
        } else {
            s.refusals
                .iter()
                .map(|(c, n)| format!("{c} ×{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| {} | {} / {} | {:.1} / {:.1} | {refusals} |\n",
            s.label, s.tokens.0, s.tokens.1, s.seconds.0, s.seconds.1
        ));
    }
    if let (Some(flips), [a, b, ..]) = (flips, summaries) {
        out.push_str(&format!(
            "\n{} exercise(s) flipped between {} and {} (pass@2, first repeat)",
            flips.len(),
            a.label,
            b.label
        ));
        out.push_str(if flips.is_empty() { ".\n" } else { ":\n\n" });
        for (ex, first) in flips {
            out.push_str(&format!(
                "- {ex}: {}\n",
                if *first {
                    format!("passes with {}, not {}", a.label, b.label)
                } else {
                    format!("passes with {}, not {}", b.label, a.label)
                }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(lang: &str, ex: &str, attempt: u32, repeat: u32, passed: bool) -> Record {
        Record {
            label: "l".into(),
            language: lang.into(),
            exercise: ex.into(),
            attempt,
            repeat,
            passed,
            status: "done".into(),
            turns: 2,
            prompt_tokens: 1000,
            completion_tokens: 100,
            cached_tokens: 0,
            wall_ms: 2000,
            rungs: BTreeMap::new(),
            refusals: if passed {
                BTreeMap::new()
            } else {
                [("not_found".to_string(), 1)].into_iter().collect()
            },
            run_id: String::new(),
            model: "m".into(),
            settings: serde_json::Value::Null,
            slmcode_version: "0".into(),
            suite_commit: None,
        }
    }

    #[test]
    fn wilson_matches_the_textbook() {
        // 8 of 10: the textbook's Wilson interval is 0.490–0.943.
        let (low, high) = wilson(8, 10);
        assert!(
            (low - 0.490).abs() < 0.001 && (high - 0.943).abs() < 0.001,
            "{low} {high}"
        );
        assert_eq!(wilson(0, 0), (0.0, 0.0));
    }

    #[test]
    fn pass_at_1_and_2_per_language_with_their_intervals() {
        let records = vec![
            rec("python", "a", 1, 0, true),
            rec("python", "b", 1, 0, false),
            rec("python", "b", 2, 0, true),
            rec("rust", "c", 1, 0, false),
            rec("rust", "c", 2, 0, false),
        ];
        let s = summarise("l", &records);
        let (p1, p2) = s.rates["python"];
        assert_eq!((p1.value, p2.value, p1.n), (0.5, 1.0, 2));
        let (a1, a2) = s.rates["all"];
        assert!((a1.value - 1.0 / 3.0).abs() < 1e-9 && (a2.value - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(a1.low, wilson(1, 3).0);
        // Per exercise: a=1100 tokens, b and c 2200; 2, 4 and 4 seconds.
        assert_eq!(s.tokens, (2200, 2200));
        assert_eq!(s.seconds, (4.0, 4.0));
        assert_eq!(s.refusals, vec![("not_found".to_string(), 3)]);
        let md = markdown(&[s], None);
        assert!(
            md.contains("| l | m | 1 | python | 2 | 50.0% (9.5–90.5) | 100.0% (34.2–100.0) |"),
            "{md}"
        );
    }

    #[test]
    fn repeats_give_a_t_interval_and_flips_are_found() {
        let records = vec![
            rec("python", "a", 1, 0, true),
            rec("python", "b", 1, 0, false),
            rec("python", "a", 1, 1, true),
            rec("python", "b", 1, 1, true),
        ];
        let s = summarise("l", &records);
        let (p1, _) = s.rates["all"];
        // Repeat rates 0.5 and 1.0: mean 0.75, sd 0.354, t(1) 12.706: the interval is wide.
        assert!((p1.value - 0.75).abs() < 1e-9);
        assert_eq!((p1.low, p1.high), (0.0, 1.0));
        let other = vec![
            rec("python", "a", 1, 0, false),
            rec("python", "a", 2, 0, false),
        ];
        assert_eq!(
            flipped(&records, &other),
            vec![("python/a".to_string(), true)]
        );
    }
}
