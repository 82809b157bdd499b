// hf/convert.cpp: checkpoint directory -> GGUF image (see convert.h).
#include "hf/convert.h"

#include <filesystem>

#include "gguf/writer.h"
#include "hf/hf_config.h"
#include "hf/hf_tokenizer.h"
#include "hf/hf_weights.h"
#include "hf/safetensors.h"

namespace folio::hf {

bool is_checkpoint_dir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

Conversion convert_checkpoint(const std::string& dir) {
  const nlohmann::json config_json = read_config_json(dir);
  HfConfig config = parse_config(config_json, config_path(dir));
  const Checkpoint ckpt = Checkpoint::open(dir);
  resolve_names(ckpt, config);
  MetaEntries tok = tokenizer_metadata(dir, config_json);
  std::string name = std::filesystem::path(dir).filename().string();
  if (name.empty()) name = std::filesystem::path(dir).parent_path().filename().string();
  MetaEntries meta = model_metadata(config, name);
  ConvertedWeights w = convert_weights(ckpt, config);

  gguf::GgufWriter out;
  for (auto& [k, v] : meta) out.add(k, std::move(v));
  for (auto& [k, v] : tok) out.add(k, std::move(v));
  out.add("folio.hf.source", gguf::MetaValue::string(dir));
  if (!w.notes.empty()) {
    gguf::MetaValue::Array notes;
    for (const auto& n : w.notes) notes.push_back(gguf::MetaValue::string(n));
    out.add("folio.hf.notes", gguf::MetaValue::array(gguf::ValueType::STRING, std::move(notes)));
  }
  for (auto& t : w.tensors) {
    if (!t.view.empty()) {
      out.add_tensor_view(t.name, t.dims, t.type, t.view);  // copied once, into the image
    } else {
      out.add_tensor(t.name, t.dims, t.type, std::move(t.data));
    }
  }

  Conversion c;
  c.notes = std::move(w.notes);
  c.summary = config.hf_arch + " from " + std::to_string(ckpt.n_files()) + " safetensors file" +
              (ckpt.n_files() == 1 ? "" : "s");
  if (config.quant.method != QuantMethod::None) {
    c.summary += ", " + config.quant.describe() + ": " + std::to_string(w.n_exact) + " of " +
                 std::to_string(w.n_packed) + " linears mapped exactly";
  }
  w.tensors.clear();
  c.image = out.to_bytes();
  return c;
}

}  // namespace folio::hf
