// kernels/matmul.cpp: WeightMatrix preparation and the fast matmul driver.
//
// Work decomposition for Y[n x rows] = X[n x cols] . W^T:
//   1. activations are converted once into the weight type's activation
//      format (16- or 8-bit blocks for quantized weights, see ActivationBits),
//      in parallel over rows of X;
//   2. weight rows are split among threads in runs of kRowTile rows;
//   3. each thread walks X in chunks of kActChunk rows (kept in L2) and, for
//      each run of kRowTile weight rows (kept in L1), calls the type's tile
//      kernel for groups of kMaxTileCols activation rows, which unpacks each
//      weight block once for the whole group.
// Types with a panel kernel (cpu/gemm_avx2_panel.cpp) are repacked at prepare
// time when AVX2 or higher is active, and then run matmul_panels instead of
// step 3: each thread owns a run of 8-row panels (pairs of them for the
// AVX-512 kernels) and walks X in the same chunks; matmul_shared_input lays
// several matrices' panels end to end and splits them in one pass. Which
// kernel runs at which ISA level is cpu/dispatch.cpp's table.
// When the ISA is forced lower later (tests), the scalar tiles read the
// untouched GGUF bytes (file_bytes()).
#include "kernels/matmul.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/huge_page_arena.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu_features.h"
#include "quant/traits.h"

namespace folio::kernels {

namespace {

constexpr std::size_t kRowTile = 16;                // weight rows per tile call (L1-resident)
constexpr std::size_t kActChunk = 64;               // activation rows per pass (L2-resident)
constexpr std::size_t kAmxChunk = 256;              // activation rows per pass of the AMX tiles
constexpr std::size_t kAmxMinRows = cpu::kAmxRows;  // fewer: the panel kernels

const cpu::GemmKernel* select_kernel(gguf::TensorType type, ActivationBits bits) {
  return cpu::gemm_kernel(active_isa(), type, bits);
}

const cpu::PanelKernel* active_panel_kernel(gguf::TensorType type, ActivationBits bits) {
  return cpu::panel_kernel(active_isa(), type, bits);
}

// The AMX tiles of a repacked type for a call with n activation rows, or
// nullptr when the panel kernels run it.
const cpu::AmxKernel* amx_for(gguf::TensorType type, ActivationBits bits, std::size_t n) {
  return n >= kAmxMinRows ? cpu::amx_kernel(active_isa(), type, bits) : nullptr;
}

// Per-calling-thread scratch for quantized activations: grows to the largest
// call seen and is then reused, so steady-state calls do not allocate.
std::vector<std::uint8_t>& act_scratch() {
  thread_local std::vector<std::uint8_t> buf;
  return buf;
}

}  // namespace

ActivationBits parse_activation_bits(int bits) {
  if (bits == 16) return ActivationBits::k16;
  if (bits == 8) return ActivationBits::k8;
  throw Error(
      "activation bits " + std::to_string(bits) +
      ": expected 16 (default, reference-grade logits) or 8 (llama.cpp's precision, faster)");
}

WeightMatrix WeightMatrix::prepare(gguf::TensorType type, std::span<const std::uint8_t> bytes,
                                   std::size_t rows, std::size_t cols) {
  const quant::TypeTraits& t = quant::traits(type);  // throws for unknown types
  if (cpu::scalar_gemm_kernel(type, ActivationBits::k16) == nullptr) {
    throw Error("matmul does not support weights of type " + std::string(t.name));
  }
  if (rows == 0 || cols == 0 || cols % t.block_elems != 0) {
    throw Error("weight matrix " + std::to_string(rows) + "x" + std::to_string(cols) + " of " +
                std::string(t.name) + ": columns must be a positive multiple of " +
                std::to_string(t.block_elems));
  }
  const std::size_t row_bytes = cols / t.block_elems * t.block_bytes;
  if (bytes.size() / row_bytes < rows || bytes.size() != rows * row_bytes) {
    throw Error("weight matrix " + std::to_string(rows) + "x" + std::to_string(cols) + " of " +
                std::string(t.name) + " needs " + std::to_string(rows * row_bytes) +
                " bytes, got " + std::to_string(bytes.size()));
  }
  WeightMatrix w;
  w.type_ = type;
  w.rows_ = rows;
  w.cols_ = cols;
  w.bytes_ = bytes;
  w.file_bytes_ = bytes;
  // The panel layout is the same for both activation widths.
  if (const cpu::PanelKernel* pk = active_panel_kernel(type, ActivationBits::k16)) {
    const std::size_t size = cpu::panel_matrix_bytes(*pk, rows, cols);
    // Huge pages: decode streams these every token (base/huge_page_arena.h).
    std::shared_ptr<std::uint8_t[]> buf = alloc_huge_paged(size);
    pk->repack(bytes.data(), rows, cols, buf.get());
    w.bytes_ = {buf.get(), size};
    w.owned_ = std::move(buf);
  }
  return w;
}

namespace {

// Converts X into the kernel's activation format (or returns X itself).
const std::uint8_t* prepare_activations(cpu::QuantizeRowFn quantize, const float* x, std::size_t n,
                                        std::size_t cols, std::size_t x_stride, ThreadPool& pool) {
  if (quantize == nullptr) return reinterpret_cast<const std::uint8_t*>(x);
  std::vector<std::uint8_t>& buf = act_scratch();
  if (buf.size() < n * x_stride) buf.resize(n * x_stride);
  std::uint8_t* out = buf.data();
  if (n == 1) {
    quantize(x, cols, out);
  } else {
    pool.parallel_for(n, [&](std::size_t b, std::size_t e, int) {
      for (std::size_t i = b; i < e; ++i) quantize(x + i * cols, cols, out + i * x_stride);
    });
  }
  return out;
}

std::size_t panel_count(const WeightMatrix& w) {
  return (w.rows() + cpu::kPanelRows - 1) / cpu::kPanelRows;
}

// Panels [pb, pe) of w against the n converted activation rows xa.
void run_panels(const cpu::PanelKernel& k, const WeightMatrix& w, const std::uint8_t* xa,
                std::size_t x_stride, std::size_t n, float* y, std::size_t pb, std::size_t pe) {
  const std::size_t rows = w.rows(), cols = w.cols();
  const std::size_t panel_stride = cols / k.block_elems * k.group_bytes;
  const std::uint8_t* wb = w.bytes().data();
  const std::size_t step = k.pair != nullptr ? 2 : 1;
  for (std::size_t c0 = 0; c0 < n; c0 += kActChunk) {
    const std::size_t c1 = std::min(n, c0 + kActChunk);
    for (std::size_t p = pb; p < pe; p += step) {
      const std::size_t r0 = p * cpu::kPanelRows;
      const bool two = step == 2 && p + 1 < pe;
      const std::size_t nr = std::min(two ? 2 * cpu::kPanelRows : cpu::kPanelRows, rows - r0);
      const std::size_t wide = two ? k.pair_cols : cpu::kMaxTileCols;
      for (std::size_t c = c0; c < c1; c += wide) {
        const std::size_t nc = std::min(wide, c1 - c);
        if (two) {
          k.pair(wb + p * panel_stride, panel_stride, cols, xa + c * x_stride, x_stride, nc,
                 y + c * rows + r0, rows, nr);
        } else {
          k.panel(wb + p * panel_stride, cols, xa + c * x_stride, x_stride, nc, y + c * rows + r0,
                  rows, nr);
        }
      }
    }
  }
}

// Every output's matrix (same columns, same kernel) in one pass of the pool.
// With a two-panel kernel, threads take pairs of panels (a thread's last
// panel of a matrix may run alone: the results are the same either way).
void matmul_panels(const cpu::PanelKernel& k, std::span<const MatmulOutput> outs, const float* x,
                   std::size_t n, ThreadPool& pool) {
  const std::size_t cols = outs[0].w->cols();
  const std::size_t x_stride = cpu::act_row_bytes(k.act, cols);
  const std::uint8_t* xa = prepare_activations(k.quantize, x, n, cols, x_stride, pool);
  const std::size_t step = k.pair != nullptr ? 2 : 1;
  // Work units (panels or pairs) of output m: [first[m], first[m + 1]).
  std::array<std::size_t, kMaxSharedOutputs + 1> first{};
  for (std::size_t m = 0; m < outs.size(); ++m)
    first[m + 1] = first[m] + (panel_count(*outs[m].w) + step - 1) / step;
  pool.parallel_for(first[outs.size()], [&](std::size_t qb, std::size_t qe, int) {
    for (std::size_t m = 0; m < outs.size(); ++m) {
      const std::size_t ub = std::max(qb, first[m]), ue = std::min(qe, first[m + 1]);
      if (ub >= ue) continue;
      run_panels(k, *outs[m].w, xa, x_stride, n, outs[m].y, (ub - first[m]) * step,
                 std::min(panel_count(*outs[m].w), (ue - first[m]) * step));
    }
  });
}

// Prefill with AMX tiles: the first n rounded down to kAmxRows activation
// rows run as tiles, threads owning runs of panel pairs (kAmxChunk
// activation rows at a time, so they stay in L2 while the pair's unpacked
// weights are reused); the rest run the panel kernels. Every kernel gives the
// same bits, so where the split falls does not matter.
void matmul_amx(const cpu::AmxKernel& a, const cpu::PanelKernel& pk, const WeightMatrix& w,
                const float* x, std::size_t n, float* y, ThreadPool& pool) {
  const std::size_t rows = w.rows(), cols = w.cols(), nb = cols / 32;
  const std::size_t m = n / cpu::kAmxRows * cpu::kAmxRows;
  const std::size_t group = nb * a.tile_block_bytes;  // 16 regrouped rows
  // The calling thread's buffer (a thread_local named inside the lambdas
  // would be each worker's own).
  thread_local std::vector<std::uint8_t> tiles;
  if (tiles.size() < m / cpu::kAmxRows * group) tiles.resize(m / cpu::kAmxRows * group);
  std::uint8_t* const xt = tiles.data();
  if (a.quantize_tiles != nullptr) {
    pool.parallel_for(m / cpu::kAmxRows, [&](std::size_t gb, std::size_t ge, int) {
      for (std::size_t g = gb; g < ge; ++g)
        a.quantize_tiles(x + g * cpu::kAmxRows * cols, cols, xt + g * group);
    });
  } else {
    const std::size_t x_stride = cpu::act_row_bytes(a.act, cols);
    const std::uint8_t* xa = prepare_activations(a.quantize, x, m, cols, x_stride, pool);
    pool.parallel_for(m / cpu::kAmxRows, [&](std::size_t gb, std::size_t ge, int) {
      for (std::size_t g = gb; g < ge; ++g) {
        a.regroup(xa + g * cpu::kAmxRows * x_stride, x_stride, nb, xt + g * group);
      }
    });
  }
  const std::size_t panel_stride = nb * a.group_bytes;
  const std::size_t panels = (rows + cpu::kPanelRows - 1) / cpu::kPanelRows;
  const std::uint8_t* wb = w.bytes().data();
  pool.parallel_for((panels + 1) / 2, [&](std::size_t qb, std::size_t qe, int) {
    thread_local std::vector<std::uint8_t> scratch;
    if (scratch.size() < cpu::amx_scratch_bytes(cols)) scratch.resize(cpu::amx_scratch_bytes(cols));
    for (std::size_t c0 = 0; c0 < m; c0 += kAmxChunk) {
      const std::size_t c1 = std::min(m, c0 + kAmxChunk);
      for (std::size_t q = qb; q < qe; ++q) {
        const std::size_t p = 2 * q, r0 = p * cpu::kPanelRows;
        const std::uint8_t* p0 = wb + p * panel_stride;
        const std::uint8_t* p1 = p + 1 < panels ? p0 + panel_stride : nullptr;
        a.run(p0, p1, cols, xt + c0 / cpu::kAmxRows * group, c1 - c0, y + c0 * rows + r0, rows,
              std::min(2 * cpu::kPanelRows, rows - r0), scratch.data());
      }
    }
  });
  if (m < n) {
    const MatmulOutput rest{&w, y + m * rows};
    matmul_panels(pk, {&rest, 1}, x + m * cols, n - m, pool);
  }
}

}  // namespace

void matmul_shared_input(std::span<const MatmulOutput> outs, const float* x, std::size_t n,
                         ThreadPool& pool, ActivationBits bits) {
  FOLIO_CHECK(outs.size() <= kMaxSharedOutputs, "matmul_shared_input: too many outputs");
  if (outs.empty() || n == 0) return;
  const WeightMatrix& w0 = *outs[0].w;
  const cpu::PanelKernel* pk =
      w0.repacked() ? cpu::panel_kernel(active_isa(), w0.type(), bits, n) : nullptr;
  bool shared = pk != nullptr && amx_for(w0.type(), bits, n) == nullptr;
  for (const MatmulOutput& o : outs) {
    shared = shared && o.w->repacked() && o.w->type() == w0.type() && o.w->cols() == w0.cols();
  }
  if (!shared) {
    for (const MatmulOutput& o : outs) matmul(*o.w, x, n, o.y, pool, bits);
    return;
  }
  matmul_panels(*pk, outs, x, n, pool);
}

std::string_view matmul_kernels(Isa isa) {
  FOLIO_CHECK(isa <= detected_isa(), "matmul_kernels: a level above this CPU's");
  return cpu::gemm_kernel_summary(isa);
}

void matmul(const WeightMatrix& w, const float* x, std::size_t n, float* y, ThreadPool& pool,
            ActivationBits bits) {
  if (n == 0) return;
  if (w.repacked()) {
    if (const cpu::PanelKernel* pk = cpu::panel_kernel(active_isa(), w.type(), bits, n)) {
      if (const cpu::AmxKernel* a = amx_for(w.type(), bits, n)) {
        matmul_amx(*a, *pk, w, x, n, y, pool);
      } else {
        const MatmulOutput out{&w, y};
        matmul_panels(*pk, {&out, 1}, x, n, pool);
      }
      return;
    }
  }
  const cpu::GemmKernel* k = select_kernel(w.type(), bits);
  FOLIO_CHECK(k != nullptr, "prepared weight matrix without a kernel");
  const std::size_t rows = w.rows(), cols = w.cols();
  const std::size_t w_stride = w.file_bytes().size() / rows;
  const std::size_t x_stride = cpu::act_row_bytes(k->act, cols);
  const std::uint8_t* xa = prepare_activations(k->quantize, x, n, cols, x_stride, pool);
  const std::uint8_t* wb = w.file_bytes().data();
  pool.parallel_for_grain(rows, kRowTile, [&](std::size_t rb, std::size_t re, int) {
    for (std::size_t c0 = 0; c0 < n; c0 += kActChunk) {
      const std::size_t c1 = std::min(n, c0 + kActChunk);
      for (std::size_t r0 = rb; r0 < re; r0 += kRowTile) {
        const std::size_t nr = std::min(kRowTile, re - r0);
        for (std::size_t c = c0; c < c1; c += cpu::kMaxTileCols) {
          const std::size_t nc = std::min(cpu::kMaxTileCols, c1 - c);
          k->tile(wb + r0 * w_stride, w_stride, nr, cols, xa + c * x_stride, x_stride, nc,
                  y + c * rows + r0, rows);
        }
      }
    }
  });
}

}  // namespace folio::kernels
