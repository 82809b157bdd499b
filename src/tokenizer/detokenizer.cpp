#include "tokenizer/detokenizer.h"

#include "base/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace folio::tokenizer {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581

// Byte-level BPE: every character must be in the GPT-2 map, else raw text.
void append_byte_level(std::string_view text, std::string& out) {
  const std::size_t mark = out.size();
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8::valid_sequence_length(text, i);
    const auto b = n > 0 ? byte_level::decode_code_point(utf8::decode(text, i, n)) : std::nullopt;
    if (!b) {
      out.resize(mark);
      out.append(text);
      return;
    }
    out.push_back(static_cast<char>(*b));
    i += n;
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void append_spm(std::string_view text, TokenType type, std::string& out) {
  if (type == TokenType::kByte && text.size() == 6 && text.substr(0, 3) == "<0x" &&
      text[5] == '>') {
    const int hi = hex_digit(text[3]), lo = hex_digit(text[4]);
    if (hi >= 0 && lo >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      return;
    }
  }
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, kSpmSpace.size(), kSpmSpace) == 0) {
      out.push_back(' ');
      i += kSpmSpace.size();
    } else {
      out.push_back(text[i++]);
    }
  }
}

}  // namespace

void append_token_bytes(const Vocab& vocab, TokenId id, bool render_special, std::string& out) {
  if (!vocab.valid(id)) {
    throw Error("token id " + std::to_string(id) + " is out of range (the vocabulary has " +
                std::to_string(vocab.size()) + " tokens: 0.." + std::to_string(vocab.size() - 1) +
                ")");
  }
  const TokenType type = vocab.type(id);
  if (!render_special && (type == TokenType::kControl || type == TokenType::kUnknown)) return;
  if (vocab.kind() == VocabKind::kSpm) {
    append_spm(vocab.text(id), type, out);
  } else if (type == TokenType::kUserDefined || type == TokenType::kControl ||
             type == TokenType::kUnknown) {
    // Added tokens are stored as raw text, not byte-mapped: they are matched
    // against the raw input (e.g. DeepSeek's user-defined "ü"), so emit them as is.
    out.append(vocab.text(id));
  } else {
    append_byte_level(vocab.text(id), out);
  }
}

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tok, DecodeOptions opt)
    : tok_(tok), opt_(opt), strip_pending_(tok.strips_leading_space(opt)) {}

std::string StreamingDetokenizer::push(TokenId id) {
  std::string bytes = std::move(pending_);
  pending_.clear();
  const std::size_t before = bytes.size();
  try {
    append_token_bytes(tok_.vocab(), id, opt_.render_special, bytes);
  } catch (...) {
    pending_ = std::move(bytes);  // keep the stream intact
    throw;
  }
  if (strip_pending_ && bytes.size() > before) {
    if (bytes[before] == ' ') bytes.erase(before, 1);
    strip_pending_ = false;
  }
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = utf8::valid_sequence_length(bytes, i);
    if (n > 0) {
      out.append(bytes, i, n);
      i += n;
    } else if (utf8::incomplete_prefix_length(bytes, i) > 0) {
      pending_.assign(bytes, i);  // may still complete with the next token
      break;
    } else {
      out.append(utf8::kReplacement);
      i += utf8::invalid_subpart_length(bytes, i);
    }
  }
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out = utf8::to_valid(pending_);
  pending_.clear();
  return out;
}

}  // namespace folio::tokenizer
