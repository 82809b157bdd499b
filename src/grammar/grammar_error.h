// grammar/grammar_error.h: the error a constraint that cannot be compiled
// raises: a folio::Error whose `where` names the offending part (a JSON
// pointer such as "/properties/age/minimum" for a schema, "offset 12" for
// a regex, "line 3, column 7" for GBNF), so the server can answer 400
// naming it.
#pragma once

#include <string>
#include <utility>

#include "base/error.h"

namespace folio::grammar {

class GrammarError : public folio::Error {
 public:
  GrammarError(const std::string& where, const std::string& what)
      : folio::Error(where.empty() ? what : where + ": " + what), where_(where) {}
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

}  // namespace folio::grammar
