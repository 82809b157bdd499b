// bench/membw.cpp -- roofline probe: memory bandwidth and peak SIMD arithmetic of this machine.
//
// Owns: the two numbers every later folio benchmark divides by.
//   * decode (token generation) is bandwidth-bound: each token streams every weight once, so
//     tokens/s <= measured read GB/s / weight bytes;
//   * prefill is compute-bound: ~2 FLOPs per parameter per token, so
//     tokens/s <= measured peak GFLOP/s (or int8 GOP/s for quantized dots) / (2 * params).
//
// Kernels are hand-written AVX2 so the numbers are what our own SIMD code can reach, not what a
// library call happens to do (glibc memcpy switches to non-temporal stores on big copies, which
// changes what is measured). Each measurement runs once as warm-up, then N times; we print the
// median (robust to the other tenants of a shared machine) and the min..max spread.
//
// Build: bench/build_probes.sh. Run: membw [--runs N] [--size-mib M] [--threads 1,2] [--huge]
// [--json F]. --huge backs the buffers with 2 MiB transparent huge pages (madvise), as folio's
// repacked weights are (src/base/huge_page_arena.h); without it they are 4 KiB pages.
// Needs AVX2 + FMA (x86-64-v3); the build uses -march=native.
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int runs = 7;
  std::size_t size_mib = 512;  // per buffer; far above L3 (32 MiB on this EPYC)
  std::vector<int> threads = {1, 2};
  bool sweep = true;  // read bandwidth vs working-set size (cache levels)
  bool huge = false;  // buffers in 2 MiB transparent huge pages
  std::string json_path;
};

struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stats s;
  s.min = v.front();
  s.max = v.back();
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return s;
}

// Aligned buffer (64 bytes, or 2 MiB and advised for transparent huge pages), filled on
// allocation so pages are touched before timing.
struct AlignedBuffer {
  AlignedBuffer(std::size_t bytes, bool huge) : size(bytes) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t align = huge ? kHuge : 64;
    const std::size_t alloc = (bytes + align - 1) / align * align;
    data = static_cast<std::uint8_t*>(std::aligned_alloc(align, alloc));
    if (data && huge && ::madvise(data, alloc, MADV_HUGEPAGE) != 0)
      std::fprintf(stderr, "membw: madvise(MADV_HUGEPAGE) refused: %s\n", std::strerror(errno));
    if (!data) {
      std::fprintf(stderr, "membw: cannot allocate %zu MiB\n", bytes >> 20);
      std::exit(1);
    }
    for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<std::uint8_t>(i * 131u);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  std::uint8_t* data;
  std::size_t size;
};

void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % static_cast<int>(std::thread::hardware_concurrency()), &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort
}

// Runs body(tid) on n pinned threads started together; returns wall seconds from the common
// start to the last thread's finish.
double run_parallel(int n, const std::function<void(int)>& body) {
  std::barrier start(n);
  std::vector<Clock::time_point> t0(n), t1(n);
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) {
    pool.emplace_back([&, t] {
      pin_to_cpu(t);
      start.arrive_and_wait();
      t0[t] = Clock::now();
      body(t);
      t1[t] = Clock::now();
    });
  }
  for (auto& th : pool) th.join();
  const auto first = *std::min_element(t0.begin(), t0.end());
  const auto last = *std::max_element(t1.begin(), t1.end());
  return std::chrono::duration<double>(last - first).count();
}

// Sink so the optimizer cannot drop the reductions.
volatile std::uint64_t g_sink;

// ---- memory kernels (bytes must be a multiple of 128) --------------------------------------

std::uint64_t read_sum(const std::uint8_t* p, std::size_t bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (std::size_t i = 0; i < bytes; i += 128) {
    a0 = _mm256_add_epi32(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi32(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi32(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi32(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i s = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3));
  return static_cast<std::uint64_t>(_mm256_extract_epi64(s, 0) + _mm256_extract_epi64(s, 3));
}

// Regular stores: the destination lines are read for ownership first, so real traffic is
// ~3x bytes; we report 2x (read + write) like STREAM does.
void copy_avx2(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 64) {
    const __m256i x0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i x1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i + 32));
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i), x0);
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i + 32), x1);
  }
}

// Non-temporal stores skip the read-for-ownership: the best a streaming write can do.
void copy_stream(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 64) {
    const __m256i x0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i x1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), x0);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32), x1);
  }
  _mm_sfence();
}

// ---- compute kernels ----------------------------------------------------------------------

// 12 independent FMA chains: Zen 3 has 2 FMA pipes with 4-cycle latency, so >= 8 chains are
// needed to keep both busy; 12 leaves headroom and still fits the 16 ymm registers.
// Returns FLOPs done (each FMA on 8 floats = 16 FLOPs).
double fma_peak(std::uint64_t iters) {
  __m256 a0 = _mm256_set1_ps(0.1f), a1 = _mm256_set1_ps(0.2f), a2 = _mm256_set1_ps(0.3f);
  __m256 a3 = _mm256_set1_ps(0.4f), a4 = _mm256_set1_ps(0.5f), a5 = _mm256_set1_ps(0.6f);
  __m256 a6 = _mm256_set1_ps(0.7f), a7 = _mm256_set1_ps(0.8f), a8 = _mm256_set1_ps(0.9f);
  __m256 a9 = _mm256_set1_ps(1.0f), a10 = _mm256_set1_ps(1.1f), a11 = _mm256_set1_ps(1.2f);
  const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (std::uint64_t i = 0; i < iters; ++i) {
    a0 = _mm256_fmadd_ps(a0, b, c);
    a1 = _mm256_fmadd_ps(a1, b, c);
    a2 = _mm256_fmadd_ps(a2, b, c);
    a3 = _mm256_fmadd_ps(a3, b, c);
    a4 = _mm256_fmadd_ps(a4, b, c);
    a5 = _mm256_fmadd_ps(a5, b, c);
    a6 = _mm256_fmadd_ps(a6, b, c);
    a7 = _mm256_fmadd_ps(a7, b, c);
    a8 = _mm256_fmadd_ps(a8, b, c);
    a9 = _mm256_fmadd_ps(a9, b, c);
    a10 = _mm256_fmadd_ps(a10, b, c);
    a11 = _mm256_fmadd_ps(a11, b, c);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  float out[8];
  _mm256_storeu_ps(out, s);
  g_sink = static_cast<std::uint64_t>(out[0] + out[7]);
  return static_cast<double>(iters) * 12 * 16;
}

// Keeps the integer probes' 8 accumulators live: their sum goes to g_sink.
void sink_sum(__m256i c0, __m256i c1, __m256i c2, __m256i c3, __m256i c4, __m256i c5, __m256i c6,
              __m256i c7) {
  const __m256i s =
      _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                       _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
  g_sink = static_cast<std::uint64_t>(_mm256_extract_epi64(s, 0));
}

// The int8 dot-product step of llama.cpp-style Q8 kernels:
//   vpmaddubsw (u8 x s8 -> pairwise s16), vpmaddwd by ones (-> s32), vpaddd into the accumulator.
// 8 independent chains in one asm block (see int16_dot_peak: written in C++, GCC spilled the
// accumulators and the probe reported ~0.65 steps a cycle, below the rate folio's own 8-bit
// kernel reaches; figures before 2026-12-07 came from that version). Returns int8 ops (32 MACs
// = 64 ops per step).
double int8_dot_peak(std::uint64_t iters) {
  const __m256i x = _mm256_set1_epi8(3), y = _mm256_set1_epi8(-5);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
          c7 = c0, t0, t1, t2, t3;
  for (std::uint64_t i = 0; i < iters; ++i) {
    asm volatile(
        "vpmaddubsw %[y], %[x], %[t0]\n\tvpmaddwd %[one], %[t0], %[t0]\n\t"
        "vpaddd %[t0], %[c0], %[c0]\n\t"
        "vpmaddubsw %[y], %[x], %[t1]\n\tvpmaddwd %[one], %[t1], %[t1]\n\t"
        "vpaddd %[t1], %[c1], %[c1]\n\t"
        "vpmaddubsw %[y], %[x], %[t2]\n\tvpmaddwd %[one], %[t2], %[t2]\n\t"
        "vpaddd %[t2], %[c2], %[c2]\n\t"
        "vpmaddubsw %[y], %[x], %[t3]\n\tvpmaddwd %[one], %[t3], %[t3]\n\t"
        "vpaddd %[t3], %[c3], %[c3]\n\t"
        "vpmaddubsw %[y], %[x], %[t0]\n\tvpmaddwd %[one], %[t0], %[t0]\n\t"
        "vpaddd %[t0], %[c4], %[c4]\n\t"
        "vpmaddubsw %[y], %[x], %[t1]\n\tvpmaddwd %[one], %[t1], %[t1]\n\t"
        "vpaddd %[t1], %[c5], %[c5]\n\t"
        "vpmaddubsw %[y], %[x], %[t2]\n\tvpmaddwd %[one], %[t2], %[t2]\n\t"
        "vpaddd %[t2], %[c6], %[c6]\n\t"
        "vpmaddubsw %[y], %[x], %[t3]\n\tvpmaddwd %[one], %[t3], %[t3]\n\t"
        "vpaddd %[t3], %[c7], %[c7]"
        : [c0] "+x"(c0), [c1] "+x"(c1), [c2] "+x"(c2), [c3] "+x"(c3), [c4] "+x"(c4), [c5] "+x"(c5),
          [c6] "+x"(c6), [c7] "+x"(c7), [t0] "=&x"(t0), [t1] "=&x"(t1), [t2] "=&x"(t2),
          [t3] "=&x"(t3)
        : [x] "x"(x), [y] "x"(y), [one] "x"(ones));
  }
  sink_sum(c0, c1, c2, c3, c4, c5, c6, c7);
  return static_cast<double>(iters) * 8 * 64;
}

// The int16 dot-product step of folio's AVX2 kernels at the default 16-bit activations:
//   vpmaddwd (s16 x s16 -> pairwise s32), vpaddd into the accumulator. 8 independent chains,
// written as one asm block: in C++ GCC kept 8 accumulators plus 6 inputs by spilling the
// accumulators, so every chain waited on a store and a reload (0.67 steps a cycle on a Zen 3
// core that runs ~1.5). Returns int16 ops (16 MACs = 32 ops per step).
double int16_dot_peak(std::uint64_t iters) {
  const __m256i x = _mm256_set1_epi16(3), y = _mm256_set1_epi16(-5);
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
          c7 = c0, t0, t1, t2, t3;
  for (std::uint64_t i = 0; i < iters; ++i) {
    asm volatile(
        "vpmaddwd %[x], %[y], %[t0]\n\tvpaddd %[t0], %[c0], %[c0]\n\t"
        "vpmaddwd %[x], %[y], %[t1]\n\tvpaddd %[t1], %[c1], %[c1]\n\t"
        "vpmaddwd %[x], %[y], %[t2]\n\tvpaddd %[t2], %[c2], %[c2]\n\t"
        "vpmaddwd %[x], %[y], %[t3]\n\tvpaddd %[t3], %[c3], %[c3]\n\t"
        "vpmaddwd %[x], %[y], %[t0]\n\tvpaddd %[t0], %[c4], %[c4]\n\t"
        "vpmaddwd %[x], %[y], %[t1]\n\tvpaddd %[t1], %[c5], %[c5]\n\t"
        "vpmaddwd %[x], %[y], %[t2]\n\tvpaddd %[t2], %[c6], %[c6]\n\t"
        "vpmaddwd %[x], %[y], %[t3]\n\tvpaddd %[t3], %[c7], %[c7]"
        : [c0] "+x"(c0), [c1] "+x"(c1), [c2] "+x"(c2), [c3] "+x"(c3), [c4] "+x"(c4), [c5] "+x"(c5),
          [c6] "+x"(c6), [c7] "+x"(c7), [t0] "=&x"(t0), [t1] "=&x"(t1), [t2] "=&x"(t2),
          [t3] "=&x"(t3)
        : [x] "x"(x), [y] "x"(y));
  }
  sink_sum(c0, c1, c2, c3, c4, c5, c6, c7);
  return static_cast<double>(iters) * 8 * 32;
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// The fused 512-bit dot products folio's AVX-512 kernels use: vpdpwssd (int16 pairs, the 16-bit
// default activations; 32 MACs = 64 ops per instruction) and vpdpbusd (u8 x s8 quads, 8-bit
// activations; 64 MACs = 128 ops). 8 independent chains each, every one on its own pair of
// inputs: chains with the same inputs and start were merged by the compiler into one (the probe
// reported twice the true rate until 2026-12-05: 469 GOP/s for vpdpwssd on a Zen 4 core that
// retires one per cycle, 234 GOP/s).
template <bool kInt8>
double vnni_peak(std::uint64_t iters) {
  __m512i x0 = _mm512_set1_epi16(3), x1 = _mm512_set1_epi16(5);
  __m512i x2 = _mm512_set1_epi16(7), x3 = _mm512_set1_epi16(9);
  __m512i y0 = _mm512_set1_epi16(-1), y1 = _mm512_set1_epi16(2);
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
          c7 = c0;
  auto step = [](__m512i acc, __m512i a, __m512i b) {
    return kInt8 ? _mm512_dpbusd_epi32(acc, a, b) : _mm512_dpwssd_epi32(acc, a, b);
  };
  for (std::uint64_t i = 0; i < iters; ++i) {
    asm volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3), "+v"(y0), "+v"(y1));
    c0 = step(c0, x0, y0);
    c1 = step(c1, x1, y0);
    c2 = step(c2, x2, y0);
    c3 = step(c3, x3, y0);
    c4 = step(c4, x0, y1);
    c5 = step(c5, x1, y1);
    c6 = step(c6, x2, y1);
    c7 = step(c7, x3, y1);
  }
  const __m512i s =
      _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                       _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
  alignas(64) std::int32_t lanes[16];
  _mm512_store_si512(lanes, s);
  g_sink = static_cast<std::uint64_t>(lanes[0] + lanes[15]);
  return static_cast<double>(iters) * 8 * (kInt8 ? 128 : 64);
}
#endif

#if defined(__AMX_INT8__) && defined(__AMX_TILE__)
// AMX int8 tile products, 16 x 16 outputs per instruction, four independent accumulators. K = 64
// (the full tile) or K = 32 (one 32-value quant block per product, as folio's AMX kernels run):
// 2 * 16 * 16 * K ops each. Linux grants the tile state on request (arch_prctl); 0 if refused.
template <int K>
double amx_peak(std::uint64_t iters) {
  constexpr long kReqXcompPerm = 0x1023, kXtiledata = 18;
  if (syscall(SYS_arch_prctl, kReqXcompPerm, kXtiledata) != 0) return 0;
  struct alignas(64) Config {
    std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
  } cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  cfg.colsb[4] = cfg.colsb[5] = K;    // A tiles: 16 rows of K bytes
  cfg.rows[6] = cfg.rows[7] = K / 4;  // B tiles: K/4 rows of 64 bytes
  _tile_loadconfig(&cfg);
  alignas(64) static std::uint8_t buf[1024] = {};
  _tile_loadd(4, buf, 64);
  _tile_loadd(5, buf, 64);
  _tile_loadd(6, buf, 64);
  _tile_loadd(7, buf, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (std::uint64_t i = 0; i < iters; ++i) {
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  alignas(64) std::int32_t out[256];
  _tile_stored(0, out, 64);
  _tile_release();
  g_sink = static_cast<std::uint64_t>(out[0]);
  return static_cast<double>(iters) * 4 * 2 * 16 * 16 * K;
}
#endif

// ---- measurement drivers -------------------------------------------------------------------

struct Result {
  std::string name;
  int threads;
  std::string unit;
  Stats stats;
};

// Times `once` (which returns the amount of work done, in the unit's base) opts.runs times after
// one warm-up and converts to unit per second scaled by 1e-9.
Stats measure(int runs, const std::function<double(double&)>& once) {
  double work = 0;
  once(work);  // warm-up
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    const double secs = once(work);
    rates.push_back(work / secs * 1e-9);
  }
  return summarize(rates);
}

// Splits [0, bytes) into n 128-byte-aligned slices.
std::pair<std::size_t, std::size_t> slice(std::size_t bytes, int n, int t) {
  const std::size_t per = bytes / static_cast<std::size_t>(n) / 128 * 128;
  return {per * static_cast<std::size_t>(t), per};
}

Stats measure_read(const AlignedBuffer& buf, std::size_t bytes, int n, int runs) {
  // Small working sets repeat the pass so a run lasts long enough to time (~256 MiB touched).
  const std::size_t passes = std::max<std::size_t>(1, (std::size_t{256} << 20) / bytes);
  return measure(runs, [&](double& work) {
    work = static_cast<double>(slice(bytes, n, 0).second) * n * passes;
    return run_parallel(n, [&](int t) {
      const auto [off, len] = slice(bytes, n, t);
      std::uint64_t s = 0;
      for (std::size_t p = 0; p < passes; ++p) s += read_sum(buf.data + off, len);
      g_sink = s;
    });
  });
}

Stats measure_copy(AlignedBuffer& dst, const AlignedBuffer& src, int n, int runs, bool stream) {
  return measure(runs, [&](double& work) {
    work = 2.0 * static_cast<double>(slice(src.size, n, 0).second) * n;
    return run_parallel(n, [&](int t) {
      const auto [off, len] = slice(src.size, n, t);
      if (stream)
        copy_stream(dst.data + off, src.data + off, len);
      else
        copy_avx2(dst.data + off, src.data + off, len);
    });
  });
}

Stats measure_compute(int n, int runs, double (*kernel)(std::uint64_t), std::uint64_t iters) {
  return measure(runs, [&](double& work) {
    std::vector<double> per(n);
    const double secs = run_parallel(n, [&](int t) { per[t] = kernel(iters); });
    work = 0;
    for (double w : per) work += w;
    return secs;
  });
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "membw: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--runs")
      o.runs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--size-mib")
      o.size_mib = std::max<std::size_t>(64, std::strtoull(next().c_str(), nullptr, 10));
    else if (a == "--no-sweep")
      o.sweep = false;
    else if (a == "--huge")
      o.huge = true;
    else if (a == "--json")
      o.json_path = next();
    else if (a == "--threads") {
      o.threads.clear();
      std::string list = next();
      for (char* tok = std::strtok(list.data(), ","); tok; tok = std::strtok(nullptr, ","))
        o.threads.push_back(std::max(1, std::atoi(tok)));
    } else {
      std::fprintf(stderr,
                   "usage: membw [--runs N] [--size-mib M] [--threads 1,2] [--no-sweep] "
                   "[--huge] [--json FILE]\n");
      std::exit(a == "--help" || a == "-h" ? 0 : 2);
    }
  }
  return o;
}

void print(const Result& r) {
  std::printf("%-28s %2d thr  %8.1f %-7s (min %.1f, max %.1f)\n", r.name.c_str(), r.threads,
              r.stats.median, r.unit.c_str(), r.stats.min, r.stats.max);
  std::fflush(stdout);
}

void write_json(const std::string& path, const std::vector<Result>& results, const Options& o) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "membw: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    std::exit(1);
  }
  std::fprintf(f,
               "{\n  \"runs\": %d,\n  \"buffer_mib\": %zu,\n  \"huge_pages\": %s,\n"
               "  \"results\": [\n",
               o.runs, o.size_mib, o.huge ? "true" : "false");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::fprintf(f,
                 "    {\"name\": \"%s\", \"threads\": %d, \"unit\": \"%s\", \"median\": %.3f, "
                 "\"min\": %.3f, \"max\": %.3f}%s\n",
                 r.name.c_str(), r.threads, r.unit.c_str(), r.stats.median, r.stats.min,
                 r.stats.max, i + 1 < results.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::size_t bytes = o.size_mib << 20;
  std::printf(
      "membw: buffers %zu MiB in %s pages, median of %d runs (after 1 warm-up), hw "
      "threads %u\n",
      o.size_mib, o.huge ? "2 MiB (transparent huge)" : "4 KiB", o.runs,
      std::thread::hardware_concurrency());
  AlignedBuffer a(bytes, o.huge), b(bytes, o.huge);
  std::vector<Result> results;
  auto add = [&](Result r) {
    print(r);
    results.push_back(std::move(r));
  };

  for (int n : o.threads) {
    add({"read (sum, DRAM)", n, "GB/s", measure_read(a, bytes, n, o.runs)});
    add({"copy (AVX2 stores, 2x bytes)", n, "GB/s", measure_copy(b, a, n, o.runs, false)});
    add({"copy (NT stores, 2x bytes)", n, "GB/s", measure_copy(b, a, n, o.runs, true)});
    // ~0.3 s per run at ~100 GFLOP/s per core.
    add({"fp32 FMA peak (AVX2)", n, "GFLOP/s", measure_compute(n, o.runs, fma_peak, 200'000'000)});
    add({"int8 dot peak (maddubs)", n, "GOP/s",
         measure_compute(n, o.runs, int8_dot_peak, 100'000'000)});
    add({"int16 dot peak (vpmaddwd + vpaddd)", n, "GOP/s",
         measure_compute(n, o.runs, int16_dot_peak, 100'000'000)});
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
    add({"int16 peak (vpdpwssd zmm)", n, "GOP/s",
         measure_compute(n, o.runs, vnni_peak<false>, 100'000'000)});
    add({"int8 peak (vpdpbusd zmm)", n, "GOP/s",
         measure_compute(n, o.runs, vnni_peak<true>, 100'000'000)});
#endif
#if defined(__AMX_INT8__) && defined(__AMX_TILE__)
    add({"int8 peak (AMX, K=64)", n, "GOP/s", measure_compute(n, o.runs, amx_peak<64>, 5'000'000)});
    add({"int8 peak (AMX, K=32)", n, "GOP/s", measure_compute(n, o.runs, amx_peak<32>, 5'000'000)});
#endif
  }
  if (o.sweep) {
    // Read bandwidth by working-set size: L1, L2, L3, and the ~100 MB a small model's
    // weights occupy (SmolLM2-135M Q4_1 is 98 MB).
    for (std::size_t kib : {32, 512, 8192, 24576, 98304, 262144}) {
      if ((kib << 10) > bytes) continue;
      for (int n : o.threads) {
        const std::string name = "read sweep " + std::to_string(kib) + " KiB";
        add({name, n, "GB/s", measure_read(a, kib << 10, n, o.runs)});
      }
    }
  }
  if (!o.json_path.empty()) write_json(o.json_path, results, o);
  return 0;
}
