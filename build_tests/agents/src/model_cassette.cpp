// Recording and replaying model exchanges; see model_cassette.h.
#include "agents/model_cassette.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backendbench/files.h"
#include "language/json_text.h"

namespace backendbench::agents {
namespace {

using Json = nlohmann::json;

constexpr const char* kSchema = "backendbench-model-exchange";

const char* kind_name(ModelError::Kind kind) {
  using K = ModelError::Kind;
  switch (kind) {
    case K::kAuthentication: return "authentication";
    case K::kSpendLimit: return "spend_limit";
    case K::kBadRequest: return "bad_request";
    case K::kRateLimited: return "rate_limited";
    case K::kServer: return "server";
    case K::kTimeout: return "timeout";
    case K::kConnection: return "connection";
    case K::kMalformed: return "malformed";
    case K::kNotRecorded: return "not_recorded";
  }
  return "bad_request";
}

ModelError::Kind kind_named(const std::string& name) {
  using K = ModelError::Kind;
  for (K kind : {K::kAuthentication, K::kSpendLimit, K::kBadRequest, K::kRateLimited, K::kServer, K::kTimeout,
                 K::kConnection, K::kMalformed, K::kNotRecorded}) {
    if (name == kind_name(kind)) return kind;
  }
  return K::kBadRequest;
}

Json request_json(const ModelRequest& request, const std::string& described) {
  return {{"key", request.key}, {"client", described}, {"system", request.system}, {"prompt", request.prompt}};
}

class RecordingClient : public ModelClient {
 public:
  RecordingClient(std::unique_ptr<ModelClient> live, std::string directory)
      : live_(std::move(live)), directory_(std::move(directory)) {}

  std::string describe() const override { return live_->describe() + ", recorded to " + directory_; }

  ModelAnswer ask(const ModelRequest& request) override {
    Json exchange = {{"schema", kSchema}, {"version", 1}, {"request", request_json(request, live_->describe())}};
    try {
      ModelAnswer answer = live_->ask(request);
      exchange["answer"] = {{"text", answer.text},
                            {"input_tokens", answer.input_tokens},
                            {"output_tokens", answer.output_tokens},
                            {"stop_reason", answer.stop_reason},
                            {"attempts", answer.attempts},
                            {"seconds", answer.seconds},
                            {"response_body", answer.response_body}};
      save(request.key, exchange);
      return answer;
    } catch (const ModelError& error) {
      exchange["error"] = {{"kind", kind_name(error.kind())}, {"http_status", error.http_status()}, {"message", error.what()}};
      save(request.key, exchange);
      throw;
    }
  }

 private:
  void save(const std::string& key, const Json& exchange) const {
    const std::string path = cassette_file(directory_, key);
    files::make_directories(path.substr(0, path.find_last_of('/')));
    files::write_whole(path, json_text::dump(exchange, 1) + "\n");
  }

  std::unique_ptr<ModelClient> live_;
  std::string directory_;
};

class ReplayClient : public ModelClient {
 public:
  explicit ReplayClient(std::string directory) : directory_(std::move(directory)) {}

  std::string describe() const override { return "replay of " + directory_; }

  ModelAnswer ask(const ModelRequest& request) override {
    const std::string path = cassette_file(directory_, request.key);
    std::ifstream in(path);
    if (!in) {
      throw ModelError(ModelError::Kind::kNotRecorded, 0,
                       path + ": error: no recorded answer for " + request.key +
                           "; expected a cassette recorded by --record with the same suites, operators, --rounds and --workers");
    }
    std::stringstream text;
    text << in.rdbuf();
    const Json exchange = Json::parse(text.str(), nullptr, false);
    if (!exchange.is_object() || exchange.value("schema", "") != kSchema) {
      throw ModelError(ModelError::Kind::kMalformed, 0, path + ": error: not a recorded exchange; expected a file written by --record");
    }
    if (exchange.contains("error")) {
      const Json& error = exchange["error"];
      throw ModelError(kind_named(error.value("kind", "")), error.value("http_status", 0), error.value("message", std::string()));
    }
    const Json& recorded = exchange["answer"];
    ModelAnswer answer;
    answer.text = recorded.value("text", "");
    answer.input_tokens = recorded.value("input_tokens", int64_t{0});
    answer.output_tokens = recorded.value("output_tokens", int64_t{0});
    answer.stop_reason = recorded.value("stop_reason", "");
    answer.attempts = recorded.value("attempts", 1);
    answer.seconds = 0;  // nothing was waited for
    answer.response_body = recorded.value("response_body", "");
    return answer;
  }

 private:
  std::string directory_;
};

}  // namespace

std::string cassette_file(const std::string& directory, const std::string& key) { return directory + "/" + key + ".json"; }

std::unique_ptr<ModelClient> make_recording_client(std::unique_ptr<ModelClient> live, std::string directory) {
  return std::make_unique<RecordingClient>(std::move(live), std::move(directory));
}

std::unique_ptr<ModelClient> make_replay_client(std::string directory) { return std::make_unique<ReplayClient>(std::move(directory)); }

}  // namespace backendbench::agents
