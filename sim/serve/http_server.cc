// The OpenAI-compatible HTTP API (see http_server.h).
#include "sim/serve/http_server.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "sim/serve/openai_request.h"

namespace servesim {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

void SendError(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(ApiErrorJson(e), "application/json");
}

ApiError Error(int status, std::string message, std::string type = "invalid_request_error",
               std::string param = "") {
  ApiError e;
  e.status = status;
  e.message = std::move(message);
  e.type = std::move(type);
  e.param = std::move(param);
  return e;
}

// Synthetic output: token i of request `id` is one short word, so clients
// that count words or re-tokenize see about one token per token.
const char* Word(int64_t id, int32_t i) {
  static const char* const kWords[] = {" the", " of", " and", " to", " in", " is",
                                       " it", " on", " for", " as", " at", " by",
                                       " we", " be", " or", " an"};
  return kWords[static_cast<size_t>(id + i) % 16];
}

// What a response needs from the request's stream once it is done or has
// tokens: copied under the stream's lock.
struct StreamView {
  int64_t id = -1;
  int32_t prompt_len = 0, output_len = 0, max_tokens = 0, released = 0, cached = 0;
  bool done = false, rejected = false;
  std::string error;
};

StreamView View(TokenStream& s) {
  StreamView v;
  v.id = s.id;
  v.prompt_len = s.prompt_len;
  v.output_len = s.output_len;
  v.max_tokens = s.max_tokens;
  v.released = s.released;
  v.cached = s.cached_tokens;
  v.done = s.done;
  v.rejected = s.rejected;
  v.error = s.error;
  return v;
}

const char* FinishReason(const StreamView& v) {
  return v.max_tokens > 0 && v.output_len >= v.max_tokens ? "length" : "stop";
}

json Usage(const StreamView& v) {
  return {{"prompt_tokens", v.prompt_len},
          {"completion_tokens", v.released},
          {"total_tokens", v.prompt_len + v.released},
          {"prompt_tokens_details", {{"cached_tokens", v.cached}}}};
}

std::string ResponseId(bool chat, int64_t id) {
  return (chat ? "chatcmpl-" : "cmpl-") + std::to_string(id);
}

// A non-streamed answer.
std::string FullResponse(bool chat, const StreamView& v, const std::string& model,
                         int64_t created) {
  std::string text;
  for (int32_t i = 0; i < v.released; ++i) text += Word(v.id, i);
  json choice = {{"index", 0}, {"finish_reason", FinishReason(v)}};
  if (chat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = text;
    choice["logprobs"] = nullptr;
  }
  json j = {{"id", ResponseId(chat, v.id)},
            {"object", chat ? "chat.completion" : "text_completion"},
            {"created", created},
            {"model", model},
            {"choices", json::array({choice})},
            {"usage", Usage(v)}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// One server-sent event per token: "data: {chunk}\n\n". The chunk's fixed
// parts are built once per request.
class ChunkWriter {
 public:
  ChunkWriter(bool chat, int64_t id, const std::string& model, int64_t created)
      : chat_(chat) {
    json head = {{"id", ResponseId(chat, id)},
                 {"object", chat ? "chat.completion.chunk" : "text_completion"},
                 {"created", created},
                 {"model", model}};
    head_ = head.dump(-1, ' ', false, json::error_handler_t::replace);
    head_.pop_back();  // the closing brace: choices follow
  }

  void Token(const char* word, const char* finish, std::string* out) const {
    *out += "data: " + head_ + ",\"choices\":[{\"index\":0,";
    if (chat_) {
      *out += std::string("\"delta\":{\"content\":\"") + word + "\"}";
    } else {
      *out += std::string("\"text\":\"") + word + "\",\"logprobs\":null";
    }
    *out += ",\"finish_reason\":";
    *out += finish ? std::string("\"") + finish + "\"" : std::string("null");
    *out += "}]}\n\n";
  }
  // Chat: the assistant's role, before its first token.
  void Role(std::string* out) const {
    *out += "data: " + head_ +
            ",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
            "\"finish_reason\":null}]}\n\n";
  }
  void UsageChunk(const json& usage, std::string* out) const {
    *out += "data: " + head_ + ",\"choices\":[],\"usage\":" + usage.dump() + "}\n\n";
  }

 private:
  bool chat_;
  std::string head_;
};

// cpp-httplib 0.11 listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG,
// fixed when Debian built the library): a burst of clients connecting at
// once overflows it, and the kernel drops their handshakes (a client then
// fails to read). Calling listen() again on the listening socket sets a new
// backlog (Linux); the socket is found among this process's descriptors by
// its port, as the library does not expose it.
void RaiseListenBacklog(int port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  while (const dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (fd <= 2) continue;
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) {
      continue;
    }
    sockaddr_storage addr{};
    len = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    int bound = -1;
    if (addr.ss_family == AF_INET) {
      bound = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      bound = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
    }
    if (bound == port) listen(fd, SOMAXCONN);
  }
  closedir(dir);
}

int64_t UnixNow() { return static_cast<int64_t>(std::time(nullptr)); }

}  // namespace

HttpServer::HttpServer(OnlineEngine* engine, HttpOptions options)
    : engine_(engine), options_(std::move(options)), server_(new httplib::Server) {
  const int threads = std::max(1, options_.threads);
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Every token is its own small write: without TCP_NODELAY, Nagle's
  // algorithm holds it until the previous one is acknowledged.
  server_->set_tcp_nodelay(true);
  server_->set_keep_alive_max_count(100000);
  server_->set_payload_max_length(64u << 20);
  Routes();
}

HttpServer::~HttpServer() = default;

Status HttpServer::Bind() {
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host);
  } else {
    port_ = server_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    return Status::Error("cannot listen on " + options_.host + ":" +
                         std::to_string(options_.port) +
                         ": expected a free port and a local address");
  }
  RaiseListenBacklog(port_);
  return Status::Ok();
}

void HttpServer::Run() { server_->listen_after_bind(); }

void HttpServer::Stop(double wait_s) {
  closing_ = true;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(wait_s));
  while (in_progress_.load() > 0 && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  server_->stop();
}

void HttpServer::Routes() {
  httplib::Server& s = *server_;
  const std::string model = options_.model_name;

  auto completion = [this, model](const httplib::Request& req, httplib::Response& res,
                                  bool chat) {
    if (closing_ || engine_->stopping()) {
      SendError(res, Error(503, "the server is shutting down", "server_error"));
      return;
    }
    CompletionRequest cr;
    ApiError err;
    if (!ParseCompletionRequest(req.body, chat, options_.block_size, &cr, &err)) {
      SendError(res, err);
      return;
    }
    if (!cr.model.empty() && cr.model != model) {
      SendError(res, Error(404, "The model `" + cr.model + "` does not exist.",
                           "invalid_request_error", "model"));
      return;
    }
    auto stream = std::make_shared<TokenStream>();
    stream->max_tokens = cr.max_tokens;
    switch (engine_->Submit(cr.prompt_len, std::move(cr.block_hashes), cr.max_tokens,
                            cr.min_tokens, cr.ignore_eos, stream, options_.replica)) {
      case OnlineEngine::SubmitResult::kAccepted: break;
      case OnlineEngine::SubmitResult::kFull:
        SendError(res, Error(503, "the server is overloaded: too many requests in flight "
                                  "(servesim serve --max-requests)",
                             "server_error"));
        return;
      case OnlineEngine::SubmitResult::kStopping:
        SendError(res, Error(503, "the server is shutting down", "server_error"));
        return;
    }
    ++in_progress_;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(
                                                 options_.request_timeout_s));
    // Admission (or rejection) first: a request the engine can never serve
    // gets its 400 before any stream starts.
    StreamView v;
    {
      std::unique_lock<std::mutex> lock(stream->mu);
      stream->cv.wait_until(lock, deadline, [&] { return stream->id >= 0 || stream->done; });
      v = View(*stream);
    }
    const int64_t created = UnixNow();
    auto timed_out = [] {
      return Error(504, "the request timed out (servesim serve --request-timeout)",
                   "timeout_error");
    };
    auto failed = [](const StreamView& sv) {
      return sv.rejected ? Error(400, sv.error, "invalid_request_error", "prompt")
                         : Error(503, sv.error, "server_error");
    };
    if (v.id < 0 && !v.done) {
      SendError(res, timed_out());
      engine_->Abort(stream);  // its client is told it failed: the engine drops it
      --in_progress_;
      return;
    }
    if (v.done && !v.error.empty()) {
      SendError(res, failed(v));
      --in_progress_;
      return;
    }
    if (!cr.stream) {
      {
        std::unique_lock<std::mutex> lock(stream->mu);
        stream->cv.wait_until(lock, deadline, [&] { return stream->done; });
        v = View(*stream);
      }
      if (!v.done) {
        SendError(res, timed_out());
        engine_->Abort(stream);
      } else if (!v.error.empty()) {
        SendError(res, failed(v));
      } else {
        res.status = 200;
        res.set_content(FullResponse(chat, v, model, created), "application/json");
      }
      --in_progress_;
      return;
    }
    // Streamed: the provider blocks until the next tokens' step has ended.
    struct State {
      int32_t sent = 0;
      bool finished = false;
    };
    auto state = std::make_shared<State>();
    auto writer = std::make_shared<ChunkWriter>(chat, v.id, model, created);
    const bool usage = cr.include_usage;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, stream, state, writer, deadline, usage, chat, timed_out](size_t,
                                                                       httplib::DataSink& sink) {
          StreamView sv;
          {
            std::unique_lock<std::mutex> lock(stream->mu);
            stream->cv.wait_until(lock, deadline, [&] {
              return stream->released > state->sent || stream->done;
            });
            sv = View(*stream);
          }
          std::string out;
          if (sv.released == state->sent && !sv.done) {
            // Timed out mid-stream: an error event, then the end.
            out = "data: " + ApiErrorJson(timed_out()) + "\n\ndata: [DONE]\n\n";
            state->finished = true;
            engine_->Abort(stream);
          } else {
            if (chat && state->sent == 0 && sv.released > 0) writer->Role(&out);
            for (int32_t i = state->sent; i < sv.released; ++i) {
              const bool last = sv.done && sv.error.empty() && i + 1 == sv.released;
              writer->Token(Word(sv.id, i), last ? FinishReason(sv) : nullptr, &out);
            }
            if (sv.done && sv.error.empty() && state->sent == sv.released &&
                sv.released > 0) {
              // The last token went out before the end was known: an empty
              // chunk carries finish_reason (vLLM sends one too).
              writer->Token("", FinishReason(sv), &out);
            }
            state->sent = sv.released;
            if (sv.done) {
              if (!sv.error.empty()) {
                out += "data: " + ApiErrorJson(Error(503, sv.error, "server_error")) + "\n\n";
              } else if (usage) {
                writer->UsageChunk(Usage(sv), &out);
              }
              out += "data: [DONE]\n\n";
              state->finished = true;
            }
          }
          if (!out.empty() && !sink.write(out.data(), out.size())) return false;
          if (state->finished) sink.done();
          return true;
        },
        // Not written in full: the client went away (a write failed), and
        // vLLM aborts the request then; the engine drops it (nothing if it
        // had ended).
        [this, stream](bool success) {
          if (!success) engine_->Abort(stream);
          --in_progress_;
        });
  };

  s.Post("/v1/completions", [completion](const httplib::Request& req, httplib::Response& res) {
    completion(req, res, false);
  });
  s.Post("/v1/chat/completions",
         [completion](const httplib::Request& req, httplib::Response& res) {
           completion(req, res, true);
         });
  s.Get("/v1/models", [this, model](const httplib::Request&, httplib::Response& res) {
    json m = {{"id", model}, {"object", "model"}, {"created", UnixNow()},
              {"owned_by", "servesim"}, {"root", model}};
    if (options_.max_model_len > 0) m["max_model_len"] = options_.max_model_len;
    json j = {{"object", "list"}, {"data", json::array({m})}};
    res.set_content(j.dump(), "application/json");
  });
  s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (closing_ || engine_->stopping()) {
      SendError(res, Error(503, "the server is shutting down", "server_error"));
      return;
    }
    res.status = 200;
  });
  s.Get("/metrics", [this, model](const httplib::Request&, httplib::Response& res) {
    res.set_content(RenderPrometheus(engine_->Snapshot(options_.replica), model),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  // A known path with the wrong method: 405, naming the one it takes.
  auto wrong_method = [](const char* allowed) {
    return [allowed](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allowed);
      SendError(res, Error(405, "Method Not Allowed: " + req.method + " " + req.path +
                                    " (expected " + allowed + ")"));
    };
  };
  for (const char* path : {"/v1/completions", "/v1/chat/completions"}) {
    s.Get(path, wrong_method("POST"));
    s.Put(path, wrong_method("POST"));
    s.Patch(path, wrong_method("POST"));
    s.Delete(path, wrong_method("POST"));
  }
  for (const char* path : {"/v1/models", "/health", "/metrics"}) {
    s.Post(path, wrong_method("GET"));
    s.Put(path, wrong_method("GET"));
    s.Patch(path, wrong_method("GET"));
    s.Delete(path, wrong_method("GET"));
  }
  // Every other error (unknown route, a body too large): OpenAI's JSON.
  s.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string what = "HTTP error " + std::to_string(res.status);
    if (res.status == 404) what = "Not Found: " + req.method + " " + req.path;
    if (res.status == 413) what = "the request body is too large (at most 64 MiB)";
    if (res.status == 400) what = "Bad Request: malformed HTTP request";
    res.set_content(ApiErrorJson(Error(res.status, what)), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res,
                             std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what += std::string(": ") + e.what();
    } catch (...) {
    }
    SendError(res, Error(500, what, "server_error"));
  });
}

}  // namespace servesim
