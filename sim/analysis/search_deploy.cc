// The cheapest deployment as files that run (see search.h): a `vllm serve`
// line vLLM starts with (--max-model-len within the simulated KV cache, a
// token budget vLLM accepts, the served Hugging Face id, the simulated
// policy, speculative decoding and KV offload), or SGLang's launch_server
// line for an SGLang scenario, and Kubernetes manifests.
#include <cctype>
#include <sstream>
#include <utility>

#include "sim/analysis/search.h"
#include "sim/model/model_loader.h"
#include "sim/report/format.h"
#include "sim/scenario/vllm_batch_defaults.h"

namespace servesim {
namespace {

// A word a POSIX shell reads as itself, else in single quotes.
std::string ShellQuote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) ||
                      std::string("_./:=@%+,-").find(c) != std::string::npos);
  }
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A YAML double-quoted scalar.
std::string YamlQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A Kubernetes object name (DNS-1035 label): lower case letters, digits and
// single '-', starting with a letter, at most 63 characters.
std::string DnsName(const std::string& engine, const std::string& s) {
  std::string out = engine + "-";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (out.back() != '-') {
      out += '-';
    }
  }
  if (out.size() > 63) out.resize(63);
  while (out.back() == '-') out.pop_back();
  return out;
}

std::string N(int64_t x) { return std::to_string(x); }

// Simulated settings beyond the grid's: scheduling policy, speculative
// decoding, KV offload and swap, a given KV block count.
void AddEngineSettings(const Scenario& base, VllmServeLine* v) {
  const EngineConfig& e = base.engine;
  std::vector<std::string>& a = v->args;
  if (e.long_prefill_token_threshold > 0) {
    a.insert(a.end(), {"--long-prefill-token-threshold", N(e.long_prefill_token_threshold)});
  }
  if (e.policy == "priority") {
    a.insert(a.end(), {"--scheduling-policy", "priority"});
    v->notes.push_back("--scheduling-policy priority: clients send each request's class "
                       "priority in the request body's \"priority\" field (lower first)");
  } else if (e.policy != "fcfs") {
    v->notes.push_back("engine.policy " + e.policy +
                       " was simulated: vLLM has no such scheduling policy (fcfs or "
                       "priority), so this line runs vLLM's fcfs");
  }
  if (e.spec.on()) {
    a.insert(a.end(), {"--speculative-config",
                       "{\"method\": \"ngram\", \"num_speculative_tokens\": " +
                           N(e.spec.num_speculative_tokens) + "}"});
    const double accept = e.spec.beta_a > 0 ? e.spec.beta_a / (e.spec.beta_a + e.spec.beta_b)
                                            : e.spec.acceptance_rate;
    v->notes.push_back(
        "speculative decoding was simulated with " + N(e.spec.num_speculative_tokens) +
        " draft tokens, mean acceptance " + Fmt("%.2f", accept) + " and a draft pass costing " +
        Fmt("%g", e.spec.draft_cost_fraction) +
        " of a target decode pass; --speculative-config names n-gram drafting (no draft "
        "model): set \"method\" (and \"model\") to the drafter that gives that acceptance");
  }
  if (base.kv_offload_cpu_gib > 0) {
    a.insert(a.end(), {"--kv-offloading-size", Fmt("%g", base.kv_offload_cpu_gib),
                       "--kv-offloading-backend", "native"});
    v->notes.push_back("--kv-offloading-size " + Fmt("%g", base.kv_offload_cpu_gib) +
                       " GiB of host memory per replica (over its GPUs) for the KV offload tier");
  }
  if (e.swap_preemption) {
    v->notes.push_back("engine.preemption swap was simulated: vLLM " + std::string(kVllmVersion) +
                       " has no vLLM flag for it (its v1 engine preempts by recompute)");
  }
  if (base.num_gpu_blocks_given) {
    v->notes.push_back("engine.num_gpu_blocks " + N(e.num_gpu_blocks) +
                       " was given: vLLM sizes its KV cache from --gpu-memory-utilization");
  }
}

}  // namespace

std::string VllmServeLine::CommandLine() const {
  std::string line = program;
  for (const std::string& a : args) line += " " + ShellQuote(a);
  return line;
}

namespace {

// SGLang's launch line: the candidate's limits where the search set them
// (SGLang derives the others for the GPU as servesim did), the simulated
// cache and scheduler settings, in SGLang's flag names.
VllmServeLine SglangLaunch(const Scenario& base, const SearchRow& row) {
  const SearchCandidate& c = row.candidate;
  const SglangConfig& g = base.engine.sglang;
  VllmServeLine v;
  v.program = "python3";
  v.args = {"-m", "sglang.launch_server", "--model-path", base.model.served_hf_id, "--tp-size",
            N(c.tp), "--host", "0.0.0.0", "--port", "8000"};
  std::vector<std::string>& a = v.args;
  if (row.deploy.tokens > 0) a.insert(a.end(), {"--context-length", N(row.deploy.tokens)});
  if (c.max_num_seqs > 0) a.insert(a.end(), {"--max-running-requests", N(c.max_num_seqs)});
  if (!c.chunked_prefill) {
    a.insert(a.end(), {"--chunked-prefill-size", "-1"});
    if (c.max_num_batched_tokens > 0) {
      a.insert(a.end(), {"--max-prefill-tokens", N(c.max_num_batched_tokens)});
    }
  } else if (c.max_num_batched_tokens > 0) {
    a.insert(a.end(), {"--chunked-prefill-size", N(c.max_num_batched_tokens)});
  }
  if (g.page_size != 1) a.insert(a.end(), {"--page-size", N(g.page_size)});
  const nlohmann::json& e = base.json.contains("engine") ? base.json["engine"] : nlohmann::json();
  if (e.contains("sglang") && e["sglang"].contains("mem_fraction_static")) {
    a.insert(a.end(), {"--mem-fraction-static", Fmt("%g", base.gpu_memory_utilization)});
  }
  if (g.schedule_policy != SglangPolicy::kFcfs) {
    a.insert(a.end(), {"--schedule-policy", SglangPolicyName(g.schedule_policy)});
  }
  if (g.schedule_conservativeness != 1.0) {
    a.insert(a.end(), {"--schedule-conservativeness", Fmt("%g", g.schedule_conservativeness)});
  }
  if (g.disable_overlap_schedule) a.push_back("--disable-overlap-schedule");
  if (base.model.fp8_weights()) a.insert(a.end(), {"--quantization", "fp8"});
  if (base.model.fp8_kv()) a.insert(a.end(), {"--kv-cache-dtype", "fp8_e4m3"});
  v.notes.push_back("SGLang " + std::string(kSglangVersion) +
                    " as simulated; flags left out take SGLang's defaults for the GPU, which "
                    "servesim derived the same way");
  if (base.num_gpu_blocks_given) {
    v.notes.push_back("engine.sglang.max_total_tokens " + N(g.max_total_tokens) +
                      " was given: add --max-total-tokens " + N(g.max_total_tokens));
  }
  if (g.init_new_token_ratio != 0.7 || g.min_new_token_ratio_factor != 0.14 ||
      g.new_token_ratio_decay_steps != 600) {
    v.notes.push_back("set SGLANG_INIT_NEW_TOKEN_RATIO=" + Fmt("%g", g.init_new_token_ratio) +
                      " SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR=" +
                      Fmt("%g", g.min_new_token_ratio_factor) +
                      " SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS=" + N(g.new_token_ratio_decay_steps) +
                      " in the server's environment, as simulated");
  }
  if (!row.deploy.note.empty()) {
    // The context limit's note, in SGLang's flag and name.
    std::string note = row.deploy.note;
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"--max-model-len",
                                                                       "--context-length"},
                                   {"vLLM rejects", "SGLang rejects"}}) {
      for (size_t at = note.find(from); at != std::string::npos; at = note.find(from, at)) {
        note.replace(at, from.size(), to);
        at += to.size();
      }
    }
    v.notes.push_back(note);
  }
  return v;
}

}  // namespace

VllmServeLine VllmServe(const Scenario& base, const SearchRow& row) {
  if (base.engine.kind == EngineKind::kSglang) return SglangLaunch(base, row);
  const SearchCandidate& c = row.candidate;
  VllmServeLine v;
  v.args = {"serve", base.model.served_hf_id, "--tensor-parallel-size", N(c.tp)};
  if (c.pp > 1) v.args.insert(v.args.end(), {"--pipeline-parallel-size", N(c.pp)});
  if (row.deploy.tokens > 0) v.args.insert(v.args.end(), {"--max-model-len", N(row.deploy.tokens)});
  // A limit the search left to vLLM (0) is written as vLLM's default for
  // the GPU, the value simulated, so the line runs it on any vLLM.
  const VllmBatchDefaults d = VllmServeBatchDefaults(LoadGpuSpec(c.gpu));
  v.args.insert(v.args.end(),
                {"--max-num-seqs", N(c.max_num_seqs > 0 ? c.max_num_seqs : d.max_num_seqs),
                 "--max-num-batched-tokens",
                 N(c.max_num_batched_tokens > 0 ? c.max_num_batched_tokens
                                                : d.max_num_batched_tokens),
                 c.chunked_prefill ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill",
                 base.engine.prefix_caching ? "--enable-prefix-caching"
                                            : "--no-enable-prefix-caching",
                 "--block-size", N(base.engine.block_size), "--gpu-memory-utilization",
                 Fmt("%g", base.gpu_memory_utilization)});
  if (!base.engine.async_scheduling) v.args.push_back("--no-async-scheduling");
  if (base.model.fp8_weights()) v.args.insert(v.args.end(), {"--quantization", "fp8"});
  if (base.model.fp8_kv()) v.args.insert(v.args.end(), {"--kv-cache-dtype", "fp8"});
  if (!row.deploy.note.empty()) v.notes.push_back(row.deploy.note);
  if (row.asked_max_num_batched_tokens > 0) {
    v.notes.push_back("--max-num-batched-tokens " + N(c.max_num_batched_tokens) +
                      " (raised from " + N(row.asked_max_num_batched_tokens) +
                      ", and simulated so): with chunked prefill off vLLM needs it >= "
                      "--max-model-len");
  }
  AddEngineSettings(base, &v);
  return v;
}

std::string VllmServeCommand(const Scenario& base, const SearchRow& row) {
  return VllmServe(base, row).CommandLine();
}

std::string VllmArgsFile(const Scenario& base, const SearchRow& row) {
  const VllmServeLine v = VllmServe(base, row);
  std::string out = v.CommandLine() + "\n";
  for (const std::string& note : v.notes) out += "# " + note + "\n";
  return out;
}

std::string KubernetesManifest(const Scenario& base, const SearchResult& r) {
  const SearchRow& row = r.rows[*r.cheapest];
  const SearchCandidate& c = row.candidate;
  const int64_t replicas = r.CheapestReplicas();
  const std::string router = r.CheapestRouter();
  const VllmServeLine v = VllmServe(base, row);
  const bool sglang = base.engine.kind == EngineKind::kSglang;
  const std::string name = DnsName(sglang ? "sglang" : "vllm", base.model.name);
  std::ostringstream y;
  y << "# servesim search: cheapest deployment of " << base.model.name << " meeting the SLO\n"
    << "# " << c.Name() << ", " << replicas << " replicas x " << c.gpus() << " " << c.gpu
    << (router.empty() ? " (ideal router assumed: put a load balancer in front)\n"
                       : " behind a " + router + " load balancer (as simulated)\n");
  for (const std::string& note : v.notes) y << "# " << note << "\n";
  y << "# HF_TOKEN comes from the Secret hf-token-secret (key token), needed for gated\n"
    << "# models: kubectl create secret generic hf-token-secret --from-literal=token=hf_...\n"
    << "apiVersion: apps/v1\n"
    << "kind: Deployment\n"
    << "metadata:\n"
    << "  name: " << name << "\n"
    << "  labels:\n"
    << "    app: " << name << "\n"
    << "spec:\n"
    << "  replicas: " << replicas << "\n"
    << "  selector:\n"
    << "    matchLabels:\n"
    << "      app: " << name << "\n"
    << "  template:\n"
    << "    metadata:\n"
    << "      labels:\n"
    << "        app: " << name << "\n"
    << "    spec:\n"
    << "      containers:\n"
    << "        - name: " << (sglang ? "sglang" : "vllm") << "\n"
    << "          image: "
    << (sglang ? std::string("lmsysorg/sglang:v") + kSglangVersion
               : std::string("vllm/vllm-openai:v") + kVllmVersion)
    << "\n"
    << "          command: [\"" << v.program << "\"]\n"
    << "          args:\n";
  for (const std::string& a : v.args) y << "            - " << YamlQuote(a) << "\n";
  y << "          env:\n"
    << "            - name: HF_TOKEN\n"
    << "              valueFrom:\n"
    << "                secretKeyRef:\n"
    << "                  name: hf-token-secret\n"
    << "                  key: token\n"
    << "                  optional: true\n"
    << "          ports:\n"
    << "            - name: http\n"
    << "              containerPort: 8000\n"
    << "          resources:\n"
    << "            requests:\n"
    << "              nvidia.com/gpu: " << c.gpus() << "\n"
    << "            limits:\n"
    << "              nvidia.com/gpu: " << c.gpus() << "\n"
    << "          volumeMounts:\n"
    << "            - name: dshm\n"
    << "              mountPath: /dev/shm\n"
    << "          # Downloading and loading the weights can take many minutes: the\n"
    << "          # startup probe allows 30 (180 x 10 s), then readiness and liveness\n"
    << "          # take over.\n";
  const auto probe = [&y](const char* kind, int period, int failures) {
    y << "          " << kind << ":\n"
      << "            httpGet:\n"
      << "              path: /health\n"
      << "              port: 8000\n"
      << "            periodSeconds: " << period << "\n"
      << "            timeoutSeconds: 5\n"
      << "            failureThreshold: " << failures << "\n";
  };
  probe("startupProbe", 10, 180);
  probe("readinessProbe", 5, 3);
  probe("livenessProbe", 10, 3);
  y << "      volumes:\n"
    << "        - name: dshm\n"
    << "          emptyDir:\n"
    << "            medium: Memory\n"
    << "            sizeLimit: 8Gi\n"
    << "      # Run on " << c.gpu << " nodes: add the nodeSelector your cluster uses\n"
    << "      # for that GPU (e.g. the nvidia.com/gpu.product label).\n"
    << "---\n"
    << "apiVersion: v1\n"
    << "kind: Service\n"
    << "metadata:\n"
    << "  name: " << name << "\n"
    << "  labels:\n"
    << "    app: " << name << "\n"
    << "spec:\n"
    << "  type: ClusterIP\n"
    << "  selector:\n"
    << "    app: " << name << "\n"
    << "  ports:\n"
    << "    - name: http\n"
    << "      port: 8000\n"
    << "      targetPort: http\n"
    << "      protocol: TCP\n";
  return y.str();
}

}  // namespace servesim
