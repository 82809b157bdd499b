// spec/draft_vocabulary.h: a draft model must speak the target's vocabulary.
//
// Draft tokens are verified by id, so method draft_model needs a draft whose
// token i is the target's token i for every i. check_draft_vocabulary()
// throws folio::Error saying where the two differ: the sizes, or the first
// token id whose text (or type) differs, with both texts.
#pragma once

#include "tokenizer/vocab.h"

namespace folio::spec {

void check_draft_vocabulary(const tokenizer::Vocab& target, const tokenizer::Vocab& draft);

}  // namespace folio::spec
