//! A scaling model fitted to a report's rows: the Universal Scalability Law and Amdahl fits
//! ([`usl`], pure math) with their reading in sentences, and the one way every view (the
//! terminal table, Markdown, HTML) prints a fit. It lives beside the results model, not in
//! `scan`, because a [`crate::results::Report`] carries it and the exporters read it; `scan`
//! is today the one experiment that fits one (`scan::analysis`).

pub mod usl;

use crate::view::units::sig3;
use usl::Fit;

/// The fitted scaling model.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The Universal Scalability Law fit, or why there is none.
    pub usl: Result<Fit, String>,
    /// The Amdahl fit (κ = 0), or why there is none.
    pub amdahl: Result<Fit, String>,
    /// Unit of λ and of the throughput axis.
    pub unit: &'static str,
    /// One to three plain sentences on what the fit means.
    pub summary: Vec<String>,
}

/// `0.081 ± 0.004`, or the value alone without an error.
pub fn with_error(v: f64, err: Option<f64>) -> String {
    match err {
        Some(e) => format!("{} ± {}", sig3(v), sig3(e)),
        None => sig3(v),
    }
}

/// One line describing a fit: `λ = 3.1 ± 0.02 runs/s, σ = ..., κ = ..., R² = ..., N* = ...`.
pub fn fit_line(fit: &Fit, unit: &str, name: &str, amdahl: bool) -> String {
    let se = fit.std_errors;
    let mut parts = vec![
        format!("λ = {} {unit}", with_error(fit.lambda, se.map(|e| e[0]))),
        format!("σ = {}", with_error(fit.sigma, se.map(|e| e[1]))),
    ];
    if !amdahl {
        parts.push(format!("κ = {}", with_error(fit.kappa, se.map(|e| e[2]))));
    }
    parts.push(format!(
        "R² = {}",
        fit.r_squared
            .map_or_else(|| "–".into(), |r| format!("{r:.3}"))
    ));
    match (fit.peak(), fit.ceiling()) {
        (Some(p), _) if p < 1.0 => parts.push(format!("{name}* ≤ 1")),
        (Some(p), _) => parts.push(format!("{name}* = {}", sig3(p))),
        (None, Some(c)) => parts.push(format!("{name}* = ∞ (ceiling {} {unit})", sig3(c))),
        (None, None) => parts.push(format!("{name}* = ∞")),
    }
    parts.join(", ")
}

/// The model as plain text lines (used by the table and Markdown).
pub fn model_lines(model: &Model, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    match &model.usl {
        Ok(f) => out.push(format!("USL:    {}", fit_line(f, model.unit, name, false))),
        Err(e) => out.push(format!("USL:    no fit ({e})")),
    }
    match &model.amdahl {
        Ok(f) => out.push(format!("Amdahl: {}", fit_line(f, model.unit, name, true))),
        Err(e) => out.push(format!("Amdahl: no fit ({e})")),
    }
    out
}
