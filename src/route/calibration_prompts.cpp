#include "route/calibration_prompts.h"

#include <span>
#include <utility>

#include "route/score.h"
#include "route/threshold.h"

namespace folio::route {
namespace {

// The sample by kind, in builtin_calibration_prompts()'s order.

// Chit-chat.
const char* const kChitChat[] = {
    "hi!",
    "Hello, how are you today?",
    "Good morning! Any plans for the weekend?",
    "Thanks, that was helpful.",
    "Tell me a joke about cats.",
    "Can you recommend a good book for a long flight?",
    "I'm bored. Suggest something fun to do indoors on a rainy afternoon.",
    "Write a short birthday message for my sister who loves hiking.",
    "What should I cook tonight? I have rice, eggs and some spinach.",
    "Give me three names for a golden retriever puppy.",
    "Translate 'where is the train station' into French.",
    "Write a haiku about autumn leaves.",
    "Rewrite this sentence to sound more polite: send me the report now.",
    "Summarize in one sentence: The meeting was moved to Thursday because the room was booked.",
};

// Simple facts.
const char* const kFacts[] = {
    "What is the capital of Australia?",
    "Who wrote Pride and Prejudice?",
    "What is 2+3?",
    "How many days are in a leap year?",
    "What is the boiling point of water in Fahrenheit?",
    "When did the Berlin Wall fall?",
    "What does HTTP stand for?",
    "Is a tomato a fruit or a vegetable?",
    "How tall is Mount Everest?",
    "What's the difference between weather and climate, briefly?",
    "Which planet is closest to the sun?",
    "What language is spoken in Brazil?",
    "Convert 5 kilometers to miles.",
    "What year did the first person walk on the moon?",
};

// Multi-step math.
const char* const kMath[] = {
    "Solve for x: 3x + 7 = 22.",
    "What is the derivative of x^3 * sin(x)? Show the steps.",
    "Prove that the square root of 2 is irrational.",
    "A train leaves at 9:15 going 80 km/h and a second leaves the same station at 10:00 going "
    "110 km/h on the same track. When and where does the second catch up? Explain step by "
    "step.",
    "Compute the integral of x * e^(2x) from 0 to 1 and explain why integration by parts "
    "works here.",
    "Find all integer solutions of x^2 - y^2 = 45 and prove there are no others.",
    "Let A = [[2, 1], [1, 3]]. Find the eigenvalues and eigenvectors of the matrix and check "
    "that A = P D P^-1.",
    "What is the probability of getting at least two sixes in five rolls of a fair die? Derive "
    "the formula, then compute it.",
    "Prove by induction that 1 + 2 + ... + n = n(n+1)/2 for every n >= 1, then use the result to "
    "derive a closed form for the sum of the first n odd numbers.",
    "Solve the system of equations 2x + 3y - z = 5, x - y + 2z = 3, 3x + y + z = 10 step by "
    "step, and verify the solution by substituting back.",
};

// Code.
const char* const kCode[] = {
    "How do I reverse a list in Python?",
    "What does the `static` keyword mean in C++?",
    "Write a Python function that checks whether a string is a palindrome.",
    "Why does this print 3 three times?\n```js\nfor (var i = 0; i < 3; i++) {\n  "
    "setTimeout(() => console.log(i), 0);\n}\n```",
    "Implement an LRU cache in C++ with O(1) get and put, and explain the complexity of each "
    "operation.",
    "Debug this function; it returns the wrong result for n = 0:\n```python\ndef fact(n):\n"
    "    if n == 1:\n        return 1\n    return n * fact(n - 1)\n```",
    "Refactor this code to avoid the nested loops and analyze the complexity before and "
    "after:\n```python\ndef pairs(xs, target):\n    out = []\n    for i in range(len(xs)):\n"
    "        for j in range(i + 1, len(xs)):\n            if xs[i] + xs[j] == target:\n"
    "                out.append((i, j))\n    return out\n```",
    "This C++ code crashes sometimes. Find the bug and explain why it happens:\n```cpp\n"
    "#include <thread>\n#include <vector>\nstd::vector<int> v;\nvoid add() {\n  for (int i = "
    "0; i < 1000; ++i) v.push_back(i);\n}\nint main() {\n  std::thread a(add), b(add);\n"
    "  a.join();\n  b.join();\n  return v.size() == 2000 ? 0 : 1;\n}\n```",
    "Write a SQL query that returns the top 3 customers by total order value in 2023.",
    "Implement Dijkstra's algorithm in Rust for a graph given as an adjacency list, and "
    "optimize it with a binary heap.",
    "Explain the difference between a process and a thread.",
    "Why does TypeScript reject this?\n```ts\ninterface User { id: number; name?: string }\n"
    "const greet = (u: User): string => `Hello ${u.name.toUpperCase()}`;\n```",
    "Review this Go code for race conditions and suggest a fix:\n```go\nfunc (c *Counter) "
    "Inc() {\n\tc.n++\n}\n\nfunc main() {\n\tc := &Counter{}\n\tvar wg sync.WaitGroup\n"
    "\tfor i := 0; i < 100; i++ {\n\t\twg.Add(1)\n\t\tgo func() {\n\t\t\tdefer "
    "wg.Done()\n\t\t\tc.Inc()\n\t\t}()\n\t}\n\twg.Wait()\n\tfmt.Println(c.n)\n}\n```",
    "Write a bash one-liner that counts the lines of all .cpp files under src/.",
};

// Analysis.
const char* const kAnalysis[] = {
    "Compare REST and GraphQL for a mobile app backend.",
    "Explain why the sky is blue.",
    "Analyze the main causes of the 2008 financial crisis and evaluate which regulatory "
    "changes since then address them.",
    "Compare the trade-offs of microservices and a monolith for a team of five engineers "
    "building a new product, and justify a recommendation.",
    "Explain in detail how public-key cryptography lets two strangers agree on a secret over an "
    "open channel, step by step, and why an eavesdropper cannot derive it.",
    "Evaluate this argument: 'Since crime fell after the new policy, the policy caused the "
    "drop.' What would you need to know to prove or refute it?",
    "Our web service's p99 latency doubled after a deploy, but CPU and memory look normal. "
    "Analyze the likely causes, explain how to debug each one, and propose a plan to find the "
    "culprit within an hour.",
    "Design an experiment to compare two onboarding flows for a mobile app, including sample "
    "size, metrics and how to analyze the results for statistical significance.",
    "Write a 500-word essay on the impact of the printing press on European society.",
    "Summarize this email for my manager in three bullet points: Hi all, quick update on the "
    "office move. The movers come on Friday afternoon, so please pack your desks by Thursday "
    "evening and label every box with your name and new room. Monitors and docking stations "
    "stay where they are; IT will set up the new ones over the weekend. The kitchen on the new "
    "floor opens on Monday, but the coffee machine arrives a week later, so the old one stays "
    "on the third floor until then. Parking passes do not change. If you have questions, ask "
    "Maria at the front desk. Thanks for your patience during the move!",
    "Here are our quarterly sales: 2022: Q1 120k, Q2 135k, Q3 128k, Q4 160k; 2023: Q1 140k, "
    "Q2 150k, Q3 149k, Q4 181k. Analyze the growth year over year and quarter over quarter, "
    "compare the two years' seasonality, and explain why a forecast of 200k for Q4 2024 is or "
    "is not plausible.",
    "Read the following paragraph and list its three main claims: Remote work has grown "
    "steadily since 2020. Companies report lower office costs, while employees report better "
    "focus but weaker ties to colleagues. Some firms now require two office days a week.",
};

}  // namespace

std::vector<std::string> builtin_calibration_prompts() {
  std::vector<std::string> out;
  using Kind = std::span<const char* const>;
  for (Kind kind : {Kind(kChitChat), Kind(kFacts), Kind(kMath), Kind(kCode), Kind(kAnalysis)}) {
    out.insert(out.end(), kind.begin(), kind.end());
  }
  return out;
}

double calibrate_policy_threshold(const std::vector<RouteFeatures>& sample, const RoutePolicy& p,
                                  double large_share) {
  std::vector<double> scores;
  scores.reserve(sample.size());
  for (const RouteFeatures& f : sample) scores.push_back(route_score(f, p.weights));
  return calibrate_threshold(std::move(scores), large_share);
}

}  // namespace folio::route
