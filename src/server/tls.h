// server/tls.h: the server's TLS context from vLLM's flags.
//
// --ssl-certfile (PEM chain) and --ssl-keyfile (PEM key) turn HTTPS on; both
// or neither. TLS 1.2 and 1.3 only. --ssl-ca-certs names the CAs client
// certificates are checked against, and --ssl-cert-reqs (as vLLM's, Python's
// ssl.CERT_*) says whether a client must present one: 0 none, 1 optional
// (checked when presented), 2 required.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "server/server_config.h"

namespace folio::server {

// nullptr when TLS is off. Throws folio::Error naming the flag whose file
// cannot be used, or an inconsistent set of flags.
std::unique_ptr<boost::asio::ssl::context> make_tls_context(const ServerConfig& config);

}  // namespace folio::server
