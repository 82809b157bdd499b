// server/tool_stream.h: holding back streamed text that may be a tool call.
//
// A stream cannot take back content it has sent, so text that may turn out
// to be a tool call is held until the output ends, then parsed whole
// (parse_tool_calls) and sent as content or as tool-call deltas, the way
// vLLM streams calls it parses at the end:
//   kGeneric  the output is one JSON object or plain text: leading
//             whitespace is held; a first other character '{' holds
//             everything to the end, anything else releases it all.
//   kHermes   text before a <tool_call> tag streams as it comes (less any
//             tail that may be the start of the tag); from the tag on,
//             everything is held.
// Content streamed plus finish().content equals parse_tool_calls over the
// whole text (up to whitespace around content next to calls), so streaming
// and non-streaming answers agree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/tool_calls.h"

namespace folio::server {

class ToolCallStream {
 public:
  explicit ToolCallStream(ToolFormat format) : format_(format) {}

  // Appends `text`; returns what can be sent as content now.
  std::string feed(std::string_view text);
  // The output ended: what was held, parsed.
  ParsedOutput finish(const std::vector<std::string>& names);

 private:
  ToolFormat format_;
  std::string held_;
  bool holding_all_ = false;  // a call may have started: hold to the end
  bool released_ = false;     // kGeneric: decided it is plain text
};

}  // namespace folio::server
