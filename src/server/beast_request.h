// server/beast_request.h: a parsed Beast request -> the router's HttpRequest.
//
// The one mapping from the wire to the transport-neutral request
// (server/http_types.h): method, target, body, and the headers routing reads
// (Authorization, Origin, Access-Control-Request-Method). The session and
// the HTTP fuzzer (fuzz/http_fuzz.cpp) both use it, so the fuzzer drives the
// router exactly as a connection does.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/http_types.h"

namespace folio::server {

// Moves the body out of `msg`.
HttpRequest to_http_request(boost::beast::http::request<boost::beast::http::string_body>&& msg);

}  // namespace folio::server
