//! MLPerf Endpoints' concurrency regions: a curve over concurrency from C_min to C_max cut
//! into Ultra-Low (C_min), Low, Medium and High, each region needing a point (rules draft
//! v1.0 of 2026-05-05, endpoints_policies 00135a00: I = log2(C_max − C_min) / 3; Low runs
//! from C_min + 1 to round(C_min + 2^I), Medium to round(C_min + 2^(2I)), High to C_max;
//! banker's rounding; 7 to 32 points).

use crate::arrivals::LoadError;

/// A region of the curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    UltraLow,
    Low,
    Medium,
    High,
}

impl Region {
    pub fn name(self) -> &'static str {
        match self {
            Region::UltraLow => "Ultra-Low",
            Region::Low => "Low",
            Region::Medium => "Medium",
            Region::High => "High",
        }
    }
}

/// The most points a curve may have.
pub const MOST_POINTS: usize = 32;

/// The regions' inclusive concurrency ranges, in order.
pub fn regions(c_min: usize, c_max: usize) -> Result<[(Region, usize, usize); 4], LoadError> {
    if !(1..=32).contains(&c_min) || c_max <= 32 || c_max <= c_min {
        return Err(LoadError::Regions { c_min, c_max });
    }
    let i = ((c_max - c_min) as f64).log2() / 3.0;
    let end = |power: f64| (c_min as f64 + 2f64.powf(power)).round_ties_even() as usize;
    let low_end = end(i).max(c_min + 1);
    let medium_end = end(2.0 * i).max(low_end + 1);
    Ok([
        (Region::UltraLow, c_min, c_min),
        (Region::Low, c_min + 1, low_end),
        (Region::Medium, low_end + 1, medium_end),
        (Region::High, medium_end + 1, c_max),
    ])
}

/// `per_region` concurrencies in each of Low, Medium and High (geometrically spaced, the
/// last at the region's end) after C_min: 1 + 3 × `per_region` points, each with its region.
pub fn region_points(
    c_min: usize,
    c_max: usize,
    per_region: usize,
) -> Result<Vec<(usize, Region)>, LoadError> {
    let ranges = regions(c_min, c_max)?;
    let per_region = per_region.max(1);
    if 1 + 3 * per_region > MOST_POINTS {
        return Err(LoadError::TooManyPoints(1 + 3 * per_region));
    }
    let mut points = vec![(c_min, Region::UltraLow)];
    for &(region, from, to) in &ranges[1..] {
        for j in 1..=per_region {
            // From just above the previous region's end to this region's end.
            let below = (from - 1) as f64;
            let at = (below * (to as f64 / below).powf(j as f64 / per_region as f64)).round();
            let at = (at as usize).clamp(from, to);
            if points.last().is_none_or(|&(last, _)| at > last) {
                points.push((at, region));
            }
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_follow_the_rules_arithmetic() {
        // C_min 1, C_max 512: I = log2(511)/3 = 2.9986; Low ends at round(1 + 7.99) = 9,
        // Medium at round(1 + 63.83) = 65.
        let ranges = regions(1, 512).unwrap();
        assert_eq!(
            ranges,
            [
                (Region::UltraLow, 1, 1),
                (Region::Low, 2, 9),
                (Region::Medium, 10, 65),
                (Region::High, 66, 512),
            ]
        );
        // C_min 4, C_max 68: I = 2; Low ends at 8, Medium at 20.
        let ranges = regions(4, 68).unwrap();
        assert_eq!((ranges[1].2, ranges[2].2, ranges[3].2), (8, 20, 68));
        assert_eq!(
            regions(0, 64),
            Err(LoadError::Regions {
                c_min: 0,
                c_max: 64
            })
        );
        assert!(regions(33, 64).is_err());
        assert!(regions(1, 32).is_err());
    }

    #[test]
    fn points_cover_every_region_and_end_at_c_max() {
        let points = region_points(1, 512, 2).unwrap();
        let concurrencies: Vec<usize> = points.iter().map(|p| p.0).collect();
        assert_eq!(concurrencies, vec![1, 3, 9, 24, 65, 182, 512]);
        let regions: Vec<Region> = points.iter().map(|p| p.1).collect();
        assert_eq!(
            regions,
            vec![
                Region::UltraLow,
                Region::Low,
                Region::Low,
                Region::Medium,
                Region::Medium,
                Region::High,
                Region::High
            ]
        );
        assert_eq!(region_points(1, 64, 1).unwrap().len(), 4);
        assert!(region_points(1, 512, 11).is_err());
    }
}
