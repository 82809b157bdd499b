// base/huge_page_arena.h: long-lived buffers (the repacked weights) packed
// into 2 MiB-aligned chunks that the OS is asked to back with transparent
// huge pages (madvise MADV_HUGEPAGE).
//
// Decode streams every weight once per token, ~100 MB on the default model:
// in 4 KiB pages that is a page walk every 4 KiB, and the stream's misses
// wait on them. Measured on the Zen 4 (bench/membw with and without --huge):
// two threads read 29-33 GB/s from 4 KiB pages, mostly 35-40 GB/s from 2 MiB
// ones; decode ran 6-9 % faster (docs/PERFORMANCE.md). Small matrices
// (most of a 135M model's are under 0.5 MB) share chunks, so each still
// lies in huge pages and no matrix rounds up to a whole one.
//
// A hint only: where the system has transparent huge pages off
// (/sys/kernel/mm/transparent_hugepage/enabled "never") the chunks are
// ordinary memory. Under AddressSanitizer every buffer is its own heap
// allocation, so a kernel's overrun still lands in a redzone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace folio {

// Huge page size the chunks are aligned to.
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// `bytes` bytes (at least 1), 64-byte aligned, uninitialized, from a shared
// chunk (buffers over half a chunk get their own). A chunk is freed when the
// last buffer carved from it is, except the one being carved from, which is
// reused from its start once it holds no buffer (so loading and freeing
// models in turn retains at most that one). Thread-safe; throws std::bad_alloc.
std::shared_ptr<std::uint8_t[]> alloc_huge_paged(std::size_t bytes);

// Whether buffers come from the chunks (false under AddressSanitizer).
bool huge_paged_chunks();

// The system's transparent huge page mode, the selected word of
// /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise": the
// chunks get 2 MiB pages; "never": 4 KiB ones), or "unavailable".
std::string transparent_huge_pages();

}  // namespace folio
