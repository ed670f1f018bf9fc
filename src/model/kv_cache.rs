//! The KV cache: per layer, RoPE-rotated keys and un-rotated values of every position seen so far,
//! nKV heads (not nH: that is what GQA saves). Appending is amortised O(new tokens).

use ndarray::{ArrayView3, ArrayView2};

use super::config::Config;

#[derive(Clone, Debug)]
pub struct LayerCache {
    k: Vec<f32>, // (len, nKV, d) row-major
    v: Vec<f32>,
    len: usize,
    n_kv: usize,
    d: usize,
}

impl LayerCache {
    /// Appends this call's rows, each given as [T, nKV*d].
    pub fn append(&mut self, k: ArrayView2<f32>, v: ArrayView2<f32>) {
        self.k.extend(k.iter());
        self.v.extend(v.iter());
        self.len += k.nrows();
    }

    pub fn k(&self) -> ArrayView3<'_, f32> {
        ArrayView3::from_shape((self.len, self.n_kv, self.d), &self.k).expect("cache shape")
    }

    pub fn v(&self) -> ArrayView3<'_, f32> {
        ArrayView3::from_shape((self.len, self.n_kv, self.d), &self.v).expect("cache shape")
    }
}

#[derive(Clone, Debug)]
pub struct KvCache {
    pub layers: Vec<LayerCache>,
}

impl KvCache {
    pub fn new(cfg: &Config) -> KvCache {
        let empty = LayerCache { k: Vec::new(), v: Vec::new(), len: 0, n_kv: cfg.num_key_value_heads, d: cfg.head_dim() };
        KvCache { layers: vec![empty; cfg.num_hidden_layers] }
    }

    /// Positions held (P).
    pub fn len(&self) -> usize {
        self.layers.first().map_or(0, |l| l.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of f32 keys and values held.
    pub fn bytes(&self) -> usize {
        self.layers.iter().map(|l| (l.k.len() + l.v.len()) * 4).sum()
    }
}
