// The OpenAI-compatible request bodies `servesim serve` accepts
// (/v1/completions, /v1/chat/completions), parsed into what the simulated
// engine needs: a prompt length, the content of the prompt's KV blocks (for
// the prefix cache), and the output-length controls. No text is generated
// from the prompt; only its length and block contents matter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

// A rejected request: the HTTP status and OpenAI's error object fields.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // empty: JSON null
};

// {"error":{"message":...,"type":...,"param":...,"code":null}}
std::string ApiErrorJson(const ApiError& e);

struct CompletionRequest {
  bool chat = false;
  std::string model;          // as sent ("" when absent)
  int32_t prompt_len = 0;     // tokens
  // One content hash per KV block of the prompt (the last may be partial):
  // equal prompt prefixes give equal leading hashes, so the engine's prefix
  // cache sees real sharing between requests.
  std::vector<uint64_t> block_hashes;
  int32_t max_tokens = 0;     // 0: not given
  int32_t min_tokens = 0;
  bool ignore_eos = false;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

// Characters per token of the tokenizer-free estimate for text prompts
// (OpenAI's rule of thumb for English text under BPE tokenizers).
inline constexpr int32_t kCharsPerToken = 4;

// Tokens of a text prompt: ceil(bytes / kCharsPerToken), at least 1.
int32_t EstimateTokens(const std::string& text);

// Parses `body` for the endpoint (`chat`); `block_size` is the engine's KV
// block size in tokens. false with *error set when the request is bad.
// A chat request's prompt is its messages rendered as "<|role|>\n" +
// content + "\n" each (a generic chat template, whose markers count toward
// the estimate as a real template's special tokens do).
bool ParseCompletionRequest(const std::string& body, bool chat, int32_t block_size,
                            CompletionRequest* out, ApiError* error);

}  // namespace servesim
