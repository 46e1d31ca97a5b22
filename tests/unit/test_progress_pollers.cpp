// The progress engine's pollers: a disarmed poller is left out of passes, its owner arms it
// when work arrives, and it may disarm itself from inside its poll.
#include <gtest/gtest.h>

#include "runtime/progress.h"

namespace weft {
namespace {

// A poller with a queue of `work` items: each call handles one; with nothing left it disarms
// itself, as the collective and request-pair pollers do.
struct Queue {
  Progress* progress = nullptr;
  Progress::PollerId id = 0;
  int work = 0, calls = 0;
  static int poll(void* ctx) {
    auto* q = static_cast<Queue*>(ctx);
    ++q->calls;
    if (q->work > 0) --q->work;
    if (q->work == 0) q->progress->disarm(q->id);
    return q->work >= 0 ? 1 : 0;
  }
};

TEST(ProgressPollers, DisarmedPollersAreNotCalled) {
  Progress p;
  Queue a{&p}, b{&p};
  a.id = p.add_poller(Queue::poll, &a, false);
  b.id = p.add_poller(Queue::poll, &b);
  EXPECT_EQ(p.poll(), 1);  // b only
  EXPECT_EQ(a.calls, 0);
  EXPECT_EQ(b.calls, 1);
  EXPECT_EQ(p.poll(), 0);  // b disarmed itself: nothing is called
  EXPECT_EQ(b.calls, 1);
}

TEST(ProgressPollers, ArmedUntilTheWorkIsDone) {
  Progress p;
  Queue q{&p};
  q.id = p.add_poller(Queue::poll, &q, false);
  q.work = 3;
  p.arm(q.id);
  for (int i = 0; i < 10; ++i) (void)p.poll();
  EXPECT_EQ(q.calls, 3);
  EXPECT_EQ(q.work, 0);
}

TEST(ProgressPollers, RemovingOneKeepsTheOthersIdsAndTheSlotIsReused) {
  Progress p;
  Queue a{&p}, b{&p}, c{&p};
  a.id = p.add_poller(Queue::poll, &a, false);
  b.id = p.add_poller(Queue::poll, &b, false);
  p.remove_poller(Queue::poll, &a);
  b.work = 1;
  p.arm(b.id);
  (void)p.poll();
  EXPECT_EQ(a.calls, 0);
  EXPECT_EQ(b.calls, 1);
  c.id = p.add_poller(Queue::poll, &c, false);
  EXPECT_EQ(c.id, a.id);
  c.work = 1;
  p.arm(c.id);
  (void)p.poll();
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(b.calls, 1);
}

}  // namespace
}  // namespace weft
