// Request source (see request_source.h).
#include "sim/engine/request_source.h"

#include <cmath>

#include "sim/core/status.h"

namespace servesim {

RequestSource::RequestSource(const RequestSourceConfig& config, uint64_t seed)
    : config_(config),
      input_rng_(seed, "input_len"),
      output_rng_(seed, "output_len"),
      prefix_rng_(seed, "prefix"),
      class_rng_(seed, "class") {
  if (config_.trace) reader_ = OpenTrace(*config_.trace);
}

void RequestSource::DrawLengths(RequestSpec* spec) {
  if (!config_.classes.empty()) {
    const int32_t k = ClassOfDraw(config_.classes, class_rng_.Uniform());
    const RequestClass& c = config_.classes[k];
    spec->request_class = k;
    spec->prompt_len = c.input_len->Sample(input_rng_);
    spec->output_len = c.output_len->Sample(output_rng_);
    return;
  }
  if (config_.input_len) spec->prompt_len = config_.input_len->Sample(input_rng_);
  if (config_.output_len) spec->output_len = config_.output_len->Sample(output_rng_);
}

bool RequestSource::Next(RequestSpec* spec, double* trace_time_s,
                         TraceTurn* turn) {
  *trace_time_s = NAN;
  if (reader_) {
    if (trace_done_) return false;
    TraceRecord rec;
    if (!reader_->Next(&rec)) {
      trace_done_ = true;
      try {
        reader_->Finish();
      } catch (const ConfigError& e) {
        trace_error_ = e.what();
      }
      return false;
    }
    spec->prompt_len = rec.input_tokens;
    spec->output_len = rec.output_tokens;
    spec->priority = rec.priority;
    if (!rec.hash_ids.empty()) {
      spec->content.trace_hashes =
          std::make_shared<const std::vector<uint64_t>>(std::move(rec.hash_ids));
      spec->content.trace_block_tokens = reader_->block_tokens();
    }
    if (config_.trace->use_timestamps) {
      *trace_time_s = rec.timestamp_s * config_.trace->time_scale;
    }
    if (turn) {
      turn->record = records_;
      turn->parent = rec.parent;
      turn->root = rec.root;
      turn->think_time_s = rec.think_time_s * config_.trace->time_scale;
    }
    ++records_;
  } else {
    DrawLengths(spec);
  }
  if (config_.prefix) config_.prefix->Apply(prefix_rng_, spec);
  return true;
}

}  // namespace servesim
