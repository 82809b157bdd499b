// grammar/pda.cpp: stack interning, the closure and the one-byte step.
#include "grammar/pda.h"

#include <algorithm>

#include "base/error.h"

namespace folio::grammar {

std::uint32_t NodeTable::intern(std::uint32_t elem, std::uint16_t sub, std::uint32_t parent) {
  const auto [it, fresh] = ids_.try_emplace(key(elem, sub, parent), 0);
  if (fresh) {
    FOLIO_CHECK(nodes_.size() < kBaseParent, "grammar stack table full");
    it->second = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(StackNode{elem, parent, sub});
  }
  return it->second;
}

void NodeTable::release(std::size_t mark) {
  for (std::size_t i = mark; i < nodes_.size(); ++i) {
    const StackNode& n = nodes_[i];
    ids_.erase(key(n.elem, n.sub, n.parent));
  }
  nodes_.resize(std::min(mark, nodes_.size()));
}

Pda::Pda(const Grammar& g) : g_(g) {
  FOLIO_CHECK(g.elements.size() < (std::size_t{1} << 24));
  for (const Utf8Class& c : g.classes) FOLIO_CHECK(c.num_states() < 256);  // NodeTable::key
}

MatchState Pda::start(NodeTable& nodes) {
  MatchState s;
  seen_.clear();
  // The root as if referenced from a one-element alternative: an element
  // list that is only the root's alternatives, each ending at kNoParent.
  for (const std::uint32_t alt : g_.rules[g_.root].alternatives) closure(nodes, alt, kNoParent, s);
  finish(s);
  return s;
}

void Pda::expand(NodeTable& nodes, std::uint32_t elem, std::uint32_t parent, MatchState& out) {
  seen_.clear();
  closure(nodes, elem, parent, out);
  finish(out);
}

void Pda::finish(MatchState& out) {
  std::ranges::sort(out.tops);
  out.tops.erase(std::unique(out.tops.begin(), out.tops.end()), out.tops.end());
}

void Pda::closure(NodeTable& nodes, std::uint32_t elem0, std::uint32_t parent0, MatchState& out) {
  work_.clear();
  work_.emplace_back(elem0, parent0);
  while (!work_.empty()) {
    const auto [elem, parent] = work_.back();
    work_.pop_back();
    if (!seen_.insert((static_cast<std::uint64_t>(elem) << 32) | parent).second) continue;
    const Element& e = g_.elements[elem];
    switch (e.kind) {
      case ElementKind::kClass:
        out.tops.push_back(nodes.intern(elem, 0, parent));
        break;
      case ElementKind::kClassStar:
        out.tops.push_back(nodes.intern(elem, 0, parent));
        work_.emplace_back(elem + 1, parent);
        break;
      case ElementKind::kRule: {
        // A reference in tail position returns straight to our parent.
        const std::uint32_t ret = g_.elements[elem + 1].kind == ElementKind::kEnd
                                      ? parent
                                      : nodes.intern(elem + 1, 0, parent);
        for (const std::uint32_t alt : g_.rules[e.arg].alternatives) work_.emplace_back(alt, ret);
        break;
      }
      case ElementKind::kEnd:
        if (parent == kNoParent) {
          out.can_end = true;
        } else if (parent == kBaseParent) {
          out.base_end = true;
        } else {
          const StackNode p = nodes[parent];
          work_.emplace_back(p.elem, p.parent);
        }
        break;
    }
  }
}

void Pda::step(NodeTable& nodes, const MatchState& in, std::uint8_t byte, MatchState& out) {
  out.clear();
  seen_.clear();
  for (const std::uint32_t id : in.tops) {
    const StackNode n = nodes[id];
    const Element& e = g_.elements[n.elem];
    const std::uint16_t s = g_.classes[e.arg].next(n.sub, byte);
    if (s == Utf8Class::kReject) continue;
    if (s != Utf8Class::kDone) {
      out.tops.push_back(nodes.intern(n.elem, s, n.parent));
      continue;
    }
    if (e.kind == ElementKind::kClassStar) out.tops.push_back(nodes.intern(n.elem, 0, n.parent));
    closure(nodes, n.elem + 1, n.parent, out);
  }
  finish(out);
}

}  // namespace folio::grammar
