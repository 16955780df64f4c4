// Shared by the step-export and timeline tests: a private temporary
// directory, reading a file back, and a run with streamed step outputs.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/test_util.h"

namespace servesim::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string d =
        (std::filesystem::temp_directory_path() / "servesim_steps_XXXXXX")
            .string();
    if (::mkdtemp(d.data()) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = d;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  // Names of the files in the directory, sorted, space-separated.
  std::string List() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : " ") + n;
    return s;
  }

 private:
  std::string dir_;
};

inline void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// The two-request golden scenario of tests/engine/engine_test.cc
// (Engine.GoldenEventSequence): step 1 ms + 0.1 ms per prompt token +
// 0.5 ms per decoding sequence, sync scheduling.
inline std::string GoldenTwoRequestScenario() {
  return LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("arrival": {"process": "constant", "rate": 1000},
         "input_len": {"dist": "fixed", "value": 10},
         "output_len": {"dist": "fixed", "value": 3}, "num_requests": 2)",
      R"("async_scheduling": false)");
}

// Busier traffic on two replicas: batches mix prefill and decode, the cache
// is tight enough to preempt.
inline std::string TwoReplicaScenario(int64_t num_requests) {
  return R"({"seed": 3, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
    "cost_model": {"type": "linear", "step_s": 0.002, "prefill_token_s": 0.00002,
                   "decode_seq_s": 0.0003},
    "engine": {"num_gpu_blocks": 300, "max_num_seqs": 16},
    "cluster": {"replicas": 2},
    "workload": {"arrival": {"process": "poisson", "rate": 40},
      "input_len": {"dist": "uniform", "min": 20, "max": 400},
      "output_len": {"dist": "uniform", "min": 5, "max": 200},
      "num_requests": )" +
         std::to_string(num_requests) + "}}";
}

}  // namespace servesim::testing
