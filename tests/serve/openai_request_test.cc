// Parsing of OpenAI request bodies: prompt lengths, block hashes, the
// output-length controls, and the 400s for bad fields.
#include "sim/serve/openai_request.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace servesim {
namespace {

CompletionRequest MustParse(const std::string& body, bool chat = false) {
  CompletionRequest r;
  ApiError e;
  EXPECT_TRUE(ParseCompletionRequest(body, chat, 16, &r, &e)) << e.message;
  return r;
}

ApiError MustFail(const std::string& body, bool chat = false) {
  CompletionRequest r;
  ApiError e;
  EXPECT_FALSE(ParseCompletionRequest(body, chat, 16, &r, &e)) << body;
  return e;
}

TEST(OpenAiRequest, TextPromptIsFourCharactersPerTokenRoundedUp) {
  EXPECT_EQ(MustParse(R"({"prompt": "abcd"})").prompt_len, 1);
  EXPECT_EQ(MustParse(R"({"prompt": "abcde"})").prompt_len, 2);
  EXPECT_EQ(MustParse(R"({"prompt": ""})").prompt_len, 1);
  const CompletionRequest r = MustParse(R"({"prompt": ")" + std::string(400, 'x') + R"("})");
  EXPECT_EQ(r.prompt_len, 100);
  EXPECT_EQ(r.block_hashes.size(), 7u);  // 400 bytes / 64 per block, rounded up
}

TEST(OpenAiRequest, TokenIdsGiveTheLengthAndSharedPrefixesShareBlockHashes) {
  std::string a = "[", b = "[";
  for (int i = 0; i < 40; ++i) {
    a += std::to_string(i) + ",";
    b += std::to_string(i < 32 ? i : 1000 + i) + ",";
  }
  a.back() = ']';
  b.back() = ']';
  const CompletionRequest ra = MustParse(R"({"prompt": )" + a + "}");
  const CompletionRequest rb = MustParse(R"({"prompt": [)" + b + "]}");  // a batch of one
  EXPECT_EQ(ra.prompt_len, 40);
  ASSERT_EQ(ra.block_hashes.size(), 3u);
  ASSERT_EQ(rb.block_hashes.size(), 3u);
  EXPECT_EQ(ra.block_hashes[0], rb.block_hashes[0]);
  EXPECT_EQ(ra.block_hashes[1], rb.block_hashes[1]);
  EXPECT_NE(ra.block_hashes[2], rb.block_hashes[2]);
}

TEST(OpenAiRequest, ChatMessagesAreRenderedWithRoleMarkers) {
  // "<|user|>\n" (9) + "hello" (5) + "\n" (1) = 15 bytes: 4 tokens.
  const CompletionRequest r =
      MustParse(R"({"messages": [{"role": "user", "content": "hello"}]})", true);
  EXPECT_EQ(r.prompt_len, 4);
  const CompletionRequest parts = MustParse(
      R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]})",
      true);
  EXPECT_EQ(parts.block_hashes, r.block_hashes);
}

TEST(OpenAiRequest, OutputControls) {
  const CompletionRequest r = MustParse(
      R"({"prompt": "x", "max_tokens": 30, "min_tokens": 5, "ignore_eos": true,
          "stream": true, "stream_options": {"include_usage": true}})");
  EXPECT_EQ(r.max_tokens, 30);
  EXPECT_EQ(r.min_tokens, 5);
  EXPECT_TRUE(r.ignore_eos);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(MustParse(R"({"messages": [{"role": "user", "content": "x"}],
                          "max_completion_tokens": 7})", true).max_tokens, 7);
}

TEST(OpenAiRequest, BadFieldsAre400sNamingTheParameter) {
  struct Case {
    std::string body;
    std::string param;
  } cases[] = {
      {"{bad", ""},
      {"[1, 2]", ""},
      {R"({"max_tokens": 3})", "prompt"},
      {R"({"prompt": 7})", "prompt"},
      {R"({"prompt": ["a", "b"]})", "prompt"},
      {R"({"prompt": "x", "max_tokens": 0})", "max_tokens"},
      {R"({"prompt": "x", "max_tokens": "ten"})", "max_tokens"},
      {R"({"prompt": "x", "max_tokens": 4, "min_tokens": 5})", "min_tokens"},
      {R"({"prompt": "x", "n": 2})", "n"},
      {R"({"prompt": "x", "stream": "yes"})", "stream"},
      {R"({"prompt": "x", "stream_options": {"include_usage": true}})", "stream_options"},
      {R"({"prompt": "x", "model": 3})", "model"},
  };
  for (const Case& c : cases) {
    const ApiError e = MustFail(c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    const nlohmann::json j = nlohmann::json::parse(ApiErrorJson(e));
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_TRUE(j["error"]["code"].is_null());
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
    EXPECT_EQ(j["error"]["param"].is_null(), c.param.empty()) << c.body;
  }
  EXPECT_EQ(MustFail(R"({"messages": []})", true).param, "messages");
  EXPECT_EQ(MustFail(R"({"messages": [{"content": "x"}]})", true).param, "messages[0]");
  EXPECT_EQ(MustFail(R"({"prompt": "x"})", true).param, "messages");
}

}  // namespace
}  // namespace servesim
