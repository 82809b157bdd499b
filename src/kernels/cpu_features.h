// kernels/cpu_features.h: which instruction-set level the fast kernels use.
//
// The levels are ordered; each includes the ones below it:
//   scalar  portable C++ (the fallback on every CPU)
//   avx2    AVX2 + FMA + F16C
//   avx512  AVX-512 F/BW/DQ/VL + VNNI (Ice Lake, Zen 4, Sapphire Rapids): the
//           512-bit integer dot products vpdpwssd / vpdpbusd
//   amx     avx512 plus AMX-TILE + AMX-INT8 with the OS's permission to use
//           the tile state (Sapphire Rapids and later)
// Detected once from CPUID and XGETBV (OS support for the YMM/ZMM/tile state).
// FOLIO_ISA=scalar|avx2|avx512|amx in the environment caps the level for the
// whole process (configure_isa_from_env(), called by the CLI at start-up), so
// one machine can A/B the levels; tests force lower levels with IsaOverride.
// Every level computes bit-identical results for the integer kernels
// (cpu/dispatch.h picks the kernels of a level, falling back level by level).
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace folio::kernels {

enum class Isa { kScalar, kAvx2, kAvx512, kAmx };

inline constexpr Isa kAllIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx};

// What this CPU (and OS) supports (computed once, thread-safe).
Isa detected_isa();

// What the kernels use now: detected_isa() capped by FOLIO_ISA, unless an
// IsaOverride is active.
Isa active_isa();

std::string_view isa_name(Isa isa);

// "scalar" / "avx2" / "avx512" / "amx"; throws folio::Error naming the
// accepted values for anything else.
Isa parse_isa(std::string_view name);

// Reads FOLIO_ISA (when set) and caps active_isa() at it. Throws folio::Error
// for an unknown name or a level this CPU does not support (naming what it
// does support), so a forced level is never silently replaced.
void configure_isa_from_env();

// The CPU's extra features below or beside the chosen level that folio
// reports (e.g. "avx512_bf16"), space-separated; empty when none.
std::string cpu_feature_summary();

// Test hook: forces `isa` (clamped to what the CPU supports) while alive.
// Not thread-safe against concurrent kernel calls; tests only.
class IsaOverride {
 public:
  explicit IsaOverride(Isa isa);
  ~IsaOverride();
  IsaOverride(const IsaOverride&) = delete;
  IsaOverride& operator=(const IsaOverride&) = delete;

 private:
  std::optional<Isa> previous_;
};

// How the AVX-512 level multiplies a few activation rows (decode, up to
// cpu::kMaxTileCols): kOne runs the 256-bit one-panel kernels, which read each
// weight panel as one stream; kTwo the 512-bit two-panel kernels, two streams
// a panel apart. AMD's Zen 4 prefetches the second pattern poorly (decode from
// DRAM 20-30 % slower); an Intel Xeon streams both and computes the second
// faster (Gemma 3 decode +20-30 %). Both give the same bits. Default: kOne on
// AMD CPUs, kTwo elsewhere; FOLIO_DECODE_PANELS=one|two (read by
// configure_isa_from_env, a bad value is an error) sets it for A/B runs.
enum class DecodePanels { kOne, kTwo };
DecodePanels decode_panels();
std::string_view decode_panels_name(DecodePanels p);  // "one" / "two"
DecodePanels parse_decode_panels(std::string_view name);

// Test hook: forces the decode kernels while alive (tests run both).
class DecodePanelsOverride {
 public:
  explicit DecodePanelsOverride(DecodePanels p);
  ~DecodePanelsOverride();
  DecodePanelsOverride(const DecodePanelsOverride&) = delete;
  DecodePanelsOverride& operator=(const DecodePanelsOverride&) = delete;

 private:
  int previous_;
};

// How far ahead, in bytes, the decode kernels request the weights they stream
// (`prefetcht1`, into L2): a token reads every weight once, and the cores' own
// prefetchers left that stream short of reads in flight (docs/PERFORMANCE.md,
// "The weights requested ahead" and "The weights requested further ahead").
// Default: 2 KiB on AMD CPUs (a Zen 3: 1-4 KiB all helped, 2 the best or
// tied; 16 KiB not measured there), 16 KiB elsewhere (a Xeon model 207:
// one-sequence decode 27-85 % faster than without, and 9-31 % faster than at
// 2 KiB; 8 and 32 KiB within the noise of 16). FOLIO_STREAM_AHEAD=BYTES
// (read by configure_isa_from_env: a multiple of 64 up to 1 MiB; 0 requests
// the lines being read, i.e. no lead; anything else is an error) sets it for
// A/B runs. Prefetches change no result. Inline: the kernels read it once per
// call.
std::size_t stream_ahead_default();
std::size_t parse_stream_ahead(std::string_view text);
namespace detail {
extern std::atomic<std::size_t> g_stream_ahead;
}
inline std::size_t stream_ahead() {
  return detail::g_stream_ahead.load(std::memory_order_relaxed);
}

}  // namespace folio::kernels
