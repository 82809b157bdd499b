// server/server.cpp: listener, IO thread pool, graceful shutdown, signals.
#include "server/server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "base/error.h"
#include "server/http_session.h"
#include "server/server_context.h"
#include "server/tls.h"

namespace folio::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct Server::Impl {
  Impl(const ServerConfig& c, const std::vector<ModelSpec>& models,
       const std::vector<VirtualModelSpec>& virtuals, const Logger& l)
      : ctx(c, models, virtuals, l), tls(make_tls_context(c)), acceptor(ioc), retry(ioc) {}

  void accept() {
    acceptor.async_accept(
        asio::make_strand(ioc), [this](boost::system::error_code ec, tcp::socket s) {
          if (!acceptor.is_open() || ec == asio::error::operation_aborted) return;
          if (ec) {
            // E.g. out of file descriptors: back off instead of spinning.
            ctx.log.warn("accept failed: " + ec.message());
            retry.expires_after(std::chrono::milliseconds(50));
            retry.async_wait([this](boost::system::error_code) { accept(); });
            return;
          }
          boost::system::error_code ignored;
          s.set_option(tcp::no_delay(true), ignored);  // SSE chunks are small; send them now
          start_session(std::move(s), ctx, gate, tls.get());
          accept();
        });
  }

  // True when nothing is in flight before `seconds` (or `hurry`, when it
  // may end the wait) have passed.
  bool wait_idle(double seconds, bool may_hurry) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (ctx.admission.in_flight() > 0) {
      if (std::chrono::steady_clock::now() >= until || (may_hurry && hurry)) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // Member order matters: sessions (owned by pending handlers in ioc)
  // reference ctx, so ioc is declared after it and destroyed first.
  ServerContext ctx;
  std::unique_ptr<asio::ssl::context> tls;  // HTTPS when set
  std::shared_ptr<PostGate> gate = std::make_shared<PostGate>();
  asio::io_context ioc;
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  std::vector<std::thread> threads;
  bool running = false;
  std::atomic<bool> hurry{false};  // end the grace period now (a second signal)
};

Server::Server(const ServerConfig& config, const std::vector<ModelSpec>& models,
               const std::vector<VirtualModelSpec>& virtual_models, const Logger& log)
    : impl_(std::make_unique<Impl>(config, models, virtual_models, log)) {}

Server::Server(const ServerConfig& config, EngineClient& engine, const ModelContext& model,
               const Logger& log)
    : Server(config, {ModelSpec{.model = &model, .engine = &engine, .lacks = {}}}, {}, log) {}

Server::~Server() {
  shutdown(0);
}

ServerContext& Server::context() {
  return impl_->ctx;
}

void Server::hurry() {
  impl_->hurry = true;
}

bool Server::tls() const {
  return impl_->tls != nullptr;
}

std::uint16_t Server::start() {
  Impl& s = *impl_;
  const ServerConfig& cfg = s.ctx.config;
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(cfg.host, ec);
  if (ec) throw Error("--host " + cfg.host + " is not an IP address: " + ec.message());
  const tcp::endpoint ep(addr, cfg.port);
  s.acceptor.open(ep.protocol(), ec);
  if (!ec) s.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(ep, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw Error("cannot listen on " + cfg.host + ":" + std::to_string(cfg.port) + ": " +
                ec.message());
  }
  const std::uint16_t port = s.acceptor.local_endpoint().port();
  s.accept();
  const int n = std::max(1, cfg.io_threads);
  for (int i = 0; i < n; ++i) s.threads.emplace_back([&s] { s.ioc.run(); });
  s.running = true;
  return port;
}

void Server::shutdown(double grace_s) {
  Impl& s = *impl_;
  if (!s.running) return;
  s.running = false;
  s.ctx.draining = true;
  asio::post(s.ioc, [&s] {
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
    s.retry.cancel();
  });
  if (!s.wait_idle(grace_s, true)) {
    const auto live = s.ctx.admission.live();
    s.ctx.log.warn("shutdown: aborting " + std::to_string(live.size()) +
                   " requests still running after the grace period");
    for (RequestId id : live) s.ctx.abort_everywhere(id);
    s.wait_idle(2.0, false);  // let the aborted streams write their last chunk
  }
  s.gate->close();  // engine threads stop posting into ioc
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
}

int run_server(const ServerConfig& config, EngineClient& engine, const ModelContext& model,
               const Logger& log, const std::function<void(std::uint16_t)>& on_listening) {
  return run_server(config, {ModelSpec{.model = &model, .engine = &engine, .lacks = {}}}, {}, log,
                    on_listening);
}

int run_server(const ServerConfig& config, const std::vector<ModelSpec>& models,
               const std::vector<VirtualModelSpec>& virtual_models, const Logger& log,
               const std::function<void(std::uint16_t)>& on_listening) {
  asio::io_context signals_ioc;
  asio::signal_set signals(signals_ioc, SIGINT, SIGTERM);
  int received = 0;
  signals.async_wait([&](boost::system::error_code ec, int sig) {
    if (!ec) received = sig;
  });
  Server server(config, models, virtual_models, log);
  const std::uint16_t port = server.start();
  std::string names;
  for (const auto& n : server.context().names()) names += (names.empty() ? "" : ", ") + n;
  const char* scheme = server.tls() ? "https" : "http";
  log.info("serving " + names + " on " + scheme + "://" + config.host + ":" + std::to_string(port) +
           " (OpenAI API under /v1)");
  if (on_listening) on_listening(port);
  signals_ioc.run();
  log.info(std::string("received ") + (received == SIGINT ? "SIGINT" : "SIGTERM") +
           ": finishing in-flight requests (grace " + std::to_string(config.shutdown_grace_s) +
           " s; a second signal aborts them)");
  // A second signal during the grace period aborts what is still running.
  signals_ioc.restart();
  signals.async_wait([&](boost::system::error_code ec, int) {
    if (ec) return;
    log.warn("second signal: aborting in-flight requests");
    server.hurry();
  });
  std::thread second_signal([&] { signals_ioc.run(); });
  server.shutdown(config.shutdown_grace_s);
  asio::post(signals_ioc, [&] { signals.cancel(); });
  second_signal.join();
  log.info("server stopped");
  return 0;
}

}  // namespace folio::server
