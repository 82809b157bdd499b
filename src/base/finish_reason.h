// base/finish_reason.h: why a sample stopped, one vocabulary for every layer.
//
// The scheduler records it, the engine reports it per sample, the output
// processor and the server render it as OpenAI's `finish_reason`:
//   kStop    EOS, a stop token or a stop string matched
//   kLength  max_tokens (or the context) reached
//   kAbort   the client went away or the request was cancelled
//   kError   the engine step failed
#pragma once

namespace folio {

enum class FinishReason { kNone, kStop, kLength, kAbort, kError };

// OpenAI finish_reason: "stop", "length", "abort", "error" ("" for kNone).
const char* finish_reason_name(FinishReason r);

}  // namespace folio
