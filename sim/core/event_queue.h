// Min-heap of events ordered by (time, sequence number). The sequence number
// is assigned at push time, so events at the same instant pop in the order
// they were scheduled (FIFO ties) and every run is deterministic.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/core/time.h"

namespace servesim {

enum class EventKind : uint8_t {
  kArrival,     // a request reaches the client-side source (intended time)
  kStepDone,    // the replica finished an iteration
  kClientSend,  // a closed-loop client's think time ended
  kSessionTurn, // a multi-turn session's next turn is due
  kTransferDone, // disaggregation: a request's KV transfer ended
  kTraceTurn,   // a sessions trace's later turn is due (after its parent)
  kEngineArrival,  // frontend: the engine core has a request (payload: id)
  kClientReceived, // frontend: the client has a request's last token
  kTokenizerWindow, // frontend: an API server's tokenizer window closes
                    // (payload: the window's handle)
};

struct Event {
  SimTime time = 0;
  uint64_t seq = 0;
  EventKind kind = EventKind::kArrival;
  int64_t payload = 0;  // request id, client id, ... depending on kind
};

class EventQueue {
 public:
  void Push(SimTime time, EventKind kind, int64_t payload) {
    heap_.push(Event{time, next_seq_++, kind, payload});
  }
  bool Empty() const { return heap_.empty(); }
  size_t Size() const { return heap_.size(); }
  const Event& Top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace servesim
