// kernels/cpu_features.cpp: CPUID/XGETBV detection, FOLIO_ISA and the test override.
#include "kernels/cpu_features.h"

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdlib>

#include "base/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace folio::kernels {

namespace {

struct Features {
  bool avx2 = false;    // AVX2 + FMA + F16C, YMM state enabled
  bool avx512 = false;  // F/BW/DQ/VL + VNNI, ZMM state enabled
  bool bf16 = false;    // AVX512_BF16
  bool amx = false;     // AMX-TILE + AMX-INT8, tile state enabled and permitted
  bool amx_bf16 = false;
  bool amd = false;  // vendor "AuthenticAMD"
};

#if defined(__x86_64__) || defined(__i386__)
// CPUID leaf 7 bits whose <cpuid.h> names differ between GCC and clang.
constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;  // EDX
constexpr unsigned kAvx512Vnni = 1u << 11;                                         // ECX
constexpr unsigned kAvx512Bf16 = 1u << 5;                                          // subleaf 1 EAX

std::uint64_t xgetbv0() {
  std::uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (std::uint64_t{hi} << 32) | lo;
}

// Linux hands out the AMX tile data state only on request (arch_prctl
// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, kernel 5.16+); without it the
// first tile instruction faults.
bool request_amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

Features detect() {
  Features f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) != 0) {
    // The vendor string is EBX, EDX, ECX: "Auth" "enti" "cAMD".
    f.amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;
  }
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return f;
  const bool osxsave = (c & bit_OSXSAVE) != 0, fma = (c & bit_FMA) != 0, f16c = (c & bit_F16C) != 0;
  if (!osxsave) return f;
  const std::uint64_t xcr0 = xgetbv0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;           // SSE + AVX state
  const bool zmm_state = (xcr0 & 0xE6) == 0xE6;         // + opmask, ZMM_Hi256, Hi16_ZMM
  const bool tile_state = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  if (__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7) == 0) return f;
  const bool avx2 = (b7 & bit_AVX2) != 0;
  f.avx2 = ymm_state && avx2 && fma && f16c;
  const bool avx512 = (b7 & bit_AVX512F) != 0 && (b7 & bit_AVX512DQ) != 0 &&
                      (b7 & bit_AVX512BW) != 0 && (b7 & bit_AVX512VL) != 0 &&
                      (c7 & kAvx512Vnni) != 0;
  f.avx512 = f.avx2 && zmm_state && avx512;
  unsigned a71 = 0, b71 = 0, c71 = 0, d71 = 0;
  if (a7 >= 1 && __get_cpuid_count(7, 1, &a71, &b71, &c71, &d71) != 0) {
    f.bf16 = f.avx512 && (a71 & kAvx512Bf16) != 0;
  }
  const bool amx = (d7 & kAmxTile) != 0 && (d7 & kAmxInt8) != 0;
  f.amx = f.avx512 && tile_state && amx && request_amx_permission();
  f.amx_bf16 = f.amx && (d7 & kAmxBf16) != 0;
#endif
  return f;
}

const Features& features() {
  static const Features f = detect();
  return f;
}

Isa level(const Features& f) {
  if (f.amx) return Isa::kAmx;
  if (f.avx512) return Isa::kAvx512;
  if (f.avx2) return Isa::kAvx2;
  return Isa::kScalar;
}

// -1: none; otherwise the Isa's value.
std::atomic<int> g_override{-1};
std::atomic<int> g_ceiling{-1};  // FOLIO_ISA
// -1: the CPU's default; otherwise a DecodePanels value.
std::atomic<int> g_decode_override{-1};
std::atomic<int> g_decode_env{-1};  // FOLIO_DECODE_PANELS

int value(Isa isa) {
  return static_cast<int>(isa);
}

}  // namespace

Isa detected_isa() {
  static const Isa isa = level(features());
  return isa;
}

Isa active_isa() {
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<Isa>(forced);
  const int ceiling = g_ceiling.load(std::memory_order_relaxed);
  return ceiling >= 0 ? static_cast<Isa>(ceiling) : detected_isa();
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAmx:
      return "amx";
  }
  return "unknown";
}

Isa parse_isa(std::string_view name) {
  for (Isa isa : kAllIsas) {
    if (name == isa_name(isa)) return isa;
  }
  throw Error("instruction set '" + std::string(name) +
              "': expected one of scalar, avx2, avx512, amx");
}

std::size_t stream_ahead_default() {
  return features().amd ? 2048 : 16384;
}

namespace detail {
std::atomic<std::size_t> g_stream_ahead{stream_ahead_default()};
}

std::size_t parse_stream_ahead(std::string_view text) {
  constexpr std::size_t kMax = std::size_t{1} << 20;
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v > kMax || v % 64 != 0) {
    throw Error("FOLIO_STREAM_AHEAD=" + std::string(text) +
                ": expected a byte count, a multiple of 64 from 0 to 1048576");
  }
  return v;
}

void configure_isa_from_env() {
  const char* ahead = std::getenv("FOLIO_STREAM_AHEAD");
  if (ahead != nullptr && *ahead != '\0') {
    detail::g_stream_ahead.store(parse_stream_ahead(ahead), std::memory_order_relaxed);
  }
  const char* panels = std::getenv("FOLIO_DECODE_PANELS");
  if (panels != nullptr && *panels != '\0') {
    g_decode_env.store(static_cast<int>(parse_decode_panels(panels)));
  }
  const char* env = std::getenv("FOLIO_ISA");
  if (env == nullptr || *env == '\0') return;
  Isa isa = Isa::kScalar;
  try {
    isa = parse_isa(env);
  } catch (const Error& e) {
    throw Error("FOLIO_ISA=" + std::string(env) + ": " + e.what());
  }
  if (value(isa) > value(detected_isa())) {
    throw Error("FOLIO_ISA=" + std::string(env) + ": this CPU supports at most " +
                std::string(isa_name(detected_isa())));
  }
  g_ceiling.store(value(isa));
}

std::string cpu_feature_summary() {
  const Features& f = features();
  std::string out;
  const auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(f.avx2, "avx2");
  add(f.avx512, "avx512_vnni");
  add(f.bf16, "avx512_bf16");
  add(f.amx, "amx_int8");
  add(f.amx_bf16, "amx_bf16");
  return out;
}

IsaOverride::IsaOverride(Isa isa) {
  const int prev = g_override.load();
  if (prev >= 0) previous_ = static_cast<Isa>(prev);
  const Isa clamped = value(isa) <= value(detected_isa()) ? isa : detected_isa();
  g_override.store(value(clamped));
}

IsaOverride::~IsaOverride() {
  g_override.store(previous_ ? value(*previous_) : -1);
}

DecodePanels decode_panels() {
  const int forced = g_decode_override.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<DecodePanels>(forced);
  const int env = g_decode_env.load(std::memory_order_relaxed);
  if (env >= 0) return static_cast<DecodePanels>(env);
  return features().amd ? DecodePanels::kOne : DecodePanels::kTwo;
}

std::string_view decode_panels_name(DecodePanels p) {
  return p == DecodePanels::kOne ? "one" : "two";
}

DecodePanels parse_decode_panels(std::string_view name) {
  if (name == "one") return DecodePanels::kOne;
  if (name == "two") return DecodePanels::kTwo;
  throw Error("FOLIO_DECODE_PANELS=" + std::string(name) + ": expected one or two");
}

DecodePanelsOverride::DecodePanelsOverride(DecodePanels p) : previous_(g_decode_override.load()) {
  g_decode_override.store(static_cast<int>(p));
}

DecodePanelsOverride::~DecodePanelsOverride() {
  g_decode_override.store(previous_);
}

}  // namespace folio::kernels
