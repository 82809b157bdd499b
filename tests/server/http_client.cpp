// tests/server/http_client.cpp: blocking socket client for the server tests.
#include "http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <stdexcept>

namespace folio::server::testing {

using Clock = std::chrono::steady_clock;

HttpClient::HttpClient(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    throw std::runtime_error("connect failed");
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

HttpClient::~HttpClient() {
  close();
}

void HttpClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void HttpClient::send(const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close early (413): tests read the reply
    off += static_cast<std::size_t>(n);
  }
}

HttpResponse HttpClient::request(const std::string& method, const std::string& path,
                                 const std::string& body, const std::vector<std::string>& headers) {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n";
  for (const auto& h : headers) req += h + "\r\n";
  if (!body.empty() || method == "POST") {
    req +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  send(req);
  auto r = read_response();
  if (!r) throw std::runtime_error("no response to " + method + " " + path);
  return *r;
}

bool HttpClient::fill(Clock::time_point deadline) {
  if (fd_ < 0) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char tmp[16384];
  const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
  if (n <= 0) return false;
  buf_.append(tmp, static_cast<std::size_t>(n));
  return true;
}

bool HttpClient::read_until(const std::string& marker, Clock::time_point deadline) {
  while (buf_.find(marker) == std::string::npos) {
    if (!fill(deadline)) return false;
  }
  return true;
}

bool HttpClient::read_bytes(std::size_t n, Clock::time_point deadline) {
  while (buf_.size() < n) {
    if (!fill(deadline)) return false;
  }
  return true;
}

std::optional<HttpResponse> HttpClient::read_response(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  if (!read_until("\r\n\r\n", deadline)) return std::nullopt;
  const std::size_t head_end = buf_.find("\r\n\r\n");
  const std::string head = buf_.substr(0, head_end);
  buf_.erase(0, head_end + 4);
  HttpResponse r;
  r.status = std::stoi(head.substr(9, 3));
  std::size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    const std::size_t next = head.find("\r\n", pos + 2);
    const std::string line =
        head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    }
    pos = next;
  }
  if (r.headers.count("transfer-encoding")) {
    while (true) {
      if (!read_until("\r\n", deadline)) return std::nullopt;
      const std::size_t eol = buf_.find("\r\n");
      const std::size_t size = std::stoul(buf_.substr(0, eol), nullptr, 16);
      if (!read_bytes(eol + 2 + size + 2, deadline)) return std::nullopt;
      r.raw_body += buf_.substr(0, eol + 2 + size + 2);
      r.body += buf_.substr(eol + 2, size);
      buf_.erase(0, eol + 2 + size + 2);
      if (size == 0) break;
    }
  } else {
    const std::size_t len =
        r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    if (!read_bytes(len, deadline)) return std::nullopt;
    r.body = buf_.substr(0, len);
    r.raw_body = r.body;
    buf_.erase(0, len);
  }
  return r;
}

std::string HttpClient::read_some(std::size_t min_bytes, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (buf_.size() < min_bytes && fill(deadline)) {
  }
  std::string out = std::move(buf_);
  buf_.clear();
  return out;
}

bool HttpClient::wait_closed(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      char tmp[4096];
      const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n <= 0) return true;
      buf_.append(tmp, static_cast<std::size_t>(n));
    }
  }
  return false;
}

std::vector<std::string> sse_payloads(const std::string& body) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) break;
    const std::string ev = body.substr(pos, end - pos);
    if (ev.rfind("data: ", 0) == 0)
      out.push_back(ev.substr(6));
    else
      out.push_back("<malformed:" + ev + ">");
    pos = end + 2;
  }
  if (pos != body.size()) out.push_back("<trailing:" + body.substr(pos) + ">");
  return out;
}

}  // namespace folio::server::testing
