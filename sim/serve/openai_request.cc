// Parsing of OpenAI completion and chat completion bodies (see
// openai_request.h).
#include "sim/serve/openai_request.h"

#include <algorithm>
#include <climits>

#include <nlohmann/json.hpp>

namespace servesim {
namespace {

using nlohmann::json;

// FNV-1a over bytes, then a 64-bit finaliser (splitmix64's) so that short
// inputs spread over all bits.
uint64_t HashBytes(const char* p, size_t n, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 1099511628211ULL;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

ApiError Bad(std::string message, std::string param) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  return e;
}

// Block hashes of a text prompt: block i covers bytes
// [i, i + 1) x block_size x kCharsPerToken.
std::vector<uint64_t> TextBlocks(const std::string& text, int32_t block_size) {
  std::vector<uint64_t> out;
  const size_t chunk = static_cast<size_t>(block_size) * kCharsPerToken;
  for (size_t at = 0; at < text.size(); at += chunk) {
    out.push_back(HashBytes(text.data() + at, std::min(chunk, text.size() - at), 1));
  }
  if (out.empty()) out.push_back(HashBytes("", 0, 1));
  return out;
}

std::vector<uint64_t> TokenBlocks(const std::vector<int64_t>& ids, int32_t block_size) {
  std::vector<uint64_t> out;
  for (size_t at = 0; at < ids.size(); at += static_cast<size_t>(block_size)) {
    const size_t n = std::min(static_cast<size_t>(block_size), ids.size() - at);
    out.push_back(HashBytes(reinterpret_cast<const char*>(ids.data() + at),
                            n * sizeof(int64_t), 2));
  }
  return out;
}

// An integer field in [lo, hi], or absent/null (returns false, no error).
bool IntField(const json& j, const char* key, int64_t lo, int64_t hi, int64_t* v,
              ApiError* error) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return false;
  if (!it->is_number_integer() && !it->is_number_unsigned()) {
    *error = Bad(std::string(key) + " must be an integer", key);
    return false;
  }
  const int64_t x = it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX
                        ? INT64_MAX
                        : it->get<int64_t>();
  if (x < lo || x > hi) {
    *error = Bad(std::string(key) + " must be in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + std::to_string(x),
                 key);
    return false;
  }
  *v = x;
  return true;
}

bool BoolField(const json& j, const char* key, bool* v, ApiError* error) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_boolean()) {
    *error = Bad(std::string(key) + " must be a boolean", key);
    return false;
  }
  *v = it->get<bool>();
  return true;
}

// `prompt`: a string, a list of token ids, or a one-element list of either
// (a batch of several prompts is refused: one request, one engine request).
bool ParsePrompt(const json& p, int32_t block_size, CompletionRequest* out,
                 ApiError* error) {
  const json* one = &p;
  if (p.is_array() && p.size() == 1 && (p[0].is_string() || p[0].is_array())) {
    one = &p[0];
  }
  if (one->is_string()) {
    const std::string& text = one->get_ref<const std::string&>();
    out->prompt_len = EstimateTokens(text);
    out->block_hashes = TextBlocks(text, block_size);
    return true;
  }
  if (one->is_array() && !one->empty()) {
    std::vector<int64_t> ids;
    ids.reserve(one->size());
    for (const json& t : *one) {
      if (!t.is_number_integer() && !t.is_number_unsigned()) {
        *error = Bad("prompt must be a string or a list of token ids (integers); "
                     "a batch of several prompts is not supported",
                     "prompt");
        return false;
      }
      ids.push_back(t.get<int64_t>());
    }
    if (ids.size() > INT32_MAX / 2) {
      *error = Bad("prompt has too many tokens", "prompt");
      return false;
    }
    out->prompt_len = static_cast<int32_t>(ids.size());
    out->block_hashes = TokenBlocks(ids, block_size);
    return true;
  }
  *error = Bad("prompt must be a non-empty string or list of token ids", "prompt");
  return false;
}

// `messages`: [{role, content}], content a string or a list of text parts.
bool ParseMessages(const json& m, int32_t block_size, CompletionRequest* out,
                   ApiError* error) {
  if (!m.is_array() || m.empty()) {
    *error = Bad("messages must be a non-empty list", "messages");
    return false;
  }
  std::string text;
  for (size_t i = 0; i < m.size(); ++i) {
    const json& msg = m[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object() || !msg.contains("role") || !msg["role"].is_string()) {
      *error = Bad(where + " must be an object with a string role", where);
      return false;
    }
    text += "<|" + msg["role"].get<std::string>() + "|>\n";
    const json content = msg.value("content", json());
    if (content.is_string()) {
      text += content.get<std::string>();
    } else if (content.is_array()) {
      for (const json& part : content) {
        if (part.is_object() && part.value("type", "") == "text" &&
            part.contains("text") && part["text"].is_string()) {
          text += part["text"].get<std::string>();
        } else {
          *error = Bad(where + ".content: only text parts are supported", where + ".content");
          return false;
        }
      }
    } else if (!content.is_null()) {
      *error = Bad(where + ".content must be a string or a list of text parts",
                   where + ".content");
      return false;
    }
    text += "\n";
  }
  out->prompt_len = EstimateTokens(text);
  out->block_hashes = TextBlocks(text, block_size);
  return true;
}

}  // namespace

std::string ApiErrorJson(const ApiError& e) {
  json err = {{"message", e.message},
              {"type", e.type},
              {"param", e.param.empty() ? json() : json(e.param)},
              {"code", nullptr}};
  return json{{"error", err}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

int32_t EstimateTokens(const std::string& text) {
  const size_t n = (text.size() + kCharsPerToken - 1) / kCharsPerToken;
  return static_cast<int32_t>(std::clamp<size_t>(n, 1, INT32_MAX / 2));
}

bool ParseCompletionRequest(const std::string& body, bool chat, int32_t block_size,
                            CompletionRequest* out, ApiError* error) {
  *out = CompletionRequest();
  out->chat = chat;
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    *error = Bad("the request body is not valid JSON", "");
    return false;
  }
  if (!j.is_object()) {
    *error = Bad("the request body must be a JSON object", "");
    return false;
  }
  if (j.contains("model")) {
    if (!j["model"].is_string()) {
      *error = Bad("model must be a string", "model");
      return false;
    }
    out->model = j["model"].get<std::string>();
  }
  if (chat) {
    if (!j.contains("messages")) {
      *error = Bad("messages is required", "messages");
      return false;
    }
    if (!ParseMessages(j["messages"], block_size, out, error)) return false;
  } else {
    if (!j.contains("prompt")) {
      *error = Bad("prompt is required", "prompt");
      return false;
    }
    if (!ParsePrompt(j["prompt"], block_size, out, error)) return false;
  }
  error->message.clear();
  int64_t v = 0;
  // max_completion_tokens is the chat API's newer name for max_tokens.
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (IntField(j, key, 1, INT32_MAX / 2, &v, error)) out->max_tokens = static_cast<int32_t>(v);
    if (!error->message.empty()) return false;
  }
  if (IntField(j, "min_tokens", 0, INT32_MAX / 2, &v, error)) out->min_tokens = static_cast<int32_t>(v);
  if (!error->message.empty()) return false;
  if (out->max_tokens > 0 && out->min_tokens > out->max_tokens) {
    *error = Bad("min_tokens (" + std::to_string(out->min_tokens) +
                     ") must not exceed max_tokens (" + std::to_string(out->max_tokens) + ")",
                 "min_tokens");
    return false;
  }
  if (IntField(j, "n", 1, INT32_MAX, &v, error) && v != 1) {
    *error = Bad("n must be 1: one completion per request is supported", "n");
    return false;
  }
  if (!error->message.empty()) return false;
  if (!BoolField(j, "ignore_eos", &out->ignore_eos, error)) return false;
  if (!BoolField(j, "stream", &out->stream, error)) return false;
  if (auto it = j.find("stream_options"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      *error = Bad("stream_options must be an object", "stream_options");
      return false;
    }
    if (!out->stream) {
      *error = Bad("stream_options is only allowed when stream is true", "stream_options");
      return false;
    }
    if (!BoolField(*it, "include_usage", &out->include_usage, error)) {
      error->param = "stream_options.include_usage";
      return false;
    }
  }
  return true;
}

}  // namespace servesim
