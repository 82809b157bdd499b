// server/openapi_document.h: the OpenAPI 3.1 description of every route, as
// compiled into the binary from src/server/openapi.json (CMake turns the file
// into openapi_document.cpp; no file is read at run time).
//
// GET /openapi.json (handlers_openapi.cpp) serves it with the running
// server's version and limits filled in.
#pragma once

#include <string_view>

namespace folio::server {

// The text of src/server/openapi.json as it was at build time.
std::string_view openapi_document();

}  // namespace folio::server
