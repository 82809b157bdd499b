// tests/server/json_fields_test.cpp: bounded parsing and typed field access.
#include "server/json_fields.h"

#include <gtest/gtest.h>

#include <limits>

#include "server/api_error.h"

namespace folio::server {
namespace {

int status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e.status();
  }
  return 0;
}

TEST(JsonFields, ParseBodyRejectsBadInput) {
  EXPECT_EQ(status_of([] { parse_body("{"); }), 400);
  EXPECT_EQ(status_of([] { parse_body("[1]"); }), 400);
  EXPECT_EQ(status_of([] { parse_body("{\"a\": \"\xc3\x28\"}"); }), 400);  // invalid UTF-8
  std::string deep = std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_EQ(status_of([&] { parse_body("{\"a\":" + deep + "}"); }), 400);
  std::string ok = std::string(kMaxJsonDepth - 2, '[') + std::string(kMaxJsonDepth - 2, ']');
  EXPECT_EQ(status_of([&] { parse_body("{\"a\":" + ok + "}"); }), 0);
  // A million-deep body is refused without exhausting the stack.
  std::string huge = std::string(1000000, '[');
  EXPECT_EQ(status_of([&] { parse_body(huge); }), 400);
}

TEST(JsonFields, TypedReads) {
  const auto j = parse_body(R"({"i": 3, "f": 3.0, "h": 3.5, "big": 1e300, "neg": -4, "s": "x",
                               "b": true, "l": ["a", "b"], "ids": [1, 2]})");
  Fields f(j);
  EXPECT_EQ(f.integer("i", 0, 10), 3);
  EXPECT_EQ(f.integer("f", 0, 10), 3);
  EXPECT_EQ(status_of([&] { f.integer("h", 0, 10); }), 400);
  EXPECT_EQ(status_of([&] { f.integer("big", 0, 10); }), 400);
  EXPECT_EQ(status_of([&] { f.integer("neg", 0, 10); }), 400);
  EXPECT_EQ(status_of([&] { f.number("big", 0, 10); }), 400);
  EXPECT_EQ(f.number("i", 0, 10), 3.0);
  EXPECT_EQ(f.string("s"), "x");
  EXPECT_EQ(status_of([&] { f.string("i"); }), 400);
  EXPECT_EQ(f.boolean("b"), true);
  EXPECT_EQ(f.strings("l", 4), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.strings("s", 4), (std::vector<std::string>{"x"}));
  EXPECT_EQ(status_of([&] { f.strings("l", 1); }), 400);
  EXPECT_EQ(f.int_list("ids", 0, 5, 10), (std::vector<std::int32_t>{1, 2}));
  EXPECT_FALSE(f.integer("absent", 0, 1));
  try {
    f.integer("h", 0, 10);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "h");
  }
  Fields g(j);
  g.integer("i", 0, 10);
  EXPECT_EQ(g.unread().size(), 8u);
  // Past int64, a literal parses as a double rounding onto the bound: refused, never clamped.
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const auto edges = parse_body(R"({"below": -9223372036854775809, "above": 9223372036854775808.0,
                                   "min": -9223372036854775808, "max": 9223372036854775807})");
  Fields e(edges);
  EXPECT_EQ(status_of([&] { e.integer("below", kMin, kMax); }), 400);
  EXPECT_EQ(status_of([&] { e.integer("above", kMin, kMax); }), 400);
  EXPECT_EQ(e.integer("min", kMin, kMax), kMin);
  EXPECT_EQ(e.integer("max", kMin, kMax), kMax);
  // A null field asks for nothing: it is never unread.
  const auto n = parse_body(R"({"a": null, "b": 1})");
  EXPECT_EQ(Fields(n).unread(), (std::vector<std::string>{"b"}));
}

}  // namespace
}  // namespace folio::server
