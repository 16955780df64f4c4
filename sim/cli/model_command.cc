// `servesim model import CONFIG.json`: a model file (models/llm format) from
// a local Hugging Face config.json, offline. The mapping and what is refused
// live in sim/model/hf_config.h; this is the command line around it.
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>

#include "sim/cli/commands.h"
#include "sim/core/json_view.h"
#include "sim/core/output_file.h"
#include "sim/model/hf_config.h"
#include "sim/model/model_file.h"
#include "sim/model/model_loader.h"
#include "sim/report/format.h"

namespace servesim {
namespace {

struct ImportOptions {
  std::string config;
  std::string name;
  std::string out;
  std::string source;
  std::string served_hf_id;
};

// A config is nearly always named config.json, so its directory names the
// model (~/hf/Qwen3-8B/config.json -> qwen3-8b); else the file's stem.
std::string DefaultName(const std::string& config) {
  namespace fs = std::filesystem;
  const fs::path p = fs::absolute(fs::path(config)).lexically_normal();
  std::string name = p.stem().string();
  if (name == "config") name = p.parent_path().filename().string();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

Status Import(ImportOptions o) {
  if (o.name.empty()) o.name = DefaultName(o.config);
  if (o.name.empty() || o.name.find('/') != std::string::npos || o.name[0] == '.') {
    return Status::Error("--name " + o.name +
                         ": expected a file name such as qwen3-8b (no '/', not starting with '.')");
  }
  for (const auto& [flag, text] : {std::pair{"--name", o.name}, {"--source", o.source},
                                   {"--served-hf-id", o.served_hf_id}}) {
    if (!IsValidUtf8(text)) return Status::Error(std::string(flag) + ": expected UTF-8 text");
  }
  // The input's errors first: a missing config is the news, not its name.
  StatusOr<ModelSpec> m = CatchConfigErrors([&] {
    return ImportHfConfigFile(o.config, {o.name, o.source, o.served_hf_id});
  });
  if (!m.ok()) return m.status();
  if (o.out.empty()) o.out = o.name + ".json";
  if (Status st = CheckOutputPaths({{"--out", o.out}}, {o.config}); !st.ok()) return st;
  const std::string text = ModelFileText(*m);
  // What was written must load as any shipped model file does.
  StatusOr<ModelSpec> back = CatchConfigErrors([&] {
    return ParseModelSpec(JsonView(ParseJsonOrThrow(text, o.out), o.out));
  });
  if (!back.ok()) return back.status();
  if (Status st = WriteTextFile(o.out, text); !st.ok()) return st;
  const ModelSpec& s = *back;
  std::cout << "wrote " << o.out << ": " << s.name << ", "
            << Fmt("%.2fB", s.ParamCount() / 1e9) << " parameters, " << s.num_layers
            << " layers, " << s.num_heads << "/" << s.num_kv_heads << " heads/KV heads, "
            << Fmt("%.1f", s.KvBytesPerTokenPerGpu(1) / 1024) << " KiB KV per token"
            << (s.is_moe() ? ", " + std::to_string(s.experts_per_token) + "/" +
                                 std::to_string(s.num_experts) + " experts"
                           : "")
            << " (a scenario's model: " << o.out << ")\n";
  return Status::Ok();
}

}  // namespace

Command AddModelCommand(CLI::App* app) {
  auto opts = std::make_shared<ImportOptions>();
  CLI::App* model = app->add_subcommand("model", "Model files: import one from a Hugging Face config.json");
  model->require_subcommand(1);
  CLI::App* imp = model->add_subcommand(
      "import",
      "Write a servesim model file from a local Hugging Face config.json (offline); "
      "architectures servesim does not model yet (MLA, sliding windows, shared "
      "experts, hybrid attention, multimodal wrappers) are refused");
  imp->add_option("config", opts->config, "The config.json to read")
      ->required()
      ->check(NotAnOption());
  imp->add_option("--name", opts->name,
                  "The model's name (default, in lower case: the directory of a config.json, else the file's stem)")
      ->check(NotAnOption());
  imp->add_option("--out", opts->out, "The model file to write (default: NAME.json)")
      ->check(NotAnOption());
  imp->add_option("--source", opts->source,
                  "Where the config came from, e.g. its huggingface.co URL and the "
                  "date (default: the config's path)")
      ->check(NotAnOption());
  imp->add_option("--served-hf-id", opts->served_hf_id,
                  "The Hugging Face id vLLM serves (default: the config's _name_or_path)")
      ->check(NotAnOption());
  return [imp, opts]() -> Status {
    if (!imp->parsed()) return Status::Ok();
    return Import(*opts);
  };
}

}  // namespace servesim
