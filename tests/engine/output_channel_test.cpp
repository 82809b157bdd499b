// tests/engine/output_channel_test.cpp: the per-request output channel
// (base/notify_queue.h carrying engine::RequestOutput).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "engine/protocol.h"

namespace folio::engine {
namespace {

RequestOutput item(TokenId t, bool finished = false) {
  RequestOutput i;
  SampleDelta d;
  d.token_ids = {t};
  i.samples.push_back(d);
  i.finished = finished;
  return i;
}

TEST(OutputChannel, NotifiesOncePerDrainEdge) {
  OutputChannel s;
  std::atomic<int> calls{0};
  s.set_notify([&] { ++calls; });
  s.push(item(1));
  s.push(item(2));  // not drained yet: no second wake-up
  EXPECT_EQ(calls, 1);
  auto got = s.drain();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].samples[0].token_ids[0], 2);
  s.push(item(3));
  EXPECT_EQ(calls, 2);
}

TEST(OutputChannel, SetNotifyFiresWhenItemsWait) {
  OutputChannel s;
  s.push(item(1));
  int calls = 0;
  s.set_notify([&] { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(OutputChannel, NothingAfterFinal) {
  OutputChannel s;
  s.push(item(1, true));
  s.push(item(2));
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(s.drain().size(), 1u);
}

TEST(OutputChannel, BlockingConsumerSeesEverythingInOrder) {
  OutputChannel s;
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) s.push(item(i, i == 999));
  });
  std::vector<TokenId> seen;
  while (seen.size() < 1000) {
    for (auto& it : s.wait_drain(std::chrono::milliseconds(100)))
      seen.push_back(it.samples[0].token_ids[0]);
  }
  producer.join();
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
}

TEST(OutputChannel, DetachFencesRunningCallback) {
  OutputChannel s;
  std::atomic<bool> in_cb{false}, release{false};
  s.set_notify([&] {
    in_cb = true;
    while (!release) std::this_thread::yield();
  });
  std::thread producer([&] { s.push(item(1)); });
  while (!in_cb) std::this_thread::yield();
  std::atomic<bool> detached{false};
  std::thread detacher([&] {
    s.set_notify(nullptr);
    detached = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(detached);  // waits for the callback to return
  release = true;
  detacher.join();
  producer.join();
  EXPECT_TRUE(detached);
}

}  // namespace
}  // namespace folio::engine
