#include "spec/draft_vocabulary.h"

#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"

namespace folio::spec {

namespace {

// A token's text as a JSON string: quoted, control bytes escaped.
std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void check_draft_vocabulary(const tokenizer::Vocab& target, const tokenizer::Vocab& draft) {
  const std::string what =
      "speculative decoding: the draft model's vocabulary differs from the "
      "target's: ";
  if (target.size() != draft.size()) {
    throw Error(what + "the target has " + std::to_string(target.size()) + " tokens, the draft " +
                std::to_string(draft.size()));
  }
  for (std::size_t i = 0; i < target.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    if (target.text(id) != draft.text(id)) {
      throw Error(what + "first differing token id " + std::to_string(i) + ": target " +
                  quoted(target.text(id)) + ", draft " + quoted(draft.text(id)));
    }
    if (target.type(id) != draft.type(id)) {
      throw Error(what + "first differing token id " + std::to_string(i) + " (" +
                  quoted(target.text(id)) + "): token type " +
                  std::to_string(static_cast<int>(target.type(id))) + " in the target, " +
                  std::to_string(static_cast<int>(draft.type(id))) + " in the draft");
    }
  }
}

}  // namespace folio::spec
