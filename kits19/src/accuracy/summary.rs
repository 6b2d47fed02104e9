//! Per-case rows, the `mean` row and the printed line, as
//! `save_evaluation_summary` and the end of `main()` produce them.

use super::pyfmt::python_repr;
use super::pysum::numpy_sum;

#[derive(Clone, Debug, PartialEq)]
pub struct CaseScore {
    pub case: String,
    pub kidney: f64,
    pub tumor: f64,
    /// `np.mean([kidney, tumor])`.
    pub composite: f64,
}

impl CaseScore {
    pub fn new(case: impl Into<String>, kidney: f64, tumor: f64) -> Self {
        // np.mean of two values: pairwise sum (0 + k) + t, then / 2
        let composite = numpy_sum(&[kidney, tumor]) / 2.0;
        Self {
            case: case.into(),
            kidney,
            tumor,
            composite,
        }
    }
}

/// Rows in case-list order plus the column means.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub cases: Vec<CaseScore>,
    pub mean_kidney: f64,
    pub mean_tumor: f64,
    pub mean_composite: f64,
}

impl Summary {
    /// `df.loc["mean"] = df.fillna(0).mean()`: a NaN counts as 0 and still
    /// counts in the denominator (the reference's "a crash scores zero").
    pub fn new(cases: Vec<CaseScore>) -> Self {
        let mean = |f: fn(&CaseScore) -> f64| {
            let col: Vec<f64> = cases
                .iter()
                .map(f)
                .map(|v| if v.is_nan() { 0.0 } else { v })
                .collect();
            numpy_sum(&col) / col.len() as f64
        };
        Self {
            mean_kidney: mean(|c| c.kidney),
            mean_tumor: mean(|c| c.tumor),
            mean_composite: mean(|c| c.composite),
            cases,
        }
    }

    /// The line the reference prints and the MLPerf checker greps.
    pub fn accuracy_line(&self) -> String {
        format!(
            "Accuracy: mean = {:.5}, kidney = {:.4}, tumor = {:.4}",
            self.mean_composite, self.mean_kidney, self.mean_tumor
        )
    }

    /// `summary.csv` byte for byte as pandas writes it (NaN as an empty cell).
    pub fn to_csv(&self) -> String {
        let cell = |v: f64| {
            if v.is_nan() {
                String::new()
            } else {
                python_repr(v)
            }
        };
        let mut s = String::from("case,kidney,tumor,composite\n");
        for c in &self.cases {
            s += &format!(
                "{},{},{},{}\n",
                c.case,
                cell(c.kidney),
                cell(c.tumor),
                cell(c.composite)
            );
        }
        s += &format!(
            "mean,{},{},{}\n",
            cell(self.mean_kidney),
            cell(self.mean_tumor),
            cell(self.mean_composite)
        );
        s
    }
}
