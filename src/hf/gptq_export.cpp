// hf/gptq_export.cpp: GGUF Q4_0 / Q8_0 linears -> GPTQ v1 tensors (see gptq_export.h).
#include "hf/gptq_export.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/error.h"
#include "hf/hf_config.h"
#include "hf/hf_weights.h"
#include "hf/packed_int.h"
#include "hf/safetensors.h"
#include "hf/safetensors_writer.h"
#include "quant/block_legacy.h"

namespace folio::hf {

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kGroup = 32;

template <typename T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

struct Packed {
  std::vector<std::uint32_t> qweight, qzeros;
  std::vector<std::uint16_t> scales;
};

// rows x cols of Q4_0 / Q8_0 blocks (rows in HF order) -> GPTQ v1, sym, g32.
Packed pack(gguf::TensorType type, std::span<const std::uint8_t> data, std::uint64_t rows,
            std::uint64_t cols) {
  const int bits = type == gguf::TensorType::Q4_0 ? 4 : 8;
  const std::uint64_t per = 32 / static_cast<std::uint64_t>(bits);
  const std::uint64_t nb = cols / kGroup;
  Packed p;
  p.qweight.assign(cols / per * rows, 0);
  p.qzeros.assign(nb * (rows / per), 0);
  p.scales.assign(nb * rows, 0);
  const std::uint32_t stored_zero = (1u << (bits - 1)) - 1;  // v1: zero - 1
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t b = 0; b < nb; ++b) {
      std::uint8_t q[kGroup];
      if (bits == 4) {
        quant::BlockQ4_0 blk;
        std::memcpy(&blk, data.data() + (r * nb + b) * sizeof blk, sizeof blk);
        for (int j = 0; j < 16; ++j) {
          q[j] = blk.qs[j] & 15;
          q[j + 16] = static_cast<std::uint8_t>(blk.qs[j] >> 4);
        }
        p.scales[b * rows + r] = blk.d;
      } else {
        quant::BlockQ8_0 blk;
        std::memcpy(&blk, data.data() + (r * nb + b) * sizeof blk, sizeof blk);
        for (std::uint64_t j = 0; j < kGroup; ++j)
          q[j] = static_cast<std::uint8_t>(blk.qs[j] + 128);
        p.scales[b * rows + r] = blk.d;
      }
      for (std::uint64_t j = 0; j < kGroup; ++j) {
        const std::uint64_t i = b * kGroup + j;
        p.qweight[(i / per) * rows + r] |= static_cast<std::uint32_t>(q[j]) << ((i % per) * bits);
      }
      p.qzeros[b * (rows / per) + r / per] |= stored_zero << ((r % per) * bits);
    }
  }
  return p;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out.flush()) throw Error("cannot write " + p.string());
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error("cannot read " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

void write_gptq_checkpoint(const std::string& source_dir, const gguf::GgufFile& quantized,
                           const std::string& out_dir) {
  const nlohmann::json config_json = read_config_json(source_dir);
  HfConfig config = parse_config(config_json, config_path(source_dir));
  if (config.quant.method != QuantMethod::None) {
    throw Error("--format gptq needs an unquantized source checkpoint; " + source_dir + " is " +
                config.quant.describe());
  }
  std::error_code ec;
  if (fs::exists(out_dir, ec))
    throw Error("the output " + out_dir + " exists; name a new directory");
  const Checkpoint source = Checkpoint::open(source_dir);
  resolve_names(source, config);

  SafetensorsWriter st;
  st.set_metadata("format", "pt");
  std::set<std::string> replaced;
  int bits = 0;
  for (std::uint32_t layer = 0; layer < config.n_layer; ++layer) {
    for (const BlockLinear& l : block_linears(config, layer)) {
      const std::string name = l.gguf + ".weight";
      const gguf::TensorInfo* t = quantized.find_tensor(name);
      if (t == nullptr) throw Error("the quantized model has no tensor " + name);
      const int b = t->type == gguf::TensorType::Q4_0   ? 4
                    : t->type == gguf::TensorType::Q8_0 ? 8
                                                        : 0;
      if (b == 0 || (bits != 0 && b != bits)) {
        throw Error("--format gptq writes one GPTQ width for every block linear: " + name + " is " +
                    std::string(gguf::tensor_type_name(t->type)) + " (use --type Q4_0 or Q8_0)");
      }
      bits = b;
      if (t->dims.size() != 2 || t->dims[0] != l.cols || t->dims[1] != l.rows ||
          l.cols % kGroup != 0) {
        throw Error("tensor " + name + " does not have the shape config.json implies");
      }
      std::vector<std::uint8_t> rows(t->data.begin(), t->data.end());
      if (l.rope_heads != 0) {  // undo convert's permutation: HF row perm[r] is GGUF row r
        const std::vector<std::uint32_t> perm = llama_rope_permutation(l.rows, l.rope_heads);
        std::vector<std::uint32_t> inverse(perm.size());
        for (std::uint32_t r = 0; r < perm.size(); ++r) inverse[perm[r]] = r;
        rows = permute_rows(rows, rows.size() / l.rows, inverse);
      }
      Packed p = pack(t->type, rows, l.rows, l.cols);
      std::vector<std::int32_t> g_idx(l.cols);
      for (std::uint64_t i = 0; i < l.cols; ++i) g_idx[i] = static_cast<std::int32_t>(i / kGroup);
      const std::uint64_t per = 32 / static_cast<std::uint64_t>(bits);
      st.add(l.hf + ".qweight", Dtype::I32, {l.cols / per, l.rows}, bytes_of(p.qweight));
      st.add(l.hf + ".qzeros", Dtype::I32, {l.cols / kGroup, l.rows / per}, bytes_of(p.qzeros));
      st.add(l.hf + ".scales", Dtype::F16, {l.cols / kGroup, l.rows}, bytes_of(p.scales));
      st.add(l.hf + ".g_idx", Dtype::I32, {l.cols}, bytes_of(g_idx));
      replaced.insert(l.hf + ".weight");
    }
  }
  for (const std::string& n : source.names()) {
    if (replaced.count(n) != 0) continue;
    const SafeTensor& t = source.require(n);
    st.add(n, t.dtype, t.shape, std::vector<std::uint8_t>(t.data.begin(), t.data.end()));
  }

  nlohmann::json cfg = config_json;
  cfg["quantization_config"] = {{"quant_method", "gptq"},
                                {"bits", bits},
                                {"group_size", kGroup},
                                {"desc_act", false},
                                {"sym", true},
                                {"checkpoint_format", "gptq"},
                                {"static_groups", false},
                                {"true_sequential", true},
                                {"quantizer", "folio"}};

  const fs::path out(out_dir);
  const fs::path tmp = out.string() + ".partial";
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw Error("cannot create " + tmp.string() + ": " + ec.message());
  try {
    st.write_file((tmp / "model.safetensors").string());
    write_text(tmp / "config.json", cfg.dump(2) + "\n");
    for (const char* f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                          "chat_template.jinja", "chat_template.json", "generation_config.json",
                          "tokenizer.model", "vocab.json", "merges.txt"}) {
      const fs::path src = fs::path(source_dir) / f;
      if (fs::exists(src, ec)) write_text(tmp / f, read_text(src));
    }
    fs::rename(tmp, out);
  } catch (const std::exception& e) {
    fs::remove_all(tmp, ec);
    throw Error(std::string("writing the GPTQ checkpoint failed: ") + e.what());
  }
}

}  // namespace folio::hf
