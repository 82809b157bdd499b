// server/beast_request.cpp: the header fields routing reads, copied out.
#include "server/beast_request.h"

#include <boost/beast/http/field.hpp>
#include <string>

namespace folio::server {

namespace http = boost::beast::http;

HttpRequest to_http_request(http::request<http::string_body>&& msg) {
  HttpRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  if (auto it = msg.find(http::field::authorization); it != msg.end()) {
    req.authorization = std::string(it->value());
  }
  if (auto it = msg.find(http::field::origin); it != msg.end()) req.origin = it->value();
  if (auto it = msg.find(http::field::access_control_request_method); it != msg.end()) {
    req.cors_request_method = it->value();
  }
  if (auto it = msg.find(http::field::if_none_match); it != msg.end()) {
    req.if_none_match = it->value();
  }
  req.body = std::move(msg.body());
  return req;
}

}  // namespace folio::server
