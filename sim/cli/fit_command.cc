// `servesim fit LOG`: summarise a request log the way a capacity planner
// reads it first, and turn it into a ready-to-run scenario and a picture.
// Without --format the format is guessed from the first line (see
// GuessTraceFormat); an unrecognised first line is an error asking for it.
#include <fstream>
#include <iostream>
#include <memory>

#include "sim/cli/commands.h"
#include "sim/core/json_view.h"
#include "sim/core/output_file.h"
#include "sim/core/paths.h"
#include "sim/report/histogram_svg.h"
#include "sim/report/log_fit.h"
#include "sim/report/log_fit_writers.h"
#include "sim/workload/trace_reader.h"

namespace servesim {
namespace {

struct FitOptions {
  std::string log;
  std::string format;  // empty: guess
  std::string field_prompt = "prompt_tokens";
  std::string field_completion = "completion_tokens";
  std::string field_timestamp = "timestamp";
  std::string timestamp_unit = "auto";
  std::string model, log_type;  // BurstGPT filters
  double max_bad_fraction = 0.0;
  std::string out;
  std::string plot;
};


StatusOr<LogFit> ReadAndFit(const FitOptions& o, TraceOptions* trace) {
  return CatchConfigErrors([&] {
    trace->path = ResolveDataPath(o.log);
    if (o.format.empty()) {
      trace->format = GuessTraceFormat(trace->path);
    } else {
      TraceFormatFromName(o.format, &trace->format);  // CLI11 checked it
    }
    trace->prompt_field = o.field_prompt;
    trace->completion_field = o.field_completion;
    if (trace->format == TraceFormat::kSessions) {
      // Its own defaults (input_length, output_length) unless named.
      TraceOptions defaults;
      SetSessionFieldDefaults(&defaults);
      if (o.field_prompt == "prompt_tokens") {
        trace->prompt_field = defaults.prompt_field;
      }
      if (o.field_completion == "completion_tokens") {
        trace->completion_field = defaults.completion_field;
      }
    }
    trace->timestamp_field = o.field_timestamp;
    TimestampUnitFromName(o.timestamp_unit, &trace->timestamp_unit);
    if ((!o.model.empty() || !o.log_type.empty()) &&
        trace->format != TraceFormat::kBurstGpt) {
      throw ConfigError(trace->path + ": --model and --log-type filter the "
                        "burstgpt format's rows; this trace is " +
                        TraceFormatName(trace->format));
    }
    trace->model_filter = o.model;
    trace->log_type_filter = o.log_type;
    trace->max_bad_fraction = o.max_bad_fraction;
    std::unique_ptr<TraceReader> reader = OpenTrace(*trace);
    return FitTrace(reader.get());
  });
}

Status Fit(const FitOptions& o) {
  if (Status st = CheckOutputPaths({{"--out", o.out}, {"--plot", o.plot}},
                                    {o.log});
      !st.ok()) {
    return st;
  }
  TraceOptions trace;
  StatusOr<LogFit> fit = ReadAndFit(o, &trace);
  if (!fit.ok()) return fit.status();
  const std::string source = o.log + " (" + TraceFormatName(trace.format) + ")";
  WriteFitReport(*fit, source, std::cout);
  if (!o.out.empty()) {
    Status st = WriteFileWith(o.out, [&](std::ostream& os) {
      os << DumpOutputJson(FitScenarioJson(*fit, o.log), 2) << "\n";
    });
    if (!st.ok()) return st;
    std::cout << "Wrote scenario " << o.out << " (servesim run " << o.out
              << ")\n";
  }
  if (!o.plot.empty()) {
    Status st = WriteFileWith(o.plot, [&](std::ostream& os) {
      WriteLengthHistogramSvg(fit->prompt.sorted, fit->completion.sorted, os);
    });
    if (!st.ok()) return st;
    std::cout << "Wrote histogram " << o.plot << "\n";
  }
  return Status::Ok();
}

}  // namespace

Command AddFitCommand(CLI::App* app) {
  auto opts = std::make_shared<FitOptions>();
  CLI::App* fit = app->add_subcommand(
      "fit",
      "Summarise a request log or trace: length percentiles, "
      "log-normal fit, arrival burstiness, prefix reuse");
  fit->add_option("log", opts->log, "Request log or trace file")->required();
  fit->add_option("--format", opts->format,
                  "jsonl | azure | mooncake | lengths | burstgpt | sessions "
                  "(default: guessed from the first line)")
      ->check(CLI::IsMember({"jsonl", "azure", "mooncake", "lengths",
                             "burstgpt", "sessions"}));
  fit->add_option("--field-prompt", opts->field_prompt,
                  "JSONL field with the prompt token count (sessions: "
                  "default input_length)")
      ->capture_default_str()
      ->check(NotAnOption());
  fit->add_option("--field-completion", opts->field_completion,
                  "JSONL field with the completion token count (sessions: "
                  "default output_length)")
      ->capture_default_str()
      ->check(NotAnOption());
  fit->add_option("--field-timestamp", opts->field_timestamp,
                  "JSONL field with the arrival time (a number, or ISO 8601)")
      ->capture_default_str()
      ->check(NotAnOption());
  fit->add_option("--timestamp-unit", opts->timestamp_unit,
                  "Unit of numeric timestamps: auto (the format's own, else "
                  "detected and reported) | s | ms | us")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "s", "ms", "us"}));
  fit->add_option("--model", opts->model,
                  "burstgpt: keep only rows of this Model (e.g. ChatGPT)")
      ->check(NotAnOption());
  fit->add_option("--log-type", opts->log_type,
                  "burstgpt: keep only rows of this Log Type (e.g. "
                  "\"Conversation log\")")
      ->check(NotAnOption());
  fit->add_option("--max-bad-fraction", opts->max_bad_fraction,
                  "Share of malformed lines tolerated (default 0: any fails)")
      ->check(NumberIn(0.0, 1.0));
  fit->add_option("--out", opts->out,
                  "Write a ready-to-run scenario JSON fitted to the log")
      ->check(NotAnOption());
  fit->add_option("--plot", opts->plot,
                  "Write an SVG of the length histograms (log-scale axis)")
      ->check(NotAnOption());
  return [fit, opts]() -> Status {
    if (!fit->parsed()) return Status::Ok();
    return Fit(*opts);
  };
}

}  // namespace servesim
