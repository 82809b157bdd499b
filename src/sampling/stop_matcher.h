// sampling/stop_matcher.h: stop strings over streamed, detokenized text.
//
// A stop string can straddle token boundaries ("<|im" + "_end|>"), so text
// that could still become the start of a stop string is held back until the
// next delta decides it. What feed() returns is therefore always safe to
// stream: it never contains any part of a stop string (unless asked to
// include the one that matched). Held text is at most the longest stop
// string minus one byte. Deltas are whole UTF-8 characters (the streaming
// detokenizer guarantees that) and stop strings are valid UTF-8, so a held
// suffix always starts on a character boundary.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace folio::sampling {

class StopMatcher {
 public:
  StopMatcher(std::vector<std::string> stops, bool include_stop_str);

  struct Result {
    std::string text;                 // safe to emit now
    std::optional<std::size_t> stop;  // index into stops when a stop string matched
  };

  // Adds a delta of generated text. After a match the matcher is finished
  // and further feeds return nothing.
  Result feed(std::string_view delta);

  // End of generation for another reason: releases the held-back text.
  std::string flush();

  bool stopped() const { return stopped_; }
  std::size_t held_bytes() const { return pending_.size(); }

 private:
  std::vector<std::string> stops_;
  bool include_stop_;
  bool stopped_ = false;
  std::string pending_;
};

}  // namespace folio::sampling
