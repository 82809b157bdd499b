// route/learned_head.h: a learned linear head over the small model's own
// mean-pooled hidden state, an optional term of a virtual model's score.
//
// The head file (JSON, written by bench/route/train_head.py):
//
//   {"format": "folio-route-head", "version": 1, "n_embd": 576,
//    "mean": [n_embd], "scale": [n_embd], "weights": [n_embd], "bias": b,
//    "info": {...}}                      // free-form: what it was trained on
//
//   e = pooled / |pooled|                  the prompt's mean hidden state, unit length
//   z_i = (e_i - mean_i) * scale_i         standardized as in training
//   head = sigmoid(bias + sum_i weights_i z_i)   in (0, 1): the estimated
//                                         chance that the large model is needed
//
// The policy blends it with the feature score (score.h):
//   score = (1 - head_weight) * feature score + head_weight * head.
// Unlike the feature score the head is not monotone in the prompt's length or
// keywords: it is what a labelled sample taught it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace folio::route {

struct LearnedHead {
  std::size_t n_embd = 0;
  std::vector<float> mean, scale, weights;  // n_embd each
  double bias = 0;
  std::string info;  // the file's "info", compact JSON (for logs)

  // The head's output for a prompt's mean hidden state (any length scale:
  // it is normalized first). Throws folio::Error when the width is not
  // n_embd; a zero vector scores the standardized origin.
  double score(std::span<const float> pooled) const;
};

// Parses a head file's text; `source` names it in errors. Throws folio::Error
// ("route head <source>: ...") naming a missing or unknown key, a wrong
// format or version, arrays of the wrong length or non-finite numbers.
LearnedHead parse_learned_head(const std::string& text, const std::string& source);
// Reads and parses the file at `path`.
LearnedHead load_learned_head(const std::string& path);

// `v` scaled to unit Euclidean length (unchanged when it is all zeros): the
// embedding a head reads and /v1/embeddings returns.
std::vector<float> l2_normalized(std::span<const float> v);

}  // namespace folio::route
