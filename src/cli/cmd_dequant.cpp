// `folio dequant MODEL TENSOR`: a tensor dequantized to float32 with the
// reference dequantizers (quant/), as raw little-endian floats on stdout or
// in --out FILE. `--list` shows the tensors and their types. Used to check
// folio's dequantization against gguf-py on real models
// (tests/python/test_dequant_models.py).
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/model_file.h"
#include "gguf/gguf_file.h"
#include "quant/dequantize.h"
#include "quant/traits.h"

namespace folio::cli {

namespace {

static_assert(std::endian::native == std::endian::little,
              "folio dequant writes host floats as little-endian");

// Closes on error paths; the success path closes explicitly to check for errors.
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

struct DequantArgs {
  std::string model;
  std::string tensor;
  std::string out;
  bool list = false;
};

void list_tensors(const gguf::GgufFile& f) {
  for (const gguf::TensorInfo& t : f.tensors()) {
    std::string dims;
    for (std::uint64_t d : t.dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    std::printf("%.*s\t%.*s\t%s\n", static_cast<int>(t.name.size()), t.name.data(),
                static_cast<int>(gguf::tensor_type_name(t.type).size()),
                gguf::tensor_type_name(t.type).data(), dims.c_str());
  }
}

// Dequantizes `t` in chunks of whole blocks (memory stays bounded whatever
// the tensor size) and writes the floats to `out`.
void write_dequantized(const gguf::TensorInfo& t, std::FILE* out, const std::string& out_name) {
  const quant::TypeTraits& tr = quant::traits(t.type);
  const std::size_t total_bytes = quant::quantized_bytes(t.type, t.n_elements);
  FOLIO_CHECK(total_bytes == t.data.size(), "tensor byte size disagrees with its layout");
  const std::size_t chunk_blocks =
      std::max<std::size_t>(1, (std::size_t{1} << 16) / tr.block_elems);
  std::vector<float> buf(chunk_blocks * tr.block_elems);
  for (std::size_t off = 0; off < t.data.size(); off += chunk_blocks * tr.block_bytes) {
    const std::size_t n_blocks = std::min(chunk_blocks, (t.data.size() - off) / tr.block_bytes);
    const std::span<float> dst = std::span(buf).first(n_blocks * tr.block_elems);
    quant::dequantize_row(t.type, t.data.subspan(off, n_blocks * tr.block_bytes), dst);
    if (std::fwrite(dst.data(), sizeof(float), dst.size(), out) != dst.size()) {
      throw Error("writing " + out_name + " failed: " + std::strerror(errno));
    }
  }
}

int run_dequant(const DequantArgs& a) {
  const auto f = open_model_file(resolve_model_path(a.model));
  if (a.list) {
    list_tensors(f);
    return 0;
  }
  if (a.tensor.empty()) throw Error("no tensor given; `folio dequant MODEL --list` shows them");
  const gguf::TensorInfo* t = f.find_tensor(a.tensor);
  if (t == nullptr) {
    throw Error("no tensor named '" + a.tensor + "' in " + f.source() +
                "; `folio dequant MODEL --list` shows them");
  }
  if (a.out.empty()) {
    if (isatty(fileno(stdout))) {
      throw Error("refusing to write binary floats to a terminal; redirect stdout or use --out");
    }
    write_dequantized(*t, stdout, "stdout");
    if (std::fflush(stdout) != 0)
      throw Error(std::string("writing stdout failed: ") + std::strerror(errno));
    return 0;
  }
  std::unique_ptr<std::FILE, FileCloser> out(std::fopen(a.out.c_str(), "wb"));
  if (!out) throw Error("cannot create " + a.out + ": " + std::strerror(errno));
  write_dequantized(*t, out.get(), a.out);
  if (std::fclose(out.release()) != 0)
    throw Error("writing " + a.out + " failed: " + std::strerror(errno));
  return 0;
}

}  // namespace

Command register_dequant(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "dequant", "Write a tensor dequantized to float32 (raw little-endian) to stdout or --out");
  auto args = std::make_shared<DequantArgs>();
  sub->add_option("model", args->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("tensor", args->tensor, "tensor name (see --list)");
  sub->add_option("-o,--out", args->out, "write the floats to FILE instead of stdout");
  sub->add_flag("--list", args->list, "list the tensors: name, type, dims (ggml order)");
  return {sub, [args]() { return run_dequant(*args); }};
}

}  // namespace folio::cli
