//! What a run's tensors say about the model, measured on the trace rather than computed by the
//! forward pass: one concept per file, like `model/`.

pub mod circuit;
pub mod head_roles;
pub mod induction;
pub mod patching;
