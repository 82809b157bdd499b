// base/base64.h: standard base64 (RFC 4648, with padding) of raw bytes.
#pragma once

#include <span>
#include <string>

namespace folio {

std::string base64_encode(std::span<const unsigned char> bytes);

}  // namespace folio
