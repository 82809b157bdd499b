// kernels/cpu/kquant_unpack.h: k-quant super-blocks unpacked to small
// integers, the common form the scalar kernels (and the SIMD kernels' scale
// decoding) work from. Layouts and formulas: quant/block_kquant.h.
//
//   w[i] = d * sc[i/16] * q[i] - dmin * mn[i/16]
#pragma once

#include <cstdint>
#include <cstring>

#include "base/fp16.h"
#include "quant/block_kquant.h"

namespace folio::kernels::cpu {

struct KUnpacked {
  float d = 0, dmin = 0;
  int sc[16];
  int mn[16];
  int q[256];
};

// Q4_K/Q5_K: 6-bit scale and min of 32-value sub-block j (0..7) from the
// 12 packed bytes (bit layout documented in quant/dequant_kquant.cpp).
inline void k4_scale_min(const std::uint8_t* s, int j, int& sc, int& mn) {
  if (j < 4) {
    sc = s[j] & 63;
    mn = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0x0F) | (s[j - 4] >> 6) << 4;
    mn = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}

// Q3_K: signed 6-bit scale of 16-value group g (0..15).
inline int k3_scale(const std::uint8_t* s, int g) {
  const int low = g < 8 ? s[g] & 0x0F : s[g - 8] >> 4;
  const int high = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
  return (low | high << 4) - 32;
}

inline void unpack_k(const quant::BlockQ2_K& b, KUnpacked& u) {
  u.d = fp16_to_f32(b.d);
  u.dmin = fp16_to_f32(b.dmin);
  for (int g = 0; g < 16; ++g) {
    u.sc[g] = b.scales[g] & 0x0F;
    u.mn[g] = b.scales[g] >> 4;
  }
  for (int i = 0; i < 256; ++i)
    u.q[i] = (b.qs[32 * (i / 128) + i % 32] >> (2 * ((i / 32) % 4))) & 3;
}

inline void unpack_k(const quant::BlockQ3_K& b, KUnpacked& u) {
  u.d = fp16_to_f32(b.d);
  for (int g = 0; g < 16; ++g) {
    u.sc[g] = k3_scale(b.scales, g);
    u.mn[g] = 0;
  }
  for (int i = 0; i < 256; ++i) {
    const int low = (b.qs[32 * (i / 128) + i % 32] >> (2 * ((i / 32) % 4))) & 3;
    u.q[i] = low - (((b.hmask[i % 32] >> (i / 32)) & 1) ? 0 : 4);
  }
}

inline void unpack_k(const quant::BlockQ4_K& b, KUnpacked& u) {
  u.d = fp16_to_f32(b.d);
  u.dmin = fp16_to_f32(b.dmin);
  for (int j = 0; j < 8; ++j) {
    k4_scale_min(b.scales, j, u.sc[2 * j], u.mn[2 * j]);
    u.sc[2 * j + 1] = u.sc[2 * j];
    u.mn[2 * j + 1] = u.mn[2 * j];
    for (int l = 0; l < 32; ++l) u.q[32 * j + l] = (b.qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0x0F;
  }
}

inline void unpack_k(const quant::BlockQ5_K& b, KUnpacked& u) {
  u.d = fp16_to_f32(b.d);
  u.dmin = fp16_to_f32(b.dmin);
  for (int j = 0; j < 8; ++j) {
    k4_scale_min(b.scales, j, u.sc[2 * j], u.mn[2 * j]);
    u.sc[2 * j + 1] = u.sc[2 * j];
    u.mn[2 * j + 1] = u.mn[2 * j];
    for (int l = 0; l < 32; ++l) {
      u.q[32 * j + l] = ((b.qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0x0F) | ((b.qh[l] >> j) & 1)
                                                                                 << 4;
    }
  }
}

inline void unpack_k(const quant::BlockQ6_K& b, KUnpacked& u) {
  u.d = fp16_to_f32(b.d);
  for (int g = 0; g < 16; ++g) {
    u.sc[g] = b.scales[g];
    u.mn[g] = 0;
  }
  for (int i = 0; i < 256; ++i) {
    const int h = i / 128, s = (i / 32) % 4, l = i % 32;
    const int lo = (b.ql[64 * h + 32 * (s % 2) + l] >> (4 * (s / 2))) & 0x0F;
    const int hi = (b.qh[32 * h + l] >> (2 * s)) & 3;
    u.q[i] = (lo | hi << 4) - 32;
  }
}

}  // namespace folio::kernels::cpu
