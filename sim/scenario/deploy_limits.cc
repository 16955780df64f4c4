// Deployment limits of a scenario (see deploy_limits.h).
#include "sim/scenario/deploy_limits.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "sim/engine/scheduler.h"

namespace servesim {
namespace {

std::string N(int64_t x) { return std::to_string(x); }

// The longest drawn prompt and output before the prefix model, and how.
void DrawnBounds(const Scenario& s, int64_t* prompt, int64_t* output, std::string* how) {
  const WorkloadConfig& w = s.workload;
  if (w.trace) {
    // One record's prompt + output; a prefix model adds to the prompt.
    *prompt = s.trace_longest_tokens;
    *how = "the trace's longest record (" + w.trace->path + " line " +
           N(s.trace_longest_line) + ": " + N(s.trace_longest_tokens) + " tokens)";
    return;
  }
  for (const RequestClass& c : w.classes) {
    const int64_t in = c.input_len->Max(), out = c.output_len->Max();
    if (in + out > *prompt + *output) {
      *prompt = in, *output = out;
      *how = "class " + c.name + ": input_len max " + N(in) + " + output_len max " + N(out);
    }
  }
  if (w.classes.empty() && w.input_len && w.output_len) {
    *prompt = w.input_len->Max();
    *output = w.output_len->Max();
    *how = "input_len max " + N(*prompt) + " + output_len max " + N(*output);
  }
}

}  // namespace

LongestRequest LongestRequestOf(const Scenario& s) {
  const WorkloadConfig& w = s.workload;
  int64_t prompt = 0, output = 0;
  std::string how;
  DrawnBounds(s, &prompt, &output, &how);
  if (w.prefix) {
    const int64_t before = prompt + output;
    w.prefix->BoundLengths(&prompt, &output);
    if (w.prefix->DefinesLengths()) {
      how = "the prefix model's prompt " + N(prompt) + " + output " + N(output);
    } else if (prompt + output > before) {
      how += " + the longest shared prefix (" + N(prompt + output - before) + ")";
    }
  }
  if (prompt + output == 0) return {};  // no lengths known: unbounded
  LongestRequest r{prompt + output, how};
  if (w.sessions && w.input_len && w.output_len) {
    // A later turn's prompt is the conversation so far plus its new input
    // (capped at INT32_MAX / 2 tokens, as the simulation does).
    const int64_t turns = w.sessions->turns->Max();
    const int64_t per_turn = int64_t{w.input_len->Max()} + w.output_len->Max();
    if (turns > 1) {
      r.tokens = std::min<int64_t>(r.tokens + (turns - 1) * per_turn,
                                   int64_t{INT32_MAX} / 2 + w.output_len->Max());
      r.how = "a session of up to " + N(turns) + " turns, each later prompt holding the "
              "conversation so far (first turn: " + how + "; each later turn up to " +
              N(per_turn) + " more)";
    }
  }
  return r;
}

int64_t KvTokenCapacity(const Scenario& s) {
  const int64_t blocks = std::max<int64_t>(0, s.engine.num_gpu_blocks - Scheduler::kReservedBlocks);
  return blocks * s.engine.block_size;
}

MaxModelLen PlanMaxModelLen(const Scenario& s) {
  MaxModelLen m;
  m.longest = LongestRequestOf(s);
  if (m.longest.tokens == 0) m.longest = {INT64_MAX, "no bound known"};
  m.kv_tokens = KvTokenCapacity(s);
  const int64_t context = s.model.max_context;
  m.tokens = std::min({m.longest.tokens, m.kv_tokens, context});
  if (m.longest.tokens <= m.tokens) return m;
  const std::string longest =
      m.longest.tokens == INT64_MAX
          ? "the workload gives no bound on a request's length"
          : "the workload's longest request is " + N(m.longest.tokens) + " tokens (" +
                m.longest.how + ")";
  if (m.tokens == m.kv_tokens) {
    m.note = "--max-model-len " + N(m.tokens) + " is all the KV cache holds (" +
             N(s.engine.num_gpu_blocks - Scheduler::kReservedBlocks) + " blocks of " +
             N(s.engine.block_size) + " tokens on " + N(s.tp) + " x " + s.gpu.name +
             "); " + longest + ": vLLM rejects longer ones, as the simulation does";
  } else {
    m.note = "--max-model-len " + N(m.tokens) + " is " + s.model.name +
             "'s context (max_position_embeddings); " + longest +
             ": vLLM rejects longer ones, which the simulation would serve up to the "
             "KV cache's " + N(m.kv_tokens) + " tokens";
  }
  return m;
}

}  // namespace servesim
