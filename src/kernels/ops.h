// kernels/ops.h: element-wise and row-wise operations of a transformer block,
// each a pure function over spans with a scalar reference (*_ref) that tests
// compare the vectorized version against.
#pragma once

#include <cstddef>
#include <cstdint>

namespace folio::kernels {

// y = x / sqrt(mean(x^2) + eps) * w   (w may be null: no weight)
void rmsnorm(const float* x, const float* w, std::size_t n, float eps, float* y);
void rmsnorm_ref(const float* x, const float* w, std::size_t n, float eps, float* y);

// Rotary embedding in place on `n_heads` heads of `head_dim` at position `pos`,
// rotating the first `rot_dim` dims. neox=false: adjacent pairs (x[2i], x[2i+1])
// (GGUF llama layout); neox=true: halves (x[i], x[i + rot_dim/2]).
// theta_i = pos * freq_scale * base^(-2i/rot_dim).
// The angle is formed in f32 as HF transformers does (inv_freq rounded to
// f32, then multiplied by the position in f32); cos/sin are correctly rounded.
void rope(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim, std::size_t pos,
          float base, float freq_scale, bool neox);
void rope_ref(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
              std::size_t pos, float base, float freq_scale, bool neox);

// The two halves of rope(), so a model can compute a position's angles once
// and apply them to q and k of every layer. cos/sin: rot_dim / 2 values each.
void rope_angles(std::size_t pos, std::size_t rot_dim, float base, float freq_scale, float* cos_out,
                 float* sin_out);
void rope_apply(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                const float* cos_v, const float* sin_v, bool neox);
// inv_freq[i] = f32(base^(-2i/rot_dim)) * freq_scale for i < rot_dim / 2: the
// frequencies of plain and linearly scaled RoPE.
void rope_frequencies(std::size_t rot_dim, float base, float freq_scale, float* inv_freq);
// Angles from a frequency table (context scaling already applied): theta_i =
// float(pos) * inv_freq[i]; cos/sin correctly rounded, then times mscale
// (exact for mscale 1). rope_angles is this over rope_frequencies().
void rope_angles_table(std::size_t pos, const float* inv_freq, std::size_t half, float mscale,
                       float* cos_out, float* sin_out);
void rope_apply_ref(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                    const float* cos_v, const float* sin_v, bool neox);

// out = silu(gate) * up
void swiglu(const float* gate, const float* up, std::size_t n, float* out);
void swiglu_ref(const float* gate, const float* up, std::size_t n, float* out);

// out = gelu_tanh(gate) * up, with PyTorch's tanh approximation
// gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed as
// the equal x / (1 + e^(-2u)) (Gemma's gated FFN).
void geglu(const float* gate, const float* up, std::size_t n, float* out);
void geglu_ref(const float* gate, const float* up, std::size_t n, float* out);

// x[i] = cap * tanh(x[i] / cap): logit soft-capping (Gemma 2); cap > 0.
void softcap(float* x, std::size_t n, float cap);

// In-place softmax over n values.
void softmax(float* x, std::size_t n);
void softmax_ref(float* x, std::size_t n);

// y += x
void add(float* y, const float* x, std::size_t n);
void add_ref(float* y, const float* x, std::size_t n);

}  // namespace folio::kernels
