// Shared body of the trace-reader fuzz targets: the readers take a path, so
// each input is written to a per-process temp file, then read to the end
// and fitted (statistics, histogram) the way `servesim fit` does. Only
// ConfigError may escape a reader; anything else, or a sanitizer report,
// is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "sim/core/status.h"
#include "sim/report/histogram_svg.h"
#include "sim/report/log_fit.h"
#include "sim/workload/trace_reader.h"

namespace servesim::fuzz {

inline std::string TempPath(const char* name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/servesim_fuzz_" +
         std::to_string(getpid()) + "_" + name;
}

inline int FuzzTrace(TraceFormat format, const uint8_t* data, size_t size) {
  static const std::string path = TempPath(TraceFormatName(format));
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  TraceOptions o;
  o.path = path;
  o.format = format;
  if (format == TraceFormat::kSessions) SetSessionFieldDefaults(&o);
  // Tolerate bad lines so that the fit runs on whatever was good.
  o.max_bad_fraction = 1.0;
  try {
    std::unique_ptr<TraceReader> reader = OpenTrace(o);
    const LogFit fit = FitTrace(reader.get());
    std::ostringstream svg;
    WriteLengthHistogramSvg(fit.prompt.sorted, fit.completion.sorted, svg);
  } catch (const ConfigError&) {
    // Bad input, reported as it should be.
  }
  return 0;
}

}  // namespace servesim::fuzz
