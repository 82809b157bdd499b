// grammar/pda.h: the grammar run as a pushdown automaton over bytes.
//
// A stack is a chain of interned nodes: the top node is the character class
// being matched (its element and the class automaton's state), each node
// below is where to continue when the rule above it ends. Chains share
// tails, so a set of stacks (the matcher's state: every parse still
// possible) is a sorted list of top-node ids. One step consumes one byte
// in every stack, then expands rule references and rule ends until every
// top is a class again (the closure). Rule references in tail position
// push nothing (tail calls), so `x*` loops and long lists keep the stacks
// as deep as the nesting, not as long as the output.
//
// Two bottoms: kNoParent is the root's end (reaching it means the output
// may end here: can_end); kBaseParent marks a stack whose context is not
// known (the token-mask cache runs one top in isolation and records
// reaching it as base_end).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/grammar.h"

namespace folio::grammar {

inline constexpr std::uint32_t kNoParent = 0xFFFFFFFF;
inline constexpr std::uint32_t kBaseParent = 0xFFFFFFFE;

struct StackNode {
  std::uint32_t elem = 0;    // element index (top: a class; below: where to continue)
  std::uint32_t parent = 0;  // node id, kNoParent or kBaseParent
  std::uint16_t sub = 0;     // top: the class automaton's state (< 256)
};

// Interned stack nodes. mark()/release() drop every node made after a mark
// (the matcher's trial runs), so the table grows only with accepted text.
class NodeTable {
 public:
  std::uint32_t intern(std::uint32_t elem, std::uint16_t sub, std::uint32_t parent);
  const StackNode& operator[](std::uint32_t id) const { return nodes_[id]; }
  std::size_t size() const { return nodes_.size(); }
  std::size_t mark() const { return nodes_.size(); }
  void release(std::size_t mark);

 private:
  static std::uint64_t key(std::uint32_t elem, std::uint16_t sub, std::uint32_t parent) {
    return (static_cast<std::uint64_t>(elem) << 40) | (static_cast<std::uint64_t>(sub) << 32) |
           parent;
  }
  std::vector<StackNode> nodes_;
  std::unordered_map<std::uint64_t, std::uint32_t> ids_;
};

struct MatchState {
  std::vector<std::uint32_t> tops;  // sorted, unique
  bool can_end = false;             // the root may end here
  bool base_end = false;            // a stack reached kBaseParent (cache runs only)

  bool dead() const { return tops.empty() && !can_end && !base_end; }
  void clear() {
    tops.clear();
    can_end = base_end = false;
  }
  bool operator==(const MatchState&) const = default;
};

class Pda {
 public:
  explicit Pda(const Grammar& g);

  // The state before any byte: the closure of the root rule.
  MatchState start(NodeTable& nodes);
  // The state after `byte` (may be dead).
  void step(NodeTable& nodes, const MatchState& in, std::uint8_t byte, MatchState& out);
  // The closure of one stack whose top is the element `elem` (any kind).
  void expand(NodeTable& nodes, std::uint32_t elem, std::uint32_t parent, MatchState& out);

  const Grammar& grammar() const { return g_; }

 private:
  void closure(NodeTable& nodes, std::uint32_t elem, std::uint32_t parent, MatchState& out);
  void finish(MatchState& out);

  const Grammar& g_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> work_;
  std::unordered_set<std::uint64_t> seen_;
};

}  // namespace folio::grammar
