// Helpers for the trace-reader tests: write a temp file, read it to the
// end, and collect the records, the counts and any error.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/workload/trace_reader.h"

namespace servesim::testing {

inline std::string WriteTraceFile(const std::string& name,
                                  const std::string& content) {
  const std::string path = ::testing::TempDir() + "servesim_trace_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

struct ReadResult {
  std::vector<TraceRecord> records;
  int64_t data_lines = 0, bad_lines = 0;
  std::vector<std::string> first_errors;
  std::string open_error;    // from OpenTrace
  std::string finish_error;  // from Finish
};

inline ReadResult ReadTrace(TraceFormat format, const std::string& name,
                            const std::string& content,
                            double max_bad_fraction = 0.0) {
  TraceOptions o;
  o.path = WriteTraceFile(name, content);
  o.format = format;
  o.max_bad_fraction = max_bad_fraction;
  ReadResult r;
  std::unique_ptr<TraceReader> reader;
  try {
    reader = OpenTrace(o);
  } catch (const ConfigError& e) {
    r.open_error = e.what();
    return r;
  }
  TraceRecord rec;
  while (reader->Next(&rec)) r.records.push_back(rec);
  r.data_lines = reader->data_lines();
  r.bad_lines = reader->bad_lines();
  r.first_errors = reader->first_errors();
  try {
    reader->Finish();
  } catch (const ConfigError& e) {
    r.finish_error = e.what();
  }
  return r;
}

// The single bad line's message of a file with exactly one bad line.
inline std::string OnlyError(const ReadResult& r) {
  EXPECT_EQ(r.bad_lines, 1) << r.finish_error << r.open_error;
  EXPECT_FALSE(r.finish_error.empty());
  return r.first_errors.empty() ? "" : r.first_errors[0];
}

}  // namespace servesim::testing
