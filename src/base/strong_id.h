// base/strong_id.h: integer ids that do not mix.
//
// A scheduler sequence and an engine request are both numbered with 64-bit
// integers, but one request with n > 1 samples owns n sequences, so passing
// one where the other is meant is a bug. StrongId<Tag> wraps the integer so
// that such a mix does not compile:
//
//   using SeqId = StrongId<struct SeqTag>;
//   using RequestId = StrongId<struct RequestTag>;
//   SeqId s{7};  RequestId r = s;   // error: no conversion
//
// Construction from an integer is explicit; value() gives it back (for
// logs, JSON, arithmetic in tests). Hashable, ordered, default 0 ("none").
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace folio {

template <typename Tag>
class StrongId {
 public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(std::uint64_t v) : v_(v) {}

  constexpr std::uint64_t value() const { return v_; }
  constexpr bool valid() const { return v_ != 0; }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;
  friend std::ostream& operator<<(std::ostream& os, StrongId id) { return os << id.v_; }

 private:
  std::uint64_t v_ = 0;
};

template <typename Tag>
std::string to_string(StrongId<Tag> id) {
  return std::to_string(id.value());
}

}  // namespace folio

template <typename Tag>
struct std::hash<folio::StrongId<Tag>> {
  std::size_t operator()(folio::StrongId<Tag> id) const noexcept {
    return std::hash<std::uint64_t>{}(id.value());
  }
};
