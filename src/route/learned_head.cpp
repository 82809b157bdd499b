#include "route/learned_head.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"

namespace folio::route {
namespace {

using nlohmann::json;

struct Parser {
  const std::string& source;

  [[noreturn]] void fail(const std::string& message) const {
    throw Error("route head " + source + ": " + message);
  }

  const json& at(const json& j, const char* key) const {
    const auto it = j.find(key);
    if (it == j.end()) fail(std::string("missing key \"") + key + "\"");
    return *it;
  }

  double finite(const json& v, const std::string& where) const {
    if (!v.is_number()) fail("\"" + where + "\" must be a number, got " + v.dump());
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail("\"" + where + "\" is not finite");
    return x;
  }

  std::vector<float> vector(const json& j, const char* key, std::size_t n) const {
    const json& v = at(j, key);
    if (!v.is_array() || v.size() != n) {
      fail(std::string("\"") + key + "\" must be an array of n_embd (" + std::to_string(n) +
           ") numbers, got " +
           (v.is_array() ? std::to_string(v.size()) + " items" : v.type_name()));
    }
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double x = finite(v[i], std::string(key) + "[" + std::to_string(i) + "]");
      if (std::fabs(x) > 3.0e38)
        fail(std::string(key) + "[" + std::to_string(i) + "] overflows a float");
      out[i] = static_cast<float>(x);
    }
    return out;
  }
};

}  // namespace

double LearnedHead::score(std::span<const float> pooled) const {
  if (pooled.size() != n_embd) {
    throw Error("route head: the pooled hidden state has " + std::to_string(pooled.size()) +
                " values, the head reads " + std::to_string(n_embd));
  }
  const std::vector<float> e = l2_normalized(pooled);
  double logit = bias;
  for (std::size_t i = 0; i < n_embd; ++i)
    logit += static_cast<double>(weights[i]) * (static_cast<double>(e[i]) - mean[i]) * scale[i];
  return 1.0 / (1.0 + std::exp(-logit));
}

LearnedHead parse_learned_head(const std::string& text, const std::string& source) {
  const Parser p{source};
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    p.fail(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) p.fail("expected a JSON object, got " + std::string(j.type_name()));
  for (const auto& [key, v] : j.items()) {
    if (key != "format" && key != "version" && key != "n_embd" && key != "mean" && key != "scale" &&
        key != "weights" && key != "bias" && key != "info") {
      p.fail("unknown key \"" + key +
             "\" (known: format, version, n_embd, mean, scale, weights, bias, info)");
    }
  }
  if (p.at(j, "format") != "folio-route-head")
    p.fail("\"format\" must be \"folio-route-head\", got " + p.at(j, "format").dump());
  if (p.at(j, "version") != 1) p.fail("\"version\" must be 1, got " + p.at(j, "version").dump());
  const json& n = p.at(j, "n_embd");
  if (!n.is_number_unsigned() || n.get<std::uint64_t>() < 1 || n.get<std::uint64_t>() > (1 << 20))
    p.fail("\"n_embd\" must be an integer in [1, 1048576], got " + n.dump());
  LearnedHead h;
  h.n_embd = n.get<std::size_t>();
  h.mean = p.vector(j, "mean", h.n_embd);
  h.scale = p.vector(j, "scale", h.n_embd);
  h.weights = p.vector(j, "weights", h.n_embd);
  h.bias = p.finite(p.at(j, "bias"), "bias");
  if (const auto it = j.find("info"); it != j.end()) {
    if (!it->is_object()) p.fail("\"info\" must be an object, got " + it->dump());
    h.info = it->dump();
  }
  return h;
}

LearnedHead load_learned_head(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("route head " + path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_learned_head(text.str(), path);
}

std::vector<float> l2_normalized(std::span<const float> v) {
  double sq = 0;
  for (float x : v) sq += static_cast<double>(x) * x;
  std::vector<float> out(v.begin(), v.end());
  if (sq <= 0) return out;
  const double inv = 1.0 / std::sqrt(sq);
  for (float& x : out) x = static_cast<float>(x * inv);
  return out;
}

}  // namespace folio::route
