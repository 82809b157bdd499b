// model/model.cpp: loading: architecture family lookup and the checks that
// keep the forward pass from silently computing the wrong function.
#include "model/model.h"

#include <string>

#include "base/error.h"

namespace folio::model {

namespace {

struct Family {
  std::string_view arch;  // general.architecture
  ArchTraits traits;
  DecoderWeights (*load)(const WeightLoader&, const ModelConfig&);
};

constexpr Family kFamilies[] = {
    {"llama", {"llama", /*rope_neox=*/false}, load_llama},
    {"qwen2", {"qwen2", /*rope_neox=*/true}, load_qwen2},
    {"gemma3",
     {"gemma3", /*rope_neox=*/true, FfnActivation::kGeluTanh, /*embed_scale=*/true},
     load_gemma3},
};

const Family& find_family(const std::string& arch) {
  for (const Family& f : kFamilies) {
    if (f.arch == arch) return f;
  }
  std::string names;
  for (const Family& f : kFamilies) names += (names.empty() ? "" : ", ") + std::string(f.arch);
  throw Error("architecture '" + arch + "' is not supported yet (supported: " + names + ")");
}

}  // namespace

Model Model::load(const gguf::GgufFile& file, const LoadOptions& options) {
  Model m;
  m.config_ = from_gguf(file);
  const Family& family = find_family(m.config_.arch);
  if (!m.config_.norm_is_rms) {
    throw Error("model '" + m.config_.name + "' uses LayerNorm; the '" + m.config_.arch +
                "' forward pass implements RMSNorm only");
  }
  m.traits_ = family.traits;
  m.precision_ = options.precision;
  m.activation_bits_ = options.activation_bits;
  m.rope_ = rope_table(m.config_);
  if (m.config_.rope_freq_base_swa > 0.0 && m.config_.n_sliding_layers() > 0) {
    ModelConfig local = m.config_;
    local.rope_freq_base = local.rope_freq_base_swa;
    local.rope_scaling = {};
    m.rope_swa_ = rope_table(local);
    m.has_rope_swa_ = true;
  }
  WeightLoader loader(file, options.precision);
  m.weights_ = family.load(loader, m.config_);
  m.repacked_ = loader.repacked();
  m.repacked_bytes_ = loader.repacked_bytes();
  m.all_layers_.resize(m.weights_.layers.size());
  for (std::size_t l = 0; l < m.all_layers_.size(); ++l) m.all_layers_[l] = l;
  return m;
}

std::size_t Model::forward_weight_bytes(std::span<const std::size_t> layers) const {
  if (layers.empty()) layers = all_layers_;
  std::size_t bytes = weights_.output.w.bytes().size();
  for (const std::size_t l : layers) {
    const LayerWeights& w = weights_.layers.at(l);
    for (const Linear* m : {&w.wq, &w.wk, &w.wv, &w.wo, &w.w_gate, &w.w_up, &w.w_down})
      bytes += m->w.bytes().size();
  }
  return bytes;
}

}  // namespace folio::model
