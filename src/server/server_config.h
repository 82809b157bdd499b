// server/server_config.h: every `folio serve` option, as plain data.
//
// The CLI (cli/cmd_serve.cpp) maps CLI11 options onto this struct one to
// one; names and meanings follow `vllm serve` wherever vLLM has the concept.
// The engine-sizing fields (max_num_seqs ... threads) are not read by the
// HTTP layer itself: they are here so one struct describes a server and the
// CLI can hand it to the engine factory and log it at start-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace folio::server {

struct ServerConfig {
  // ---- model (vLLM names; the engine's own flags are cli/engine_flags.h) ----
  std::string model;  // [MODEL] / --model / -m; "" = default model
  std::vector<std::string>
      served_model_name;      // --served-model-name; first is reported; "" -> model
  std::string chat_template;  // --chat-template: a file path or the template text

  // ---- HTTP front end ----
  std::string host = "0.0.0.0";       // --host (vLLM default: all interfaces)
  std::uint16_t port = 8000;          // --port; 0 = any free port (tests)
  std::vector<std::string> api_keys;  // --api-key (repeatable); none and no file: $FOLIO_API_KEY
  std::string api_key_file;           // --api-key-file: one key per line
  bool metrics_require_key = false;   // --metrics-require-key: /metrics needs a key too
  bool no_webui =
      false;  // --no-webui: no chat page (/ and /ui/* are unknown routes, so need a key)
  std::vector<std::string> allowed_origins;  // --allowed-origins: CORS (off when empty)
  // TLS (vLLM's flags): HTTPS when both files are given.
  std::string ssl_keyfile;   // --ssl-keyfile: PEM private key
  std::string ssl_certfile;  // --ssl-certfile: PEM certificate chain
  std::string ssl_ca_certs;  // --ssl-ca-certs: PEM CAs for client certificates
  int ssl_cert_reqs = 0;     // --ssl-cert-reqs: client certificate 0 none, 1 optional, 2 required
  std::int32_t max_logprobs = 20;  // --max-logprobs: cap on logprobs / top_logprobs

  // ---- limits (folio's own; vLLM has no equivalents) ----
  std::int32_t max_queue = 1024;           // --max-queue: engine requests in flight; beyond -> 429
  std::int32_t max_waiting_requests = -1;  // --max-waiting-requests: a model's queue beyond
                                           // what it runs; beyond -> 503 (< 0: unbounded)
  std::int32_t max_connections = -1;  // --max-connections: beyond -> 503 and close (< 0: no cap)
  std::int32_t io_threads = 2;        // --io-threads: Asio threads (no thread per connection)
  std::size_t max_body_bytes = 8u << 20;     // --max-body-bytes: request body; beyond -> 413
  std::size_t max_header_bytes = 16u << 10;  // --max-header-bytes: request head; beyond -> 431
  double idle_timeout_s = 60;     // --idle-timeout: keep-alive connection with no request
  double request_timeout_s = 30;  // --request-timeout: time to receive one whole request
  double shutdown_grace_s = 30;   // --shutdown-grace: in-flight requests may finish this long
  std::int32_t max_n = 64;        // --max-n: largest `n` (samples per prompt) accepted
  std::int32_t max_prompts = 64;  // --max-prompts: largest list of prompts in one request
};

}  // namespace folio::server
