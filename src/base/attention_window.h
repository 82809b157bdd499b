// base/attention_window.h: the sink + window attention policy (StreamingLLM)
// that any sequence may run under on any model: one vocabulary for kv/
// (which blocks a sequence still needs), model/ (what attention reads),
// sched/ and engine/ (per request) and the server and CLI (the field and the
// flag).
//
// Under {window W, sinks S} a query at position p reads positions [0, S)
// (the attention sinks) and [p - W + 1, p] (W counts the query itself);
// every position between them is gone. W = 0 is "off": full attention.
// A layer with a window of its own (model-defined sliding attention,
// Gemma 3) keeps it when the policy is off or wider; see effective_window.
//
// Positions: keys are stored rotated (RoPE) at their own positions. A query
// reads the window with its own rotation, and the sinks with itself rotated
// as if it stood right after them and the window, at S + W - 1 (rotation at
// read time, one extra RoPE of the query per layer): sink-to-query distances
// then stay below S + W, inside the trained range, however long the text.
#pragma once

#include <algorithm>
#include <cstdint>

namespace folio {

// Sinks when a window is asked for without them (StreamingLLM's four).
inline constexpr std::int32_t kDefaultAttentionSinks = 4;

// The sinks of a window asked for without them: kDefaultAttentionSinks, at
// most the window; 0 when the window is off. (The flags, the server's
// fields and generate's input lines all default through this.)
inline std::int32_t default_sinks(std::int32_t window) {
  return window > 0 ? std::min(window, kDefaultAttentionSinks) : 0;
}

struct AttentionWindow {
  std::int32_t window = 0;  // positions read up to and including the query; 0: off
  std::int32_t sinks = 0;   // leading positions always read (when window > 0)

  bool on() const { return window > 0; }
  bool operator==(const AttentionWindow&) const = default;
};

// What a layer whose own window is `layer_window` (0: full attention) reads
// under `policy`: its own window when that is no wider than the policy's
// (sinks 0), else the policy (off when both are).
inline AttentionWindow effective_window(std::int32_t layer_window, const AttentionWindow& policy) {
  if (layer_window > 0 && (!policy.on() || layer_window <= policy.window)) return {layer_window, 0};
  return policy.on() ? policy : AttentionWindow{};
}

// The first position of the window a query at `pos` reads (0 when it reads
// from the start).
inline std::int64_t window_start(const AttentionWindow& w, std::int64_t pos) {
  return w.on() && pos + 1 > w.window ? pos + 1 - w.window : 0;
}

// The query's offset for the sinks: read them rotated by -(start - sinks)
// positions, i.e. as if at sinks + window - 1. 0 when the sinks lie inside
// the window (nothing is skipped between them).
inline std::int64_t sink_shift(const AttentionWindow& w, std::int64_t pos) {
  const std::int64_t start = window_start(w, pos);
  return w.sinks > 0 && start > w.sinks ? start - w.sinks : 0;
}

// A prefix-cache key for K/V computed under `w`: 0 when off (full attention
// shares the cache), else a value that differs per (window, sinks).
inline std::uint64_t window_cache_key(const AttentionWindow& w) {
  if (!w.on()) return 0;
  const std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(w.window)) << 32) |
                          static_cast<std::uint32_t>(w.sinks);
  return (x + 1) * 0x9E3779B97F4A7C15ULL;
}

}  // namespace folio
