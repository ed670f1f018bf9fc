//! The induction probe: the standard test for induction heads (Olsson et al. 2022, "In-context
//! learning and induction heads"), run on any model. The model reads a sequence of random tokens
//! twice, r_1 … r_n r_1 … r_n (optionally after a first token such as BOS); random, so that
//! nothing but the repetition itself can tell a head where to look. On the second copy, an
//! induction head attends from r_k to the token that followed r_k last time (r_{k+1} of the first
//! copy), the pattern that lets a model continue a sequence it has seen; a duplicate-token head
//! attends to the earlier r_k itself.
//!
//! `measure` scores these on any run's softmax weights and ids: for each query whose token occurred
//! earlier, the weight on those earlier occurrences (duplicate) and on the tokens that followed them
//! (induction), averaged over such queries. On the probe's sequence those are exactly the second
//! copy's queries and one key each. `probe` draws the sequence, runs the model and scores every
//! head, with `head_roles`' previous / current / first measures of the same run beside them.

use serde::{Deserialize, Serialize};

use crate::analysis::head_roles::{self, HeadRole, STRONG, WEAK};
use crate::model::attention::MaskSpec;
use crate::model::config::MAX_TOKENS;
use crate::model::generate::SplitMix64;
use crate::model::{Model, RunOptions};
use crate::trace::Selection;
use crate::{Error, Said};
use ndarray::ArrayView3;

/// The longest random sequence the probe repeats: 2 x 256 tokens is plenty for the test and keeps
/// the probe's own run small beside the page's.
pub const MAX_LENGTH: usize = 256;

/// One head's scores: the mean weight a query puts on the tokens that followed its token's earlier
/// occurrences (`induction`) and on those occurrences (`duplicate`), over the `rows` queries whose
/// token occurred earlier with a token after it, before the query.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct InductionScores {
    pub induction: f32,
    pub duplicate: f32,
    pub rows: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeRole {
    Induction,
    Duplicate,
}

impl InductionScores {
    /// Induction or duplicate-token, whichever is larger, when it is at least WEAK (strong over
    /// STRONG), as head_roles names a position role; None when neither is.
    pub fn role(self) -> Option<(ProbeRole, f32, bool)> {
        let (role, score) = if self.induction >= self.duplicate { (ProbeRole::Induction, self.induction) } else { (ProbeRole::Duplicate, self.duplicate) };
        (score >= WEAK).then_some((role, score, score > STRONG))
    }
}

/// The scores of every head of one layer's causal, unpadded probs [nH, T, T] of a run over `ids`,
/// or None for every head when no token repeats with a token after its earlier occurrence.
pub fn measure(probs: ArrayView3<f32>, ids: &[u32]) -> Vec<Option<InductionScores>> {
    let (heads, t, s) = probs.dim();
    assert!(t == ids.len() && s == ids.len(), "probs [{heads}, {t}, {s}] are not those of {} ids", ids.len());
    // For each query, the earlier occurrences of its token and the keys that followed them, never
    // the query itself (a key can be both, where a token repeats back to back).
    let rows: Vec<(usize, Vec<usize>, Vec<usize>)> = (0..t)
        .filter_map(|q| {
            let earlier: Vec<usize> = (0..q).filter(|&j| ids[j] == ids[q]).collect();
            let after: Vec<usize> = earlier.iter().map(|j| j + 1).filter(|&j| j < q).collect();
            (!after.is_empty()).then_some((q, earlier, after))
        })
        .collect();
    if rows.is_empty() {
        return vec![None; heads];
    }
    let n = rows.len() as f32;
    (0..heads)
        .map(|h| {
            let (mut induction, mut duplicate) = (0.0f32, 0.0f32);
            for (q, earlier, after) in &rows {
                induction += after.iter().map(|&j| probs[[h, *q, j]]).sum::<f32>();
                duplicate += earlier.iter().map(|&j| probs[[h, *q, j]]).sum::<f32>();
            }
            Some(InductionScores { induction: induction / n, duplicate: duplicate / n, rows: rows.len() })
        })
        .collect()
}

/// What the probe is asked for: `length` random tokens, drawn by `seed`, each used once, then the
/// same again; `first`, when given, is a token put before them (a BOS).
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct ProbeRequest {
    pub length: usize,
    pub seed: u64,
    pub first: Option<u32>,
}

impl Default for ProbeRequest {
    fn default() -> Self {
        ProbeRequest { length: 32, seed: 0, first: None }
    }
}

/// The probe's sequence for a vocabulary of `vocab` ids, drawn from `ordinary` (a tokenizer's
/// ordinary tokens; None: every id): `first`, then `length` different random ids, then those ids
/// again. Different ids, so that each token of the second copy has one earlier occurrence to look
/// back to.
pub fn sequence(vocab: usize, ordinary: Option<&[u32]>, req: &ProbeRequest) -> Result<Vec<u32>, Error> {
    if req.length < 2 || req.length > MAX_LENGTH {
        return Err(Error::Input(format!("the probe's length must be between 2 and {MAX_LENGTH}, not {}", req.length)));
    }
    if let Some(f) = req.first.filter(|&f| f as usize >= vocab) {
        return Err(Error::Input(format!("the first token {f} is outside the vocabulary (size {vocab})")));
    }
    let mut usable: Vec<u32> = ordinary.map_or_else(|| (0..vocab as u32).collect(), |o| o.iter().copied().filter(|&id| (id as usize) < vocab).collect());
    if usable.len() < req.length {
        let text = format!("the probe needs {} different tokens but the vocabulary has only {} ordinary ones", req.length, usable.len());
        return Err(Error::Refused(Said { key: "probeVocab", args: vec![("tokens", req.length.to_string()), ("count", usable.len().to_string())], text }));
    }
    // The first `length` entries of a seeded Fisher-Yates shuffle: identical natively and in wasm.
    let mut rng = SplitMix64(req.seed);
    for i in 0..req.length {
        let j = i + (rng.next_u64() % (usable.len() - i) as u64) as usize;
        usable.swap(i, j);
    }
    let copy = &usable[..req.length];
    Ok(req.first.into_iter().chain(copy.iter().copied()).chain(copy.iter().copied()).collect())
}

/// One head on the probe: its induction and duplicate-token scores, the role they give (None when
/// neither is at least WEAK), and head_roles' role and measures on the same sequence.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ProbeHead {
    pub head: usize,
    #[serde(flatten)]
    pub scores: InductionScores,
    pub role: Option<ProbeRole>,
    pub score: f32,
    pub strong: bool,
    pub positions: Option<HeadRole>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProbeLayer {
    pub layer: usize,
    pub heads: Vec<ProbeHead>,
}

/// The probe's run: the ids it read (`first`, then the two copies) and every head's scores.
#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    pub ids: Vec<u32>,
    pub length: usize,
    pub layers: Vec<ProbeLayer>,
}

/// Draws the probe's sequence, runs `model` over it (causal, no padding, the CPU's explicit path
/// as `RunOptions::default()` picks it) and scores every head of every layer.
pub fn probe(model: &Model, ordinary: Option<&[u32]>, req: &ProbeRequest) -> Result<Probe, Error> {
    let ids = sequence(model.config.vocab_size, ordinary, req)?;
    let limit = model.config.max_position_embeddings.min(MAX_TOKENS);
    if ids.len() > limit {
        let text = format!("the probe's {} tokens are more than this model's {limit} positions; use a shorter probe", ids.len());
        return Err(Error::Refused(Said { key: "probePositions", args: vec![("tokens", ids.len().to_string()), ("limit", limit.to_string())], text }));
    }
    let out = model.trace(&ids, None, 0, &RunOptions::default(), Selection::all())?;
    let causal = MaskSpec { causal: true, prefix_len: 0, padding: None };
    let layers = (0..model.config.num_hidden_layers)
        .map(|layer| {
            let e = out.trace.get(&format!("layers.{layer}.attn.probs")).expect("a full trace records every layer's probs");
            let probs = ArrayView3::from_shape((e.shape[0], e.shape[1], e.shape[2]), &e.data[..]).expect("probs are [nH, T, S]");
            let positions = head_roles::measure(probs, &causal);
            let heads = measure(probs, &ids)
                .into_iter()
                .zip(positions)
                .enumerate()
                .map(|(head, (scores, positions))| {
                    let scores = scores.expect("the second copy always repeats the first");
                    let (role, score, strong) = scores.role().map_or((None, scores.induction.max(scores.duplicate), false), |(r, s, strong)| (Some(r), s, strong));
                    ProbeHead { head, scores, role, score, strong, positions: positions.map(|p| p.role()) }
                })
                .collect();
            ProbeLayer { layer, heads }
        })
        .collect();
    Ok(Probe { ids, length: req.length, layers })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    /// The probe's ids with `first` and n different tokens: 1 (first), 10..10+n, 10..10+n.
    fn repeated(n: usize, first: bool) -> Vec<u32> {
        let copy: Vec<u32> = (10..10 + n as u32).collect();
        first.then_some(1).into_iter().chain(copy.iter().copied()).chain(copy.iter().copied()).collect()
    }

    /// One head, t x t causal weights from a function of (query, key), each row normalised.
    fn head(t: usize, f: impl Fn(usize, usize) -> f32) -> Array3<f32> {
        let mut p = Array3::from_shape_fn((1, t, t), |(_, i, j)| if j <= i { f(i, j) } else { 0.0 });
        for i in 0..t {
            let sum: f32 = p.slice(ndarray::s![0, i, ..]).sum();
            p.slice_mut(ndarray::s![0, i, ..]).mapv_inplace(|v| v / sum);
        }
        p
    }

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-5
    }

    #[test]
    fn a_perfect_induction_head_scores_one() {
        // With a first token at 0 and n = 6: query 7 + k (second copy) looks at 2 + k, the token
        // after r_k's first occurrence at 1 + k; the other rows keep to the first token.
        let (n, ids) = (6, repeated(6, true));
        let p = head(ids.len(), |i, j| if i > n && j == i - n + 1 { 1.0 } else if i <= n && j == 0 { 1.0 } else { 0.0 });
        let s = measure(p.view(), &ids)[0].unwrap();
        assert_eq!(s.rows, n, "every query of the second copy");
        assert!(close(s.induction, 1.0) && close(s.duplicate, 0.0), "{s:?}");
        assert_eq!(s.role(), Some((ProbeRole::Induction, 1.0, true)));
    }

    #[test]
    fn a_perfect_duplicate_token_head_scores_one() {
        let (n, ids) = (5, repeated(5, false));
        let p = head(ids.len(), |i, j| if i >= n && j == i - n { 1.0 } else if i < n && j == i { 1.0 } else { 0.0 });
        let s = measure(p.view(), &ids)[0].unwrap();
        assert!(close(s.duplicate, 1.0) && close(s.induction, 0.0), "{s:?}");
        assert_eq!(s.role().map(|r| r.0), Some(ProbeRole::Duplicate));
    }

    #[test]
    fn a_uniform_head_scores_one_over_the_keys_it_sees() {
        // Query q sees q + 1 keys and each score has one of them: the mean of 1 / (q + 1) over the
        // second copy's queries.
        let (n, ids) = (8, repeated(8, true));
        let s = measure(head(ids.len(), |_, _| 1.0).view(), &ids)[0].unwrap();
        let expected = (n + 1..2 * n + 1).map(|q| 1.0 / (q as f32 + 1.0)).sum::<f32>() / n as f32;
        assert!(close(s.induction, expected) && close(s.duplicate, expected), "{s:?} vs {expected}");
        assert_eq!(s.role(), None, "{s:?}");
    }

    #[test]
    fn previous_and_current_token_heads_are_not_induction_heads() {
        let ids = repeated(6, true);
        let previous = head(ids.len(), |i, j| (j + 1 == i || i == 0) as u8 as f32);
        let current = head(ids.len(), |i, j| (i == j) as u8 as f32);
        for p in [previous, current] {
            let s = measure(p.view(), &ids)[0].unwrap();
            assert!(close(s.induction, 0.0) && close(s.duplicate, 0.0), "{s:?}");
        }
    }

    #[test]
    fn a_head_split_between_the_two_counts_each_half() {
        let (n, ids) = (4, repeated(4, false));
        let p = head(ids.len(), |i, j| if i >= n { (j == i - n || j == i - n + 1) as u8 as f32 } else { (j == i) as u8 as f32 });
        let s = measure(p.view(), &ids)[0].unwrap();
        assert!(close(s.induction, 0.5) && close(s.duplicate, 0.5), "{s:?}");
        assert_eq!(s.role().map(|r| (r.0, r.2)), Some((ProbeRole::Induction, false)), "a tie goes to induction, weak at 0.5");
    }

    #[test]
    fn text_with_no_repeated_token_is_not_measured() {
        let ids = [3u32, 4, 5, 6];
        assert_eq!(measure(head(4, |_, _| 1.0).view(), &ids), vec![None]);
        // A token repeated back to back has no token between: the one after it is the query itself.
        assert_eq!(measure(head(2, |_, _| 1.0).view(), &[7, 7]), vec![None]);
    }

    #[test]
    fn a_token_seen_twice_before_counts_both_occurrences() {
        // a b a b a: query 4 (a) has earlier a at 0 and 2, followed by b at 1 and 3.
        let ids = [1u32, 2, 1, 2, 1];
        let p = head(5, |i, j| if i == 4 { (j == 1 || j == 3) as u8 as f32 } else { 1.0 });
        let s = measure(p.view(), &ids)[0].unwrap();
        assert_eq!(s.rows, 3, "queries 2, 3 and 4");
        // Query 2 (a, after a b): induction on 1 is 1/3, duplicate on 0 is 1/3; query 3 (b): on 2
        // and 1, 1/4 each; query 4: induction 1.
        assert!(close(s.induction, (1.0 / 3.0 + 0.25 + 1.0) / 3.0), "{s:?}");
        assert!(close(s.duplicate, (1.0 / 3.0 + 0.25) / 3.0), "{s:?}");
    }

    #[test]
    fn the_sequence_is_two_copies_of_different_seeded_tokens() {
        let req = ProbeRequest { length: 20, seed: 7, first: Some(1) };
        let ordinary: Vec<u32> = (3..120).collect();
        let ids = sequence(100, Some(&ordinary), &req).unwrap();
        assert_eq!(ids.len(), 41);
        assert_eq!(ids[0], 1);
        assert_eq!(ids[1..21], ids[21..]);
        let mut copy = ids[1..21].to_vec();
        copy.sort();
        copy.dedup();
        assert_eq!(copy.len(), 20, "different tokens");
        assert!(copy.iter().all(|&id| (3..100).contains(&id)), "no excluded or out-of-vocabulary id: {copy:?}");
        assert_eq!(sequence(100, Some(&ordinary), &req).unwrap(), ids, "the same seed, the same tokens");
        assert_ne!(sequence(100, Some(&ordinary), &ProbeRequest { seed: 8, ..req.clone() }).unwrap(), ids);
        // Every id appears over many seeds: the draw covers the vocabulary.
        let seen: std::collections::HashSet<u32> = (0..200).flat_map(|seed| sequence(10, None, &ProbeRequest { length: 3, seed, first: None }).unwrap()).collect();
        assert_eq!(seen.len(), 10);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let ordinary: Vec<u32> = (1..1000).collect();
        let err = |vocab, length, first| sequence(vocab, Some(&ordinary), &ProbeRequest { length, seed: 0, first }).unwrap_err().to_string();
        assert!(err(100, 1, None).contains("between 2 and 256"), "{}", err(100, 1, None));
        assert!(err(100, 257, None).contains("between 2 and 256"));
        assert!(err(10, 10, None).contains("only 9 ordinary"), "{}", err(10, 10, None));
        assert!(err(10, 4, Some(10)).contains("outside the vocabulary"));
    }
}
