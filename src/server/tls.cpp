// server/tls.cpp: an OpenSSL server context (Boost.Asio's ssl::context).
#include "server/tls.h"

#include <boost/system/system_error.hpp>

#include "base/error.h"

namespace folio::server {

namespace ssl = boost::asio::ssl;

std::unique_ptr<ssl::context> make_tls_context(const ServerConfig& c) {
  const bool tls = !c.ssl_certfile.empty() || !c.ssl_keyfile.empty();
  if (!tls) {
    if (!c.ssl_ca_certs.empty() || c.ssl_cert_reqs != 0) {
      throw Error(
          "--ssl-ca-certs / --ssl-cert-reqs need TLS: give --ssl-certfile and --ssl-keyfile");
    }
    return nullptr;
  }
  if (c.ssl_certfile.empty() || c.ssl_keyfile.empty()) {
    throw Error("TLS needs both --ssl-certfile and --ssl-keyfile");
  }
  if (c.ssl_cert_reqs < 0 || c.ssl_cert_reqs > 2) {
    throw Error("--ssl-cert-reqs must be 0 (none), 1 (optional) or 2 (required), not " +
                std::to_string(c.ssl_cert_reqs));
  }
  if (c.ssl_cert_reqs > 0 && c.ssl_ca_certs.empty()) {
    throw Error("--ssl-cert-reqs " + std::to_string(c.ssl_cert_reqs) +
                " checks client certificates: give the CAs with --ssl-ca-certs");
  }
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  const auto load = [](const char* flag, const std::string& path, auto&& fn) {
    try {
      fn();
    } catch (const boost::system::system_error& e) {
      throw Error(std::string(flag) + " " + path + ": " + e.what());
    }
  };
  load("--ssl-certfile", c.ssl_certfile, [&] { ctx->use_certificate_chain_file(c.ssl_certfile); });
  load("--ssl-keyfile", c.ssl_keyfile,
       [&] { ctx->use_private_key_file(c.ssl_keyfile, ssl::context::pem); });
  if (!c.ssl_ca_certs.empty()) {
    load("--ssl-ca-certs", c.ssl_ca_certs, [&] { ctx->load_verify_file(c.ssl_ca_certs); });
  }
  if (c.ssl_cert_reqs == 1) ctx->set_verify_mode(ssl::verify_peer);
  if (c.ssl_cert_reqs == 2) {
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  }
  return ctx;
}

}  // namespace folio::server
