//! What each attention head does on the current input, measured on its softmax weights
//! (`layers.L.attn.probs`, [nH, T, S]): how much weight a query puts on the token before it
//! (previous-token head), on itself (current-token head), on the first token (the attention
//! sink), and how evenly it spreads over what it can see (a broad head).
//!
//! The position scores follow tools/train/head_stats.py, which named the built-in model's heads:
//! the mean over query rows that have at least two visible keys before their own, so that first,
//! previous and current are three different keys (on an unpadded causal input: query positions 2
//! and later). A head is previous-token, current-token or first-token when that score is over 0.5, and
//! weakly so when it is the largest of the three and at least 0.3 (head_stats.json's "(weak)").
//! A head that keeps more weight on one and the same key whatever the query (a punctuation mark, say:
//! the mean weight on that key, over the rows that see it, at least 0.3) than on any of the three
//! positions is a fixed-token head: its label then says what its map shows (a weak first-token score
//! beside a stronger pull to a comma is the comma's head). Where that key is the first one, the two
//! scores are equal and the head stays first-token. A head with none of these, whose rows are nearly
//! uniform (mean normalised entropy at least 0.8), is broad; anything else is mixed.
//!
//! Which keys a query row sees comes from the run's masks (`MaskSpec`): causal keys after it and
//! padding keys are not visible, padded query rows are not counted, and with a KV-cache prefix
//! query row i sits at key position prefix_len + i. "Previous" and "first" are the nearest and the
//! earliest visible keys before the query, so left or inner padding does not hide the pattern.

use ndarray::ArrayView3;
use serde::Serialize;

use crate::model::attention::MaskSpec;

/// A position score over this makes the role; head_stats.json's threshold.
pub const STRONG: f32 = 0.5;
/// The largest position score at least this makes a weak role; head_stats.json's "(weak)".
pub const WEAK: f32 = 0.3;
/// How much more than the best position score the fixed key's must be for a fixed-token head.
pub const FIXED_MARGIN: f32 = 0.01;
/// Mean normalised entropy at least this, with no position role, makes a broad head.
pub const BROAD: f32 = 0.8;

/// One head's measures on one input: mean weights on the previous, current and first visible key,
/// and the mean entropy of a row divided by its largest possible value, ln(visible keys), so a
/// uniform row scores 1. `rows` is how many query rows were measured. `fixed` is the largest mean
/// weight one key position gets from the measured rows that see it (a key seen by fewer than half of
/// them does not count), and `fixed_key` that position (None when pooled over several inputs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HeadScores {
    pub previous: f32,
    pub current: f32,
    pub first: f32,
    pub spread: f32,
    pub rows: usize,
    pub fixed: f32,
    pub fixed_key: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Previous,
    Current,
    First,
    Fixed,
    Broad,
    Mixed,
}

/// A head's role with the score that decided it (the position score, or the spread for broad and
/// mixed heads), whether it is strong (position score over 0.5), and all of its measures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HeadRole {
    pub role: Role,
    pub score: f32,
    pub strong: bool,
    pub scores: HeadScores,
}

/// A measured query row: row `i` of the probs sits at key position `at`; `previous` and `first` are
/// the nearest and earliest keys it sees before itself, `seen` how many keys it sees in all.
struct Row {
    i: usize,
    at: usize,
    previous: usize,
    first: usize,
    seen: usize,
}

/// The measures of every head of one layer, or None for a head (all heads alike) when no query
/// row has two visible keys before it: the input is too short to tell.
pub fn measure(probs: ArrayView3<f32>, mask: &MaskSpec) -> Vec<Option<HeadScores>> {
    measure_rows(probs, mask, 0..probs.dim().1)
}

/// Query rows per stretch, where a long input's roles are also measured stretch by stretch.
pub const STRETCH: usize = 64;
/// An input with at least this many query rows has its roles measured by stretch too.
pub const LONG: usize = 3 * STRETCH;

/// One stretch of query rows [from, to) and the head's role over them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stretch {
    pub from: usize,
    pub to: usize,
    #[serde(flatten)]
    pub role: HeadRole,
}

/// Where a long input's heads change what they do: each head's roles over stretches of STRETCH
/// query rows (the last one takes the rest), neighbours of the same role merged and measured again
/// as one. A head's habit over a whole long text can hide two halves: previous-token while the text
/// is no longer than what the model was trained on, spread thin after it. One Vec per head, empty
/// for an input under LONG rows or a head too short to tell.
pub fn stretches(probs: ArrayView3<f32>, mask: &MaskSpec) -> Vec<Vec<Stretch>> {
    let (heads, t, _) = probs.dim();
    if t < LONG {
        return vec![Vec::new(); heads];
    }
    let bounds: Vec<usize> = (0..t / STRETCH).map(|k| k * STRETCH).chain([t]).collect();
    let parts: Vec<Vec<Option<HeadScores>>> = bounds.windows(2).map(|w| measure_rows(probs, mask, w[0]..w[1])).collect();
    (0..heads)
        .map(|h| {
            let mut merged: Vec<(usize, usize, Role)> = Vec::new();
            for (k, part) in parts.iter().enumerate() {
                let Some(role) = part[h].map(|s| s.role().role) else { continue };
                match merged.last_mut() {
                    Some(last) if last.2 == role => last.1 = bounds[k + 1],
                    _ => merged.push((bounds[k], bounds[k + 1], role)),
                }
            }
            merged.into_iter().filter_map(|(from, to, _)| measure_rows(probs, mask, from..to)[h].map(|s| Stretch { from, to, role: s.role() })).collect()
        })
        .collect()
}

/// `measure` over the query rows in `range` only.
pub fn measure_rows(probs: ArrayView3<f32>, mask: &MaskSpec, range: std::ops::Range<usize>) -> Vec<Option<HeadScores>> {
    let (heads, _, s) = probs.dim();
    let visible = |i: usize, j: usize| mask.bias(i, j) == 0.0;
    let rows: Vec<Row> = range
        .filter_map(|i| {
            let at = mask.prefix_len + i;
            if at >= s || !visible(i, at) {
                return None; // a padded query row, or a row with no key of its own
            }
            let before: Vec<usize> = (0..at).filter(|&j| visible(i, j)).collect();
            if before.len() < 2 {
                return None;
            }
            let seen = before.len() + 1 + (at + 1..s).filter(|&j| visible(i, j)).count();
            Some(Row { i, at, previous: before[before.len() - 1], first: before[0], seen })
        })
        .collect();
    if rows.is_empty() {
        return vec![None; heads];
    }
    let n = rows.len() as f32;
    (0..heads)
        .map(|h| {
            let (mut previous, mut current, mut first, mut spread) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
            for r in &rows {
                let row = probs.slice(ndarray::s![h, r.i, ..]);
                previous += row[r.previous];
                current += row[r.at];
                first += row[r.first];
                let entropy: f32 = (0..s).filter(|&j| visible(r.i, j) && row[j] > 0.0).map(|j| -row[j] * row[j].ln()).sum();
                spread += entropy / (r.seen as f32).ln();
            }
            let (fixed, fixed_key) = fixed_key(probs, h, &rows, &visible);
            Some(HeadScores { previous: previous / n, current: current / n, first: first / n, spread: spread / n, rows: rows.len(), fixed, fixed_key: Some(fixed_key) })
        })
        .collect()
}

/// The key position that keeps the most weight, on average over the measured rows that see it, and
/// that weight; keys seen by fewer than half of the rows (late keys, under the causal mask) are left
/// out, so a single row cannot make a key "fixed".
fn fixed_key(probs: ArrayView3<f32>, h: usize, rows: &[Row], visible: &impl Fn(usize, usize) -> bool) -> (f32, usize) {
    let s = probs.dim().2;
    let mut best = (0.0f32, 0);
    for j in 0..s {
        let (mut sum, mut seen) = (0.0f32, 0usize);
        for r in rows.iter().filter(|r| visible(r.i, j)) {
            sum += probs[[h, r.i, j]];
            seen += 1;
        }
        if 2 * seen >= rows.len() && seen > 0 && sum / seen as f32 > best.0 {
            best = (sum / seen as f32, j);
        }
    }
    best
}

impl HeadScores {
    /// The row-weighted mean of several inputs' measures (as head_stats.py pools its text windows).
    pub fn pooled(all: &[HeadScores]) -> Option<HeadScores> {
        let rows: usize = all.iter().map(|s| s.rows).sum();
        if rows == 0 {
            return None;
        }
        let mean = |f: fn(&HeadScores) -> f32| all.iter().map(|s| f(s) * s.rows as f32).sum::<f32>() / rows as f32;
        Some(HeadScores { previous: mean(|s| s.previous), current: mean(|s| s.current), first: mean(|s| s.first), spread: mean(|s| s.spread), rows, fixed: mean(|s| s.fixed), fixed_key: None })
    }

    pub fn role(self) -> HeadRole {
        let positions = [(Role::Previous, self.previous), (Role::Current, self.current), (Role::First, self.first)];
        let best = positions.into_iter().fold((Role::Mixed, f32::MIN), |best, p| if p.1 > best.1 { p } else { best });
        // The fixed key outranks the positions only by a visible margin (the badge's two decimals): where
        // it is the first key its score is the first-token score, up to rounding, and the head stays first-token.
        let (role, score) = if self.fixed > best.1 + FIXED_MARGIN { (Role::Fixed, self.fixed) } else { best };
        if score >= WEAK {
            return HeadRole { role, score, strong: score > STRONG, scores: self };
        }
        let role = if self.spread >= BROAD { Role::Broad } else { Role::Mixed };
        HeadRole { role, score: self.spread, strong: false, scores: self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    const CAUSAL: MaskSpec<'static> = MaskSpec { causal: true, prefix_len: 0, padding: None };

    /// One head of t x t weights from a function of (query, key), each row normalised over the
    /// keys the mask lets it see (an all-zero row stays zero, as a padded row's would be near).
    fn head(t: usize, mask: &MaskSpec, f: impl Fn(usize, usize) -> f32) -> Array3<f32> {
        let mut p = Array3::from_shape_fn((1, t, t), |(_, i, j)| if mask.bias(i, j) == 0.0 { f(i, j) } else { 0.0 });
        for i in 0..t {
            let sum: f32 = p.slice(ndarray::s![0, i, ..]).sum();
            if sum > 0.0 {
                p.slice_mut(ndarray::s![0, i, ..]).mapv_inplace(|v| v / sum);
            }
        }
        p
    }

    fn one(t: usize, mask: &MaskSpec, f: impl Fn(usize, usize) -> f32) -> HeadScores {
        measure(head(t, mask, f).view(), mask)[0].expect("long enough to measure")
    }

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-5
    }

    #[test]
    fn a_long_input_says_where_a_head_changes() {
        // Previous-token for the first 128 rows, then uniform over what it sees: the whole text's
        // measure mixes the two, the stretches say each half.
        let p = head(320, &CAUSAL, |i, j| if i < 128 { if j + 1 == i || (i == 0 && j == 0) { 1.0 } else { 0.0 } } else { 1.0 });
        let st = &stretches(p.view(), &CAUSAL)[0];
        assert_eq!(st.iter().map(|s| (s.from, s.to, s.role.role)).collect::<Vec<_>>(), vec![(0, 128, Role::Previous), (128, 320, Role::Broad)], "{st:?}");
        assert!(st[0].role.score > 0.99, "{st:?}");
        // One role all along: a single stretch; a short input: none.
        let steady = head(320, &CAUSAL, |i, j| if j + 1 == i || (i == 0 && j == 0) { 1.0 } else { 0.0 });
        assert_eq!(stretches(steady.view(), &CAUSAL)[0].len(), 1);
        assert!(stretches(head(LONG - 1, &CAUSAL, |_, _| 1.0).view(), &CAUSAL)[0].is_empty());
    }

    #[test]
    fn a_pure_previous_token_head_scores_one() {
        let s = one(8, &CAUSAL, |i, j| if j + 1 == i || (i == 0 && j == 0) { 1.0 } else { 0.0 });
        assert!(close(s.previous, 1.0) && close(s.current, 0.0) && close(s.first, 0.0), "{s:?}");
        assert_eq!(s.rows, 6, "rows 0 and 1 have fewer than two keys before them");
        let r = s.role();
        assert_eq!((r.role, r.strong), (Role::Previous, true));
        assert!(close(r.score, 1.0));
        assert!(close(s.spread, 0.0), "one-hot rows have no entropy: {}", s.spread);
    }

    #[test]
    fn a_pure_current_token_head_is_current() {
        let r = one(6, &CAUSAL, |i, j| if i == j { 1.0 } else { 0.0 }).role();
        assert_eq!((r.role, r.strong), (Role::Current, true));
        assert!(close(r.score, 1.0));
    }

    #[test]
    fn a_head_on_the_first_token_is_a_sink() {
        let r = one(6, &CAUSAL, |_, j| if j == 0 { 1.0 } else { 0.0 }).role();
        assert_eq!((r.role, r.strong), (Role::First, true));
        assert!(close(r.score, 1.0));
    }

    #[test]
    fn a_head_that_keeps_to_one_middle_key_is_a_fixed_token_head() {
        // Every row that sees key 3 puts 0.9 on it, the rest evenly; rows before it are uniform.
        let s = one(10, &CAUSAL, |i, j| if i >= 3 { if j == 3 { 9.0 * i as f32 } else { 1.0 } } else { 1.0 });
        assert_eq!(s.fixed_key, Some(3), "{s:?}");
        let r = s.role();
        assert_eq!((r.role, r.strong), (Role::Fixed, true), "{r:?}");
        assert!(r.score > 0.8, "{r:?}");
    }

    /// A weak first-token score beside a stronger pull to one later key: the label names the key's pull,
    /// as the map shows it (rows that see key 4 put 0.5 on it and 0.35 on the first key).
    #[test]
    fn a_stronger_fixed_key_outranks_a_weak_position() {
        let s = one(12, &CAUSAL, |i, j| if i >= 4 { [0.35, 0.5][(j == 4) as usize] * (j == 0 || j == 4) as u8 as f32 + 0.15 / (i as f32 - 1.0) * (j != 0 && j != 4) as u8 as f32 } else { (j == 0) as u8 as f32 });
        assert_eq!(s.fixed_key, Some(4), "{s:?}");
        assert!(s.first >= WEAK && s.first < s.fixed, "{s:?}");
        let r = s.role();
        assert_eq!(r.role, Role::Fixed, "{r:?}");
        assert!(close(r.score, s.fixed));
        // The first key as the fixed one is the same weight as the first-token score: first-token.
        let r = one(10, &CAUSAL, |_, j| if j == 0 { 3.0 } else { 1.0 }).role();
        assert_eq!(r.role, Role::First, "{r:?}");
    }

    #[test]
    fn a_key_few_rows_see_cannot_be_the_fixed_one() {
        // Only the last row sees key 9 and puts everything on it: too few rows to call it fixed.
        let s = one(10, &CAUSAL, |i, j| if i == 9 { if j == 9 { 1.0 } else { 0.0 } } else { 1.0 });
        assert_ne!(s.fixed_key, Some(9), "{s:?}");
    }

    #[test]
    fn a_uniform_head_is_broad_with_spread_one() {
        let s = one(10, &CAUSAL, |_, _| 1.0);
        // Row i sees i + 1 keys, so each position score is the mean of 1 / (i + 1) over rows 2..10.
        let expected = (2..10).map(|i| 1.0 / (i as f32 + 1.0)).sum::<f32>() / 8.0;
        assert!(close(s.previous, expected) && close(s.first, expected) && close(s.current, expected), "{s:?}");
        assert!(close(s.spread, 1.0), "{}", s.spread);
        let r = s.role();
        assert_eq!(r.role, Role::Broad);
        assert!(close(r.score, 1.0));
    }

    #[test]
    fn a_split_head_under_the_weak_threshold_is_mixed() {
        // Weight split between the keys two and three steps back (the first rows on themselves): no
        // position role, far from uniform.
        let back = |i: usize, j: usize| if i >= 4 { j + 2 == i || j + 3 == i } else { j == i };
        let r = one(12, &CAUSAL, |i, j| back(i, j) as u8 as f32).role();
        assert_eq!(r.role, Role::Mixed, "{r:?}");
    }

    #[test]
    fn the_largest_score_over_point_three_is_a_weak_role() {
        let r = one(8, &CAUSAL, |i, j| if j + 1 == i { 0.4 } else if j == i { 0.35 } else if j + 2 == i { 0.25 } else { 0.0 }).role();
        assert_eq!((r.role, r.strong), (Role::Previous, false), "{r:?}");
    }

    #[test]
    fn inputs_too_short_to_tell_are_not_measured() {
        let mask = CAUSAL;
        assert_eq!(measure(head(2, &mask, |_, _| 1.0).view(), &mask), vec![None]);
    }

    #[test]
    fn left_padding_skips_padded_rows_and_keys() {
        // Three padding positions, then real tokens: the real tokens' own previous-token pattern.
        let pad = [0u8, 0, 0, 1, 1, 1, 1, 1, 1];
        let mask = MaskSpec { causal: true, prefix_len: 0, padding: Some(&pad) };
        let s = one(9, &mask, |i, j| if j + 1 == i || (i == 3 && j == 3) { 1.0 } else { 0.0 });
        assert_eq!(s.rows, 4, "real positions 5..8 each have two real keys before them");
        assert!(close(s.previous, 1.0), "{s:?}");
        // Padded query rows hold garbage here (uniform over padding): they must not count.
        let mut p = head(9, &mask, |i, j| if j + 1 == i || (i == 3 && j == 3) { 1.0 } else { 0.0 });
        for i in 0..3 {
            p.slice_mut(ndarray::s![0, i, ..]).fill(1.0 / 9.0);
        }
        assert_eq!(measure(p.view(), &mask)[0], Some(s));
    }

    #[test]
    fn inner_padding_makes_previous_the_nearest_real_key() {
        let pad = [1u8, 1, 1, 0, 1, 1];
        let mask = MaskSpec { causal: true, prefix_len: 0, padding: Some(&pad) };
        // Position 4's previous real token is 2, across the padding at 3.
        let s = one(6, &mask, |i, j| if i == 4 { (j == 2) as u8 as f32 } else if j + 1 == i || i == j && i == 0 { 1.0 } else { 0.0 });
        assert!(close(s.previous, 1.0), "{s:?}");
        assert_eq!(s.rows, 3, "positions 2, 4 and 5");
    }

    #[test]
    fn a_cache_prefix_puts_query_row_i_at_key_prefix_plus_i() {
        // 4 cached keys then 3 new queries: query row 0 sits at key 4.
        let mask = MaskSpec { causal: true, prefix_len: 4, padding: None };
        let mut p = Array3::zeros((1, 3, 7));
        for i in 0..3 {
            p[[0, i, 4 + i]] = 1.0;
        }
        let s = measure(p.view(), &mask)[0].unwrap();
        assert_eq!(s.rows, 3);
        assert!(close(s.current, 1.0), "{s:?}");
    }

    #[test]
    fn without_the_causal_mask_spread_counts_every_key() {
        let mask = MaskSpec { causal: false, prefix_len: 0, padding: None };
        let s = one(6, &mask, |_, _| 1.0);
        assert!(close(s.spread, 1.0), "{}", s.spread);
        assert!(close(s.previous, 1.0 / 6.0), "{s:?}");
        assert_eq!(s.rows, 4);
    }

    #[test]
    fn pooling_weights_each_input_by_its_rows() {
        let a = HeadScores { previous: 1.0, current: 0.0, first: 0.0, spread: 0.0, rows: 3, fixed: 0.0, fixed_key: Some(0) };
        let b = HeadScores { previous: 0.0, current: 1.0, first: 0.0, spread: 1.0, rows: 1, fixed: 0.0, fixed_key: Some(0) };
        let p = HeadScores::pooled(&[a, b]).unwrap();
        assert!(close(p.previous, 0.75) && close(p.current, 0.25) && close(p.spread, 0.25));
        assert_eq!(p.rows, 4);
        assert_eq!(HeadScores::pooled(&[]), None);
    }

    #[test]
    fn every_head_of_a_layer_is_measured() {
        let mut p = Array3::zeros((2, 5, 5));
        for i in 0..5 {
            p[[0, i, i]] = 1.0;
            p[[1, i, 0]] = 1.0;
        }
        let roles: Vec<Role> = measure(p.view(), &CAUSAL).into_iter().map(|s| s.unwrap().role().role).collect();
        assert_eq!(roles, [Role::Current, Role::First]);
    }
}
