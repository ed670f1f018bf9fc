//! MiniMind's MOEFeedForward (`model/model_minimind.py`), inference path: the router `mlp.gate`
//! scores every token against the E experts, softmax turns the scores into probabilities, the top
//! k (`num_experts_per_tok`) experts are kept, their probabilities renormalised to sum to 1 when
//! `norm_topk_prob`, and the token's FFN output is the weighted sum of those experts' SwiGLU outputs.
//! MiniMind has no shared expert; its auxiliary load-balancing loss is computed only in training and
//! changes no output, so it is not here.

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use super::attention::softmax_rows;
use super::linear::linear;
use super::swiglu::swiglu;
use crate::weights::MoeFeedForward;

pub struct MoeOut {
    pub router_logits: Array2<f32>, // [T, E] g · gate^T
    pub router_probs: Array2<f32>,  // [T, E] softmax over the experts
    /// [T, k] the chosen experts, most probable first (a tie goes to the lower index). MiniMind's
    /// `torch.topk(..., sorted=False)` leaves the order open; the set and each expert's weight match.
    pub expert_index: Array2<usize>,
    pub expert_weight: Array2<f32>, // [T, k] renormalised when norm_topk_prob
    pub expert_out: Array3<f32>,    // [T, k, H] each chosen expert's SwiGLU output, before weighting
    pub out: Array2<f32>,           // [T, H] sum over k of weight * expert output
}

/// The k most probable experts of one router row, most probable first.
fn top_k(probs: &[f32], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..probs.len()).collect();
    // Stable: equal probabilities keep index order.
    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
    order.truncate(k);
    order
}

/// g: [T, H], the post-attention-normed hidden state; k = num_experts_per_tok.
pub fn moe_feed_forward(g: ArrayView2<f32>, w: &MoeFeedForward, k: usize, norm_topk_prob: bool) -> MoeOut {
    let (t, h) = g.dim();
    let router_logits = linear(g, &w.gate);
    let router_probs = softmax_rows(&router_logits);
    let mut expert_index = Array2::zeros((t, k));
    let mut expert_weight = Array2::zeros((t, k));
    for (i, row) in router_probs.axis_iter(Axis(0)).enumerate() {
        let row = row.as_slice().expect("a standard-layout row");
        let chosen = top_k(row, k);
        let sum: f32 = chosen.iter().map(|&e| row[e]).sum();
        for (slot, &e) in chosen.iter().enumerate() {
            expert_index[[i, slot]] = e;
            expert_weight[[i, slot]] = if norm_topk_prob { row[e] / (sum + 1e-20) } else { row[e] };
        }
    }
    // Each expert runs once, on the tokens routed to it, and adds into y in expert order, as
    // MiniMind's loop over `self.experts` does with index_add_.
    let mut expert_out = Array3::zeros((t, k, h));
    let mut out = Array2::zeros((t, h));
    for (e, expert) in w.experts.iter().enumerate() {
        let routed: Vec<(usize, usize)> = expert_index.indexed_iter().filter(|&(_, &chosen)| chosen == e).map(|(at, _)| at).collect();
        if routed.is_empty() {
            continue;
        }
        let tokens: Vec<usize> = routed.iter().map(|&(i, _)| i).collect();
        let y = swiglu(g.select(Axis(0), &tokens).view(), expert).out; // (tokens routed to e, H)
        for (row, &(i, slot)) in y.axis_iter(Axis(0)).zip(&routed) {
            expert_out.slice_mut(s![i, slot, ..]).assign(&row);
            out.row_mut(i).scaled_add(expert_weight[[i, slot]], &row);
        }
    }
    MoeOut { router_logits, router_probs, expert_index, expert_weight, expert_out, out }
}

#[cfg(test)]
mod tests {
    use super::top_k;

    #[test]
    fn top_k_is_most_probable_first_and_ties_go_to_the_lower_index() {
        assert_eq!(top_k(&[0.1, 0.4, 0.2, 0.3], 2), vec![1, 3]);
        assert_eq!(top_k(&[0.25, 0.25, 0.25, 0.25], 3), vec![0, 1, 2]);
        assert_eq!(top_k(&[0.7, 0.3], 1), vec![0]);
    }
}
