//! Decoding with the KV cache, one token at a time: the prompt is prefilled once, then each step runs
//! only the newest token against the cache. Greedy, or sampled with temperature, top-k and top-p from a
//! seeded generator, so a shared link replays the same text.

use serde::{Deserialize, Serialize};

use super::forward::{Model, RunOptions};
use super::kv_cache::KvCache;
use crate::trace::{Recorder, Selection, Trace};
use crate::Error;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Sampling {
    /// 0 = greedy (argmax).
    pub temperature: f32,
    /// 0 = no top-k cut.
    pub top_k: usize,
    /// 1 = no nucleus cut.
    pub top_p: f32,
    pub seed: u64,
}

impl Sampling {
    /// Refuses settings no draw can use: a temperature below 0 or not a number, a top-p outside
    /// (0, 1].
    pub fn check(&self) -> Result<(), Error> {
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(Error::Input(format!("temperature must be a number of at least 0, got {}", self.temperature)));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return Err(Error::Input(format!("top_p must be above 0 and at most 1, got {}", self.top_p)));
        }
        Ok(())
    }
}

/// What a set of sampling settings makes of one logits row: how many tokens can still be drawn,
/// the probability each of `ids` has after the settings (0 where they cut it), and the token drawn
/// by `pick` from a generator seeded with `s.seed` (the first draw a decoding run with these
/// settings makes).
pub struct Draw {
    pub kept: usize,
    pub probs: Vec<f32>,
    pub drawn: (u32, f32),
}

pub fn draw(logits: &[f32], s: &Sampling, ids: &[u32]) -> Result<Draw, Error> {
    s.check()?;
    let c = candidates(logits, s);
    let p_of = |id: u32| c.iter().find(|x| x.0 == id).map_or(0.0, |x| x.1);
    let id = pick(logits, s, &mut SplitMix64(s.seed));
    Ok(Draw { kept: if s.temperature > 0.0 { c.len() } else { 1 }, probs: ids.iter().map(|&i| p_of(i)).collect(), drawn: (id, p_of(id)) })
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling { temperature: 0.0, top_k: 0, top_p: 1.0, seed: 0 }
    }
}

/// SplitMix64: tiny, seeded, identical on every platform.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 24 bits.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Probabilities after temperature, top-k and top-p, as (id, p) sorted by p descending, summing to 1.
pub fn candidates(logits: &[f32], s: &Sampling) -> Vec<(u32, f32)> {
    let temp = if s.temperature > 0.0 { s.temperature } else { 1.0 };
    let mut order: Vec<(u32, f32)> = logits.iter().enumerate().map(|(i, &x)| (i as u32, x / temp)).collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if s.top_k > 0 {
        order.truncate(s.top_k);
    }
    let m = order[0].1;
    // Summed in f64: over a whole vocabulary (thousands of small terms after the large ones) an f32
    // sum drifts by ~1e-5, more than the four decimals a view prints can hide.
    let mut sum = 0.0f64;
    for c in order.iter_mut() {
        c.1 = (c.1 - m).exp();
        sum += c.1 as f64;
    }
    order.iter_mut().for_each(|c| c.1 = (c.1 as f64 / sum) as f32);
    if s.top_p < 1.0 {
        let mut acc = 0.0;
        let keep = order.iter().position(|c| {
            acc += c.1;
            acc >= s.top_p
        });
        order.truncate(keep.map_or(order.len(), |k| k + 1));
        let total: f32 = order.iter().map(|c| c.1).sum();
        order.iter_mut().for_each(|c| c.1 /= total);
    }
    order
}

/// The `k` most likely next tokens by the model's own softmax over the whole vocabulary (temperature 1,
/// no top-k or top-p cut), most likely first: what a view shows as "the model predicts".
pub fn top_tokens(logits: &[f32], k: usize) -> Vec<(u32, f32)> {
    let mut top = candidates(logits, &Sampling::default());
    top.truncate(k.max(1));
    top
}

pub fn pick(logits: &[f32], s: &Sampling, rng: &mut SplitMix64) -> u32 {
    let c = candidates(logits, s);
    if s.temperature <= 0.0 {
        return c[0].0;
    }
    let u = rng.next_f32();
    let mut acc = 0.0;
    for &(id, p) in &c {
        acc += p;
        if u < acc {
            return id;
        }
    }
    c[c.len() - 1].0
}

/// One decoding step: the token chosen and what the call that chose it recorded.
pub struct Step {
    pub token: u32,
    pub trace: Trace,
    /// The ten most likely next tokens by the model's softmax over the whole vocabulary (top_tokens),
    /// whatever the sampling settings cut or sharpen before the draw.
    pub top: Vec<(u32, f32)>,
}

/// Decoding state: the cache and the ids so far. The model is passed to each step, so a session can
/// own both side by side.
pub struct Generator {
    cache: KvCache,
    pub ids: Vec<u32>,
    fed: usize,
    sampling: Sampling,
    rng: SplitMix64,
}

impl Generator {
    pub fn new(model: &Model, prompt: &[u32], sampling: Sampling) -> Result<Generator, Error> {
        if prompt.is_empty() {
            return Err(Error::Input("the prompt has no tokens".into()));
        }
        let rng = SplitMix64(sampling.seed);
        Ok(Generator { cache: model.new_cache(), ids: prompt.to_vec(), fed: 0, sampling, rng })
    }

    pub fn cache(&self) -> &KvCache {
        &self.cache
    }

    /// Runs the tokens not yet in the cache (the whole prompt the first time), picks the next token.
    pub fn step(&mut self, model: &Model, opts: &RunOptions, selection: Selection) -> Result<Step, Error> {
        let mut rec = Recorder::new(selection);
        let new = &self.ids[self.fed..];
        let (logits, _) = model.forward(&mut self.cache, new, None, opts, &mut rec)?;
        self.fed = self.ids.len();
        let last = logits.row(logits.nrows() - 1).to_vec();
        let top = top_tokens(&last, 10);
        let token = pick(&last, &self.sampling, &mut self.rng);
        self.ids.push(token);
        Ok(Step { token, trace: rec.trace, top })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draw_reports_what_the_settings_keep_and_the_decoder_s_first_pick() {
        let logits = [1.0, 3.0, 2.0, -1.0];
        let s = Sampling { temperature: 0.7, top_k: 2, top_p: 1.0, seed: 5 };
        let d = draw(&logits, &s, &[1, 2, 0]).unwrap();
        assert_eq!(d.kept, 2);
        // top-k 2 at temperature 0.7: softmax([3, 2] / 0.7) over ids 1 and 2; id 0 is cut.
        let e = (1.0f32 / 0.7).exp();
        assert!((d.probs[0] - e / (e + 1.0)).abs() < 1e-6 && (d.probs[1] - 1.0 / (e + 1.0)).abs() < 1e-6);
        assert_eq!(d.probs[2], 0.0);
        assert_eq!(d.drawn.0, pick(&logits, &s, &mut SplitMix64(5)));
        // Greedy: one token can be drawn, the argmax, whatever the seed.
        let g = draw(&logits, &Sampling { seed: 9, ..Sampling::default() }, &[]).unwrap();
        assert_eq!((g.kept, g.drawn.0), (1, 1));
        for bad in [Sampling { temperature: -1.0, ..s.clone() }, Sampling { temperature: f32::NAN, ..s.clone() }, Sampling { top_p: 0.0, ..s.clone() }, Sampling { top_p: 1.5, ..s.clone() }] {
            assert!(draw(&logits, &bad, &[]).is_err());
        }
    }

    #[test]
    fn greedy_takes_the_argmax() {
        let mut rng = SplitMix64(1);
        assert_eq!(pick(&[0.1, 3.0, -1.0], &Sampling::default(), &mut rng), 1);
    }

    #[test]
    fn top_k_one_is_greedy_even_when_sampling() {
        let s = Sampling { temperature: 2.0, top_k: 1, top_p: 1.0, seed: 9 };
        let mut rng = SplitMix64(9);
        for _ in 0..20 {
            assert_eq!(pick(&[0.1, 3.0, 2.9], &s, &mut rng), 1);
        }
    }

    #[test]
    fn top_p_keeps_the_smallest_set_reaching_p() {
        let s = Sampling { temperature: 1.0, top_k: 0, top_p: 0.5, seed: 0 };
        let c = candidates(&[0.0, 5.0, 0.0, 0.0], &s);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].0, 1);
        assert!((c[0].1 - 1.0).abs() < 1e-6);
    }

    #[test]
    fn top_tokens_are_the_softmax_over_the_whole_vocabulary() {
        // Eleven logits: the top ten must keep the probabilities of all eleven, not be rescaled to sum to 1.
        let logits: Vec<f32> = (0..11).map(|i| i as f32 * 0.25).collect();
        let z: f64 = logits.iter().map(|&x| (x as f64).exp()).sum();
        let top = top_tokens(&logits, 10);
        assert_eq!(top.len(), 10);
        assert_eq!(top[0].0, 10);
        for &(id, p) in &top {
            let want = (logits[id as usize] as f64).exp() / z;
            assert!((p as f64 - want).abs() < 1e-6, "id {id}: {p} against {want}");
        }
        assert!(top.iter().map(|c| c.1).sum::<f32>() < 0.99, "the top ten leave the eleventh its share");
    }

    #[test]
    fn a_decoding_step_reports_the_full_softmax_whatever_the_sampling() {
        let config = crate::model::config::Config { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 64, ..Default::default() }
            .resolve()
            .unwrap();
        let model = Model::new(config.clone(), crate::weights::random(&config, 3));
        let sampling = Sampling { temperature: 0.5, top_k: 3, top_p: 0.9, seed: 1 };
        let mut gen = Generator::new(&model, &[1, 2, 3], sampling).unwrap();
        let step = gen.step(&model, &RunOptions::default(), Selection::all()).unwrap();
        let logits = step.trace.get("logits").expect("logits recorded");
        let row = &logits.data[logits.data.len() - 64..];
        assert_eq!(step.top, top_tokens(row, 10));
    }

    #[test]
    fn same_seed_same_draws() {
        let s = Sampling { temperature: 1.0, top_k: 0, top_p: 1.0, seed: 7 };
        let logits = [0.0f32, 0.1, 0.2, 0.3];
        let draw = |seed| {
            let mut r = SplitMix64(seed);
            (0..16).map(|_| pick(&logits, &s, &mut r)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }
}
