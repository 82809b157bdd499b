// server/http_session.h: one client connection (Boost.Beast, async, on a strand).
//
// Reads requests with bounded head and body (431 / 413) under idle and
// request timeouts, routes them, and writes replies; keep-alive per
// HTTP/1.1. A generation reply is driven here: the job's engine stream wakes
// the session through its strand; each poll's output is written as one
// chunk of an SSE stream (or, for non-streaming, one response at the end).
// While a job runs, one read is kept pending on the socket: if the client
// closes it (EOF or reset) or a write fails, the job is cancelled at once,
// which aborts its engine requests (their KV blocks are freed in the next
// engine step). So is a client that stops reading: a write that stalls for
// --idle-timeout, or more than 1 MiB of reply waiting behind it. Bytes a
// client pipelines meanwhile are kept for the next read.
// Over TLS the session starts with the handshake (under --request-timeout);
// a client that does not speak TLS is closed.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "server/post_gate.h"
#include "server/server_context.h"

namespace folio::server {

// Starts serving `socket` (which must use a strand executor), over TLS when
// `tls` is set (server/tls.h); the session keeps itself alive through its
// pending operations. Beyond --max-connections open sessions, the socket is
// answered 503 (with Retry-After) and closed instead.
void start_session(boost::asio::ip::tcp::socket socket, ServerContext& ctx,
                   std::shared_ptr<PostGate> gate, boost::asio::ssl::context* tls);

}  // namespace folio::server
