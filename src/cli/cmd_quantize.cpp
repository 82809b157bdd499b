// `folio quantize IN OUT --type T`: writes a GGUF whose weights are
// quantized to a recipe (Q4_0 .. Q8_0, Q4_K_S/M, Q5_K_S/M, Q6_K, or F16 /
// BF16 / F32), with llama-quantize's per-tensor type rules
// (quant/tensor_plan.h), so llama.cpp loads the result as it loads its own.
//
//   for each tensor, in llama-quantize's order:
//     choose its type (recipe mix, --tensor-type, fallbacks)
//     kept:      copy its bytes
//     quantized: dequantize to float32 (an already-quantized input warns:
//                errors compound), quantize row by row on --threads workers
//   metadata: the input's, with general.file_type and
//   general.quantization_version replaced and quantize.method added
//
// --method rtn (the default) is round-to-nearest, ggml's reference rules:
// byte-identical to llama-quantize without an imatrix on the same input.
// Progress (one line per tensor, sizes, time) goes to stderr; the output is
// written only once every tensor is done, so a failure leaves no half file.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "calib/calibration.h"
#include "calib/hessian.h"
#include "calib/imatrix.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/model_file.h"
#include "cli/text_file.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "hf/gptq_export.h"
#include "model/model.h"
#include "quant/awq.h"
#include "quant/block_codes.h"
#include "quant/dequantize.h"
#include "quant/gptq.h"
#include "quant/parallel_rows.h"
#include "quant/quantize.h"
#include "quant/tensor_plan.h"
#include "quant/traits.h"
#include "tokenizer/tokenizer.h"

namespace folio::cli {

namespace {

struct QuantizeArgs {
  std::string input;
  std::string output;
  std::string type;
  std::string method = "rtn";
  std::string imatrix;      // llama.cpp's imatrix GGUF (folio imatrix or llama-imatrix)
  std::string calibration;  // text for --method imatrix / gptq
  int calib_ctx = 512;
  int calib_chunks = 32;
  bool act_order = false;     // --act-order (the default; kept for explicitness)
  bool no_act_order = false;  // --no-act-order: columns in order, scales at each block's start
  double gptq_damp = 0.01;
  double awq_alpha = -1;                  // >= 0: fixed, no search
  bool awq_clip = false;                  // --awq-clip (the default; kept for explicitness)
  bool no_awq_clip = false;               // --no-awq-clip: AWQ's scales alone, no clipping search
  std::vector<std::string> tensor_types;  // PATTERN=TYPE
  std::string output_tensor_type;
  std::string token_embedding_type;
  bool pure = false;
  int threads = 0;              // 0: all cores
  std::string format = "gguf";  // or "gptq": an HF GPTQ checkpoint directory (hf/gptq_export.h)
};

constexpr double kMiB = 1024.0 * 1024.0;

quant::PlanOptions plan_options(const QuantizeArgs& a) {
  quant::PlanOptions o;
  o.recipe = &quant::find_recipe(a.type);
  for (const std::string& spec : a.tensor_types) {
    const auto eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      throw Error("--tensor-type wants PATTERN=TYPE (got '" + spec + "')");
    }
    o.tensor_types.emplace_back(spec.substr(0, eq), quant::writable_type(spec.substr(eq + 1)));
  }
  if (!a.output_tensor_type.empty()) o.output_type = quant::writable_type(a.output_tensor_type);
  if (!a.token_embedding_type.empty()) {
    o.token_embedding_type = quant::writable_type(a.token_embedding_type);
  }
  o.pure = a.pure;
  if (a.format == "gptq") {
    // GPTQ quantizes the block linears alone, all to one width; the exporter
    // carries every other tensor over from the source checkpoint.
    o.pure = true;
    o.output_type = gguf::TensorType::F16;
    o.token_embedding_type = gguf::TensorType::F16;
  }
  return o;
}

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  std::string s;
  for (std::uint64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

bool is_float_type(gguf::TensorType t) {
  return quant::traits(t).block_elems == 1;
}

// Quantizes `rows` rows of `row_len` floats to `type` on `threads` workers
// (contiguous row ranges; every row is independent, so the bytes do not
// depend on the thread count).
std::vector<std::uint8_t> quantize_rows(gguf::TensorType type, const std::vector<float>& src,
                                        std::size_t row_len, std::span<const float> importance,
                                        int threads) {
  const std::size_t rows = src.size() / row_len;
  const std::size_t row_bytes = quant::quantized_bytes(type, row_len);
  std::vector<std::uint8_t> out(rows * row_bytes);
  quant::parallel_rows(rows, threads, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      quant::quantize_row(type, std::span(src).subspan(r * row_len, row_len), importance,
                          std::span(out).subspan(r * row_bytes, row_bytes));
    }
  });
  return out;
}

std::vector<float> dequantized(const gguf::TensorInfo& t) {
  std::vector<float> x(t.n_elements);
  quant::dequantize_row(t.type, t.data, x);
  return x;
}

// What --method needs, checked before any work.
void validate(const QuantizeArgs& a) {
  if (a.method != "rtn" && a.method != "imatrix" && a.method != "gptq" && a.method != "awq") {
    throw Error("--method " + a.method +
                " is not available (folio has rtn, imatrix, gptq and awq)");
  }
  if ((a.method == "gptq" || a.method == "awq") && a.calibration.empty()) {
    throw Error("--method " + a.method + " needs --calibration TEXT_FILE");
  }
  if ((a.method == "gptq" || a.method == "awq") && !a.imatrix.empty()) {
    throw Error("--imatrix is not used by --method " + a.method);
  }
  if (a.method == "imatrix" && a.imatrix.empty() == a.calibration.empty()) {
    throw Error("--method imatrix needs either --imatrix FILE or --calibration TEXT_FILE");
  }
  if (a.method == "rtn" && !a.calibration.empty()) {
    throw Error("--calibration is used by --method imatrix or gptq, not rtn");
  }
  if (a.format != "gguf" && a.format != "gptq") {
    throw Error("--format " + a.format + " is not available (gguf, gptq)");
  }
  if (a.format == "gptq") {
    if (a.type != "Q4_0" && a.type != "Q8_0") {
      throw Error(
          "--format gptq writes GPTQ's symmetric groups of 32, which are --type Q4_0 "
          "(4-bit) or Q8_0 (8-bit); " +
          a.type + " has no exact GPTQ form");
    }
    if (!a.tensor_types.empty() || !a.output_tensor_type.empty() ||
        !a.token_embedding_type.empty()) {
      throw Error(
          "--format gptq quantizes every block linear to --type and keeps the other "
          "tensors as they are; --tensor-type, --output-tensor-type and "
          "--token-embedding-type do not apply");
    }
    if (!std::filesystem::is_directory(a.input)) {
      throw Error(
          "--format gptq needs a Hugging Face checkpoint directory as input (its "
          "tokenizer and config are carried over); " +
          a.input + " is not one");
    }
  }
  if (a.threads < 0) throw Error("--threads must be >= 0 (got " + std::to_string(a.threads) + ")");
  if (a.calib_ctx < 16) {
    throw Error("--calibration-ctx must be >= 16 (got " + std::to_string(a.calib_ctx) + ")");
  }
  if (a.calib_chunks < 0) {
    throw Error("--calibration-chunks must be >= 0 (got " + std::to_string(a.calib_chunks) + ")");
  }
  if (!(a.gptq_damp > 0.0 && a.gptq_damp < 10.0)) {
    throw Error("--gptq-damp must be in (0, 10) (got " + std::to_string(a.gptq_damp) + ")");
  }
  if ((a.act_order || a.no_act_order) && a.method != "gptq") {
    throw Error(std::string(a.act_order ? "--act-order" : "--no-act-order") +
                " is a --method gptq option");
  }
  if ((a.awq_clip || a.no_awq_clip) && a.method != "awq") {
    throw Error(std::string(a.awq_clip ? "--awq-clip" : "--no-awq-clip") +
                " is a --method awq option");
  }
  if (a.awq_clip && a.no_awq_clip) throw Error("--awq-clip and --no-awq-clip contradict");
  if (a.awq_alpha != -1 && (a.method != "awq" || !(a.awq_alpha >= 0 && a.awq_alpha < 1))) {
    throw Error("--awq-alpha wants --method awq and a value in [0, 1) (got " +
                std::to_string(a.awq_alpha) + ")");
  }
  if (a.act_order && a.no_act_order) throw Error("--act-order and --no-act-order contradict");
}

// The calibration text run through the input model with `observer`.
struct Calibration {
  std::string name;
  std::uint64_t hash = 0;
  std::size_t tokens = 0;
  std::size_t chunks = 0;
  std::size_t ctx = 0;
};

Calibration calibrate(const QuantizeArgs& a, const gguf::GgufFile& in, int threads,
                      model::LinearInputObserver& observer) {
  const std::string text = read_text_file(a.calibration);
  const auto tok = tokenizer::Tokenizer::from_gguf(in);
  const auto m = model::Model::load(in);
  const std::vector<TokenId> ids = tok.encode(text, {.add_special = true, .parse_special = false});
  calib::CalibrationOptions o;
  o.ctx = static_cast<std::size_t>(a.calib_ctx);
  o.chunks = static_cast<std::size_t>(a.calib_chunks);
  o.threads = threads;
  Calibration c;
  c.name = std::filesystem::path(a.calibration).filename().string();
  c.hash = calib::text_hash(text);
  c.tokens = ids.size();
  c.chunks = calib::calibration_chunks(ids.size(), o, a.calibration);
  c.ctx = o.ctx;
  const TokenId bos = tok.vocab().add_bos() ? tok.vocab().special().bos.value_or(-1) : -1;
  std::fprintf(stderr, "calibration: %zu chunks of %zu tokens from %s (%zu tokens)\n", c.chunks,
               c.ctx, a.calibration.c_str(), c.tokens);
  calib::run_calibration(m, ids, bos, o, observer, "calibration");
  return c;
}

// AWQ over the block linears, by llama.cpp's tensor names: per layer,
// attn_norm -> {attn_q, attn_k, attn_v}, ffn_norm -> {ffn_gate, ffn_up} and
// ffn_up's rows -> {ffn_down} (down reads act(gate) * up, linear in up).
// attn_output is left alone (its input comes through attention; with grouped
// KV heads a V row feeds several query heads). Returns the new float data of
// every tensor it changed; the model computes the same function.
std::map<std::string, std::vector<float>, std::less<>> awq_transform(
    const gguf::GgufFile& in, const quant::TensorPlan& plan,
    const std::vector<quant::TensorShape>& shapes, const calib::HessianCollector& hessians,
    int threads, double awq_alpha, bool clip) {
  std::map<std::string, std::vector<float>, std::less<>> out;
  const auto info = [&](const std::string& name) { return in.find_tensor(name); };
  const auto data = [&](const std::string& name) -> std::vector<float>& {
    auto it = out.find(name);
    if (it == out.end()) it = out.emplace(name, dequantized(*info(name))).first;
    return it->second;
  };
  const auto choice = [&](const std::string& name) {
    for (const quant::TensorShape& s : shapes) {
      if (s.name == name) return plan.choose(s);
    }
    return quant::TensorChoice{gguf::TensorType::F32, false, ""};
  };
  double total = 0, total_plain = 0;
  std::size_t n_groups = 0;
  double clip_error = 0, clip_plain = 0;
  std::size_t clipped = 0, clip_blocks = 0;
  const auto clip_one = [&](const std::string& l, std::span<const double> H) {
    const quant::TensorChoice c = choice(l);
    const quant::TypeTraits* tr = quant::find_traits(c.type);
    const std::size_t cols = info(l)->dims[0];
    if (!c.quantized || tr == nullptr || tr->block_elems != 32 || cols % 32 != 0) return;
    std::vector<float>& w = data(l);
    quant::AwqClipOptions co;
    co.threads = threads;
    const quant::AwqClipResult cr = quant::awq_clip(w, w.size() / cols, cols, c.type, H, co);
    clip_error += cr.error;
    clip_plain += cr.plain_error;
    clipped += cr.clipped;
    clip_blocks += w.size() / 32;
  };
  for (int layer = 0;; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    if (info(p + "attn_q.weight") == nullptr) break;
    struct Group {
      std::string source;  // norm weight, or the linear whose rows produce the input
      bool source_is_norm;
      std::vector<std::string> linears;
    };
    std::vector<Group> groups = {
        {p + "attn_norm.weight",
         true,
         {p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"}},
        {p + "ffn_norm.weight", true, {p + "ffn_gate.weight", p + "ffn_up.weight"}},
        {p + "ffn_up.weight", false, {p + "ffn_down.weight"}}};
    for (const Group& g : groups) {
      bool ok = info(g.source) != nullptr && !g.linears.empty();
      for (const std::string& l : g.linears) ok = ok && info(l) != nullptr && choice(l).quantized;
      if (!ok || (g.source_is_norm && info(g.source)->dims.size() != 1)) continue;
      const std::vector<double> H = hessians.hessian(g.linears.front());
      const std::vector<float> mean_abs = hessians.mean_abs(g.linears.front());
      const std::size_t cols = info(g.linears.front())->dims[0];
      if (H.empty() || mean_abs.size() != cols) continue;
      std::vector<quant::AwqLinear> ls;
      for (const std::string& l : g.linears) {
        const std::vector<float>& w = data(l);
        ls.push_back({w, w.size() / cols, choice(l).type});
      }
      quant::AwqOptions o;
      o.threads = threads;
      o.fixed_alpha = awq_alpha;
      const quant::AwqScales sc = quant::awq_search(ls, cols, mean_abs, H, o);
      total += sc.error;
      total_plain += sc.plain_error;
      ++n_groups;
      for (const std::string& l : g.linears) {
        std::vector<float>& w = data(l);
        for (std::size_t r = 0; r < w.size() / cols; ++r) {
          for (std::size_t j = 0; j < cols; ++j) w[r * cols + j] *= sc.scales[j];
        }
      }
      if (clip) {
        // The scaled linears read x / s, whose second moment is H_ij / (s_i s_j).
        std::vector<double> Hs(H.size());
        for (std::size_t i = 0; i < cols; ++i) {
          for (std::size_t j = 0; j < cols; ++j) {
            Hs[i * cols + j] = H[i * cols + j] / (static_cast<double>(sc.scales[i]) * sc.scales[j]);
          }
        }
        for (const std::string& l : g.linears) {
          // AutoAWQ leaves q and k unclipped: their error reaches the output through softmax,
          // which e^T H e does not measure.
          if (!l.ends_with("attn_q.weight") && !l.ends_with("attn_k.weight")) clip_one(l, Hs);
        }
      }
      std::vector<float>& src = data(g.source);
      if (g.source_is_norm) {
        for (std::size_t j = 0; j < cols; ++j) src[j] /= sc.scales[j];
      } else {  // the source linear's output rows
        const std::size_t src_cols = info(g.source)->dims[0];
        for (std::size_t r = 0; r < cols; ++r) {
          for (std::size_t j = 0; j < src_cols; ++j) src[r * src_cols + j] /= sc.scales[r];
        }
      }
      std::fprintf(stderr, "\rawq: layer %d, %zu groups, alpha %.2f   ", layer, n_groups, sc.alpha);
    }
    if (clip && info(p + "attn_output.weight") != nullptr) {  // not scaled: its own H
      const std::vector<double> H = hessians.hessian(p + "attn_output.weight");
      if (!H.empty()) clip_one(p + "attn_output.weight", H);
    }
  }
  std::fprintf(
      stderr, "\nawq: %zu groups; measured output error %.4g vs %.4g rounding to nearest (%.3fx)\n",
      n_groups, total, total_plain, total / std::max(total_plain, 1e-30));
  if (clip) {
    std::fprintf(stderr,
                 "awq: clipping search: %zu of %zu blocks clipped (attn_v, attn_output, ffn_gate, "
                 "ffn_up, ffn_down); "
                 "their block error %.4g vs %.4g unclipped (%.3fx)\n",
                 clipped, clip_blocks, clip_error, clip_plain,
                 clip_error / std::max(clip_plain, 1e-30));
    if (clip_blocks == 0) {
      std::fprintf(
          stderr,
          "awq: note: the clipping search found no linear of a 32-value block type (Q4_0, Q4_1, "
          "Q5_0, Q5_1, Q8_0) to clip\n");
    }
  }
  return out;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

int run_quantize(const QuantizeArgs& a) {
  validate(a);
  const int threads = a.threads > 0
                          ? a.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  quant::PlanOptions options = plan_options(a);
  std::optional<calib::Imatrix> imatrix;
  if (!a.imatrix.empty()) {
    imatrix = calib::Imatrix::read(a.imatrix);
    std::fprintf(stderr, "imatrix: %zu entries from %s (%u chunks of %u tokens%s%s)\n",
                 imatrix->entries().size(), a.imatrix.c_str(), imatrix->chunk_count,
                 imatrix->chunk_size, imatrix->datasets.empty() ? "" : " of ",
                 imatrix->datasets.empty() ? "" : imatrix->datasets.front().c_str());
  }
  const std::string in_path = resolve_model_path(a.input);
  std::error_code ec;
  if (std::filesystem::equivalent(in_path, a.output, ec)) {
    throw Error("the output " + a.output + " is the input; write to another file");
  }
  const auto in = open_model_file(in_path);
  std::optional<Calibration> calibration;
  std::optional<calib::HessianCollector> hessians;
  if (a.method == "gptq" || a.method == "awq") {
    hessians.emplace();
    calibration = calibrate(a, in, threads, *hessians);
  } else if (a.method == "imatrix" && !a.calibration.empty()) {
    imatrix.emplace();
    calibration = calibrate(a, in, threads, *imatrix);
    imatrix->datasets = {calibration->name};
    imatrix->chunk_count = static_cast<std::uint32_t>(calibration->chunks);
    imatrix->chunk_size = static_cast<std::uint32_t>(calibration->ctx);
  }
  options.has_importance = imatrix.has_value() || a.method == "gptq";

  std::vector<quant::TensorShape> shapes;
  std::map<std::string, const gguf::TensorInfo*, std::less<>> by_name;
  for (const gguf::TensorInfo& t : in.tensors()) {
    shapes.push_back({std::string(t.name), t.dims, t.type});
    by_name.emplace(std::string(t.name), &t);
  }
  std::sort(shapes.begin(), shapes.end(),
            [](const auto& x, const auto& y) { return quant::tensor_order_less(x.name, y.name); });
  const quant::TensorPlan plan(options, shapes);

  // Refuse what cannot be read before spending any time.
  bool requantizing = false;
  for (const quant::TensorShape& s : shapes) {
    const quant::TensorChoice c = plan.choose(s);
    if (!c.quantized) continue;
    if (quant::find_traits(s.type) == nullptr) {
      throw Error("tensor " + s.name + " has type " + std::string(gguf::tensor_type_name(s.type)) +
                  ", which folio cannot read");
    }
    requantizing = requantizing || !is_float_type(s.type);
  }
  if (requantizing) {
    std::fprintf(stderr,
                 "warning: %s holds quantized tensors; they are dequantized first, so the result "
                 "compounds two quantization errors (quantize from F32/F16/BF16 weights when you "
                 "have them)\n",
                 in_path.c_str());
  }

  gguf::GgufWriter writer(3);
  for (const gguf::MetadataEntry& m : in.metadata()) {
    if (m.key == "general.file_type" || m.key == "general.quantization_version" ||
        m.key.substr(0, 9) == "quantize.") {
      continue;
    }
    writer.add(std::string(m.key), gguf::MetaValue::from(m.value));
  }
  writer.add("general.quantization_version", gguf::MetaValue::integer(gguf::ValueType::UINT32, 2));
  writer.add("general.file_type",
             gguf::MetaValue::integer(gguf::ValueType::UINT32, options.recipe->file_type));
  const std::string method = a.method == "awq" ? "awq"
                             : hessians        ? "gptq"
                             : imatrix         ? "imatrix"
                                               : "rtn";
  writer.add("quantize.method", gguf::MetaValue::string(method));
  if (calibration) {
    writer.add("quantize.calibration.file", gguf::MetaValue::string(calibration->name));
    writer.add("quantize.calibration.xxh64", gguf::MetaValue::string(hex64(calibration->hash)));
    writer.add("quantize.calibration.tokens",
               gguf::MetaValue::u64(static_cast<std::uint64_t>(calibration->tokens)));
    writer.add("quantize.calibration.chunks",
               gguf::MetaValue::integer(gguf::ValueType::UINT32,
                                        static_cast<std::int64_t>(calibration->chunks)));
    writer.add("quantize.calibration.chunk_size",
               gguf::MetaValue::integer(gguf::ValueType::UINT32,
                                        static_cast<std::int64_t>(calibration->ctx)));
  }
  if (a.method == "gptq") {
    writer.add("quantize.gptq.damp", gguf::MetaValue::f32(static_cast<float>(a.gptq_damp)));
    writer.add("quantize.gptq.act_order", gguf::MetaValue::boolean(!a.no_act_order));
  }
  if (imatrix) {  // llama-quantize's keys
    writer.add("quantize.imatrix.file",
               gguf::MetaValue::string(a.imatrix.empty() ? "(computed)" : a.imatrix));
    if (!imatrix->datasets.empty()) {
      writer.add("quantize.imatrix.dataset", gguf::MetaValue::string(imatrix->datasets.front()));
    }
    writer.add("quantize.imatrix.entries_count",
               gguf::MetaValue::integer(gguf::ValueType::INT32,
                                        static_cast<std::int64_t>(imatrix->entries().size())));
    writer.add("quantize.imatrix.chunks_count",
               gguf::MetaValue::integer(gguf::ValueType::INT32, imatrix->chunk_count));
  }

  std::fprintf(stderr, "quantizing %s to %s (%.*s, --method %s, %d threads)\n", in_path.c_str(),
               a.output.c_str(), static_cast<int>(options.recipe->name.size()),
               options.recipe->name.data(), method.c_str(), threads);
  double gptq_error = 0, gptq_rtn_error = 0;
  // AWQ: the scaled weights and the norms / rows that absorb 1/s, by name.
  std::map<std::string, std::vector<float>, std::less<>> transformed;
  if (a.method == "awq") {
    transformed = awq_transform(in, plan, shapes, *hessians, threads, a.awq_alpha, !a.no_awq_clip);
  }
  const auto weights_of = [&](const gguf::TensorInfo& t) {
    const auto it = transformed.find(t.name);
    return it != transformed.end() ? it->second : dequantized(t);
  };
  const Stopwatch total;
  std::uint64_t in_bytes = 0;
  std::uint64_t out_bytes = 0;
  std::size_t n_fallback = 0;
  std::size_t n_without = 0;  // quantized tensors the imatrix has no entry for
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const quant::TensorShape& s = shapes[i];
    const gguf::TensorInfo& t = *by_name.at(s.name);
    quant::TensorChoice c = plan.choose(s);
    const Stopwatch sw;
    std::vector<std::uint8_t> bytes;
    gguf::TensorType type = t.type;
    if (!c.quantized && transformed.contains(s.name)) {  // a norm that absorbed AWQ scales
      type = gguf::TensorType::F32;
      const std::vector<float>& v = transformed.at(s.name);
      bytes.resize(v.size() * sizeof(float));
      std::memcpy(bytes.data(), v.data(), bytes.size());
    } else if (!c.quantized) {
      bytes.assign(t.data.begin(), t.data.end());
    } else {
      type = c.type;
      std::vector<float> importance;
      if (imatrix && quant::traits(type).block_elems > 1) {
        importance = imatrix->importance(s.name);
        if (!importance.empty() && importance.size() != t.dims[0]) {
          throw Error(a.imatrix + ": " + s.name + " has " + std::to_string(importance.size()) +
                      " importances for rows of " + std::to_string(t.dims[0]) +
                      " (an imatrix of another model?)");
        }
        if (importance.empty()) ++n_without;
      }
      std::vector<double> H;
      if (hessians && a.method == "gptq") H = hessians->hessian(s.name);
      if (!H.empty() && quant::has_element_codes(type)) {
        quant::GptqOptions go;
        go.damp = a.gptq_damp;
        go.act_order = !a.no_act_order;
        go.threads = threads;
        const std::size_t cols = t.dims[0];
        const quant::GptqResult g =
            quant::gptq_quantize(type, weights_of(t), t.n_elements / cols, cols, H, go);
        bytes = g.bytes;
        gptq_error += g.error;
        gptq_rtn_error += g.rtn_error;
        char buf[64];
        std::snprintf(buf, sizeof buf, "gptq: ||WX-QX||^2 %.3fx rtn",
                      g.error / std::max(g.rtn_error, 1e-30));
        c.note = c.note.empty() ? buf : c.note + "; " + buf;
      } else {
        bytes = quantize_rows(type, weights_of(t), t.dims[0], importance, threads);
      }
    }
    n_fallback += c.note.starts_with("fallback") ? 1 : 0;
    in_bytes += t.n_bytes;
    out_bytes += bytes.size();
    std::fprintf(stderr, "[%3zu/%3zu] %-32s %-12s %5s -> %-5s %8.2f MiB %6.2f s%s%s\n", i + 1,
                 shapes.size(), s.name.c_str(), dims_text(t.dims).c_str(),
                 std::string(gguf::tensor_type_name(t.type)).c_str(),
                 std::string(gguf::tensor_type_name(type)).c_str(),
                 static_cast<double>(bytes.size()) / kMiB, sw.seconds(),
                 c.note.empty() || c.note == "kept" ? "" : "  (",
                 c.note.empty() || c.note == "kept" ? "" : (c.note + ")").c_str());
    writer.add_tensor(s.name, t.dims, type, std::move(bytes));
  }
  if (a.format == "gptq") {
    hf::write_gptq_checkpoint(in_path, gguf::GgufFile::from_image(writer.to_bytes(), a.output),
                              a.output);
  } else {
    writer.write_file(a.output);
  }
  if (hessians && a.method == "gptq") {
    std::fprintf(stderr,
                 "gptq: sum of ||WX - QX||^2 over the block linears: %.4g vs %.4g rounding to "
                 "nearest (%.3fx)\n",
                 gptq_error, gptq_rtn_error, gptq_error / std::max(gptq_rtn_error, 1e-30));
  }
  if (n_without > 0) {
    std::fprintf(stderr,
                 "note: %zu quantized tensor(s) had no imatrix entry and were rounded to nearest\n",
                 n_without);
  }
  std::fprintf(
      stderr,
      "wrote %s: %.2f MiB -> %.2f MiB (%.1f %% of the input) in %.1f s; %zu tensor(s) fell "
      "back to another type\n",
      a.output.c_str(), static_cast<double>(in_bytes) / kMiB, static_cast<double>(out_bytes) / kMiB,
      in_bytes > 0 ? 100.0 * static_cast<double>(out_bytes) / static_cast<double>(in_bytes) : 0.0,
      total.seconds(), n_fallback);
  return 0;
}

}  // namespace

Command register_quantize(CLI::App& app) {
  auto* sub = app.add_subcommand("quantize", "Write a GGUF with its weights quantized to a type");
  auto args = std::make_shared<QuantizeArgs>();
  sub->add_option(
         "input", args->input,
         "input GGUF (F32/F16/BF16, or quantized: dequantized first) or HF checkpoint directory")
      ->required();
  sub->add_option("output", args->output, "output GGUF (a new directory with --format gptq)")
      ->required();
  std::string types;
  for (const quant::Recipe& r : quant::all_recipes()) {
    types += (types.empty() ? "" : ", ") + std::string(r.name);
  }
  sub->add_option("--type", args->type, "the recipe: " + types)->required();
  sub->add_option("--method", args->method,
                  "rtn (round to nearest; the default; importance-weighted with --imatrix), "
                  "imatrix (importances from --imatrix FILE or --calibration TEXT), gptq (GPTQ "
                  "with Hessians from --calibration TEXT), awq (activation-aware channel scales "
                  "from --calibration TEXT, folded into the norms)");
  sub->add_option("--calibration", args->calibration,
                  "calibration text for --method imatrix / gptq (run through the input model)");
  sub->add_option("--calibration-ctx", args->calib_ctx,
                  "tokens per calibration chunk (default 512)");
  sub->add_option("--calibration-chunks", args->calib_chunks,
                  "calibration chunks (default 32; 0: the whole text)");
  sub->add_flag("--act-order", args->act_order,
                "gptq: columns by descending importance with static groups (the default)");
  sub->add_flag("--no-act-order", args->no_act_order,
                "gptq: columns in order, each block's scales fixed at its first column");
  sub->add_flag("--awq-clip", args->awq_clip,
                "awq (default): after scaling, AWQ's clipping search on the 32-value block "
                "types (each block's largest weights clipped where that lowers its output error; "
                "q and k unclipped)");
  sub->add_flag("--no-awq-clip", args->no_awq_clip, "awq: the scales alone, no clipping search");
  sub->add_option("--awq-alpha", args->awq_alpha,
                  "awq: use scales mean|x|^ALPHA (in [0, 1)) instead of searching ALPHA");
  sub->add_option("--gptq-damp", args->gptq_damp,
                  "gptq: fraction of mean(diag H) added to the diagonal (default 0.01)");
  sub->add_option("--imatrix", args->imatrix,
                  "importance matrix (folio imatrix or llama-imatrix GGUF): weighs each column's "
                  "error by its mean squared activation");
  sub->add_option("--tensor-type", args->tensor_types,
                  "PATTERN=TYPE: tensors whose name matches the regex PATTERN get TYPE "
                  "(repeatable; the first match wins)");
  sub->add_option("--output-tensor-type", args->output_tensor_type, "type of output.weight");
  sub->add_option("--token-embedding-type", args->token_embedding_type,
                  "type of token_embd.weight");
  sub->add_flag("--pure", args->pure, "no mix rules: every quantized tensor gets the base type");
  sub->add_option("-t,--threads", args->threads, "worker threads (default: all cores)");
  sub->add_option("--format", args->format,
                  "gguf (default), or gptq: OUT is a Hugging Face GPTQ checkpoint directory "
                  "(input: an HF checkpoint directory; --type Q4_0 or Q8_0)");
  return {sub, [args]() { return run_quantize(*args); }};
}

}  // namespace folio::cli
