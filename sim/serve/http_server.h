// The HTTP side of `servesim serve`: an OpenAI-compatible API over
// cpp-httplib (the Debian package libcpp-httplib-dev; a thread pool, one
// thread per open connection), in front of an OnlineEngine.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/core/status.h"
#include "sim/serve/online_engine.h"

namespace httplib {
class Server;
}

namespace servesim {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8000;            // 0: any free port (Port() says which)
  int threads = 512;          // HTTP worker threads: connections served at once
  double request_timeout_s = 600;  // wall seconds a request may take
  std::string model_name;     // what /v1/models lists and requests may name
  int32_t max_model_len = 0;  // /v1/models; 0: not listed
  int32_t block_size = 16;    // the engine's, for prompt block hashes
  // -1: requests go to the scenario's router and /metrics shows the fleet;
  // else this server is replica k's own (serve --replica-ports): its
  // requests go to k and /metrics shows k's (the engine keeps them).
  int32_t replica = -1;
};

class HttpServer {
 public:
  HttpServer(OnlineEngine* engine, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the socket; an error names the address.
  Status Bind();
  int Port() const { return port_; }
  // Serves until Stop (blocks).
  void Run();
  // Refuses new requests, waits up to wait_s for responses in progress to
  // be written, then closes the listener. From any thread.
  void Stop(double wait_s);
  // Responses begun and not yet written in full.
  int64_t in_progress() const { return in_progress_.load(); }

 private:
  void Routes();
  OnlineEngine* engine_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::atomic<int64_t> in_progress_{0};
  std::atomic<bool> closing_{false};
};

}  // namespace servesim
