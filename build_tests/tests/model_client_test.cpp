// Tests of the model API clients and their cassettes (build_tests/frontends/cli: model_client.h,
// model_cassette.h) against a real HTTP server on loopback (model_server.py) that speaks both
// APIs and answers from a script: success in each API's shape, 429 with retry-after, 401, a
// spend limit, 500, malformed JSON, an answer slower than the timeout.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "backendbench/files.h"
#include "agents/model_cassette.h"
#include "agents/model_client.h"

extern char** environ;

namespace backendbench::agents {
namespace {

using Json = nlohmann::json;

constexpr const char* kKey = "sk-test-0123456789abcdef";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// model_server.py with a script, on a free loopback port, stopped when this goes.
class ScriptedServer {
 public:
  explicit ScriptedServer(const Json& script) {
    folder_ = files::temporary_directory() + "/backendbench_model_server_" + std::to_string(getpid()) + "_" + std::to_string(next_id_++);
    files::remove_tree(folder_);
    files::make_directories(folder_);
    std::ofstream(folder_ + "/script.json") << script.dump();
    const std::vector<std::string> argv = {BACKENDBENCH_TEST_PYTHON, BACKENDBENCH_TEST_SOURCE_DIR "/build_tests/tests/model_server.py",
                                           "--script", folder_ + "/script.json", "--port-file", folder_ + "/port",
                                           "--log", folder_ + "/requests.jsonl"};
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ) != 0) throw std::runtime_error("cannot start model_server.py");
    for (int i = 0; i < 200 && read_file(folder_ + "/port").empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    port_ = read_file(folder_ + "/port");
    if (port_.empty()) throw std::runtime_error("model_server.py did not start");
  }
  ~ScriptedServer() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    files::remove_tree(folder_);
  }
  std::string url(ModelApi api) const {
    return "http://127.0.0.1:" + port_ + (api == ModelApi::kOpenAi ? "/v1" : "");
  }
  std::vector<Json> requests() const {
    std::vector<Json> out;
    std::istringstream lines(read_file(folder_ + "/requests.jsonl"));
    for (std::string line; std::getline(lines, line);) out.push_back(Json::parse(line));
    return out;
  }
  const std::string& folder() const { return folder_; }

 private:
  static inline int next_id_ = 0;
  std::string folder_, port_;
  pid_t pid_ = 0;
};

struct Client {
  std::unique_ptr<ModelClient> client;
  std::vector<double> waits;  // what the client asked to sleep, not slept
};

std::unique_ptr<Client> client_of(const ScriptedServer& server, ModelApi api, int attempts = 3, double timeout = 5) {
  auto out = std::make_unique<Client>();
  ModelSettings settings;
  settings.api = api;
  settings.base_url = server.url(api);
  settings.model = "scripted-model";
  settings.max_attempts = attempts;
  settings.timeout_seconds = timeout;
  std::vector<double>* waits = &out->waits;
  out->client = make_http_client(settings, kKey, curl_transport(), [waits](double seconds) { waits->push_back(seconds); });
  return out;
}

// A script that answers every operator's questions with `list`, in order.
Json answers(std::initializer_list<Json> list) { return {{"*", Json(std::vector<Json>(list))}}; }

const ModelRequest kQuestion{"relu__default/w1_r1", "You write kernels.", "Operator: relu.default\nWrite it."};

ModelError error_of(ModelClient& client) {
  try {
    client.ask(kQuestion);
  } catch (const ModelError& error) {
    return error;
  }
  ADD_FAILURE() << "expected a ModelError";
  return ModelError(ModelError::Kind::kBadRequest, 0, "");
}

TEST(ModelClient, AnthropicRequestAndAnswerHaveTheMessagesApiShape) {
  ScriptedServer server(answers({{{"text", "```cpp\nint x;\n```"}}}));
  auto c = client_of(server, ModelApi::kAnthropic);
  const ModelAnswer answer = c->client->ask(kQuestion);
  EXPECT_EQ(answer.text, "```cpp\nint x;\n```");
  EXPECT_GT(answer.input_tokens, 0);
  EXPECT_GT(answer.output_tokens, 0);
  EXPECT_EQ(answer.stop_reason, "end_turn");
  EXPECT_EQ(answer.attempts, 1);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["path"], "/v1/messages");
  EXPECT_EQ(requests[0]["anthropic_version"], "2023-06-01");
  EXPECT_EQ(requests[0]["key_length"], std::string(kKey).size());
  const Json& body = requests[0]["body"];
  EXPECT_EQ(body["model"], "scripted-model");
  EXPECT_EQ(body["system"], "You write kernels.");
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["messages"][0]["content"], kQuestion.prompt);
  EXPECT_EQ(body["max_tokens"], 8000);
  EXPECT_EQ(answer.response_body.find(kKey), std::string::npos);
}

TEST(ModelClient, OpenAiRequestAndAnswerHaveTheChatCompletionsShape) {
  ScriptedServer server(answers({{{"text", "hello"}}}));
  auto c = client_of(server, ModelApi::kOpenAi);
  const ModelAnswer answer = c->client->ask(kQuestion);
  EXPECT_EQ(answer.text, "hello");
  EXPECT_EQ(answer.stop_reason, "stop");
  EXPECT_GT(answer.output_tokens, 0);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["path"], "/v1/chat/completions");
  EXPECT_TRUE(requests[0]["anthropic_version"].is_null());
  EXPECT_EQ(requests[0]["key_length"], std::string(kKey).size());
  const Json& messages = requests[0]["body"]["messages"];
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0]["role"], "system");
  EXPECT_EQ(messages[1]["content"], kQuestion.prompt);
}

TEST(ModelClient, RateLimitIsRetriedAfterWhatRetryAfterSays) {
  ScriptedServer server(answers({{{"status", 429}, {"error_type", "rate_limit_error"}, {"headers", {{"retry-after", "7"}}}},
                                {{"text", "done"}}}));
  auto c = client_of(server, ModelApi::kAnthropic);
  const ModelAnswer answer = c->client->ask(kQuestion);
  EXPECT_EQ(answer.text, "done");
  EXPECT_EQ(answer.attempts, 2);
  EXPECT_EQ(c->waits, std::vector<double>{7.0});
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(ModelClient, AuthenticationFailureIsNotRetriedAndNamesTheVariable) {
  ScriptedServer server(answers({{{"status", 401}, {"error_type", "authentication_error"},
                                 {"message", std::string("invalid x-api-key ") + kKey}}}));
  auto c = client_of(server, ModelApi::kAnthropic);
  const ModelError error = error_of(*c->client);
  EXPECT_EQ(error.kind(), ModelError::Kind::kAuthentication);
  EXPECT_EQ(error.http_status(), 401);
  EXPECT_TRUE(error.stops_the_run());
  const std::string message = error.what();
  EXPECT_NE(message.find("ANTHROPIC_API_KEY"), std::string::npos) << message;
  EXPECT_EQ(message.find(kKey), std::string::npos) << "the key leaked into: " << message;
  EXPECT_NE(message.find("<redacted>"), std::string::npos) << message;
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(c->waits.empty());
}

TEST(ModelClient, SpendLimitIsNotRetried) {
  ScriptedServer server(answers({{{"status", 429}, {"error_type", "rate_limit_error"},
                                 {"error_code", "enforced_spend_limit_reached"}, {"headers", {{"retry-after", "1"}}}}}));
  auto c = client_of(server, ModelApi::kAnthropic);
  const ModelError error = error_of(*c->client);
  EXPECT_EQ(error.kind(), ModelError::Kind::kSpendLimit);
  EXPECT_TRUE(error.stops_the_run());
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(ModelClient, OpenAiQuotaIsASpendLimit) {
  ScriptedServer server(answers({{{"status", 429}, {"error_type", "insufficient_quota"}, {"error_code", "insufficient_quota"},
                                 {"message", "You exceeded your current quota"}}}));
  auto c = client_of(server, ModelApi::kOpenAi);
  EXPECT_EQ(error_of(*c->client).kind(), ModelError::Kind::kSpendLimit);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(ModelClient, ServerErrorsAreRetriedAFixedNumberOfTimes) {
  ScriptedServer server(answers({{{"status", 500}, {"message", "boom"}}}));
  auto c = client_of(server, ModelApi::kOpenAi, /*attempts=*/3);
  const ModelError error = error_of(*c->client);
  EXPECT_EQ(error.kind(), ModelError::Kind::kServer);
  EXPECT_NE(std::string(error.what()).find("gave up after 3 attempts"), std::string::npos) << error.what();
  EXPECT_EQ(server.requests().size(), 3u);
  ASSERT_EQ(c->waits.size(), 2u);
  EXPECT_LT(c->waits[0], c->waits[1]);  // backoff grows
}

TEST(ModelClient, MalformedJsonIsOneClearError) {
  ScriptedServer server(answers({{{"raw", "{\"content\": [oops"}}}));
  auto c = client_of(server, ModelApi::kAnthropic);
  const ModelError error = error_of(*c->client);
  EXPECT_EQ(error.kind(), ModelError::Kind::kMalformed);
  EXPECT_NE(std::string(error.what()).find("not JSON"), std::string::npos) << error.what();
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(ModelClient, AnswerWithoutChoicesIsMalformed) {
  ScriptedServer server(answers({{{"raw", "{\"id\": \"x\"}"}}}));
  auto c = client_of(server, ModelApi::kOpenAi);
  const ModelError error = error_of(*c->client);
  EXPECT_EQ(error.kind(), ModelError::Kind::kMalformed);
  EXPECT_NE(std::string(error.what()).find("no \"choices\""), std::string::npos) << error.what();
}

TEST(ModelClient, SlowAnswerPastTheTimeoutFails) {
  ScriptedServer server(answers({{{"delay", 3}, {"text", "late"}}}));
  auto c = client_of(server, ModelApi::kAnthropic, /*attempts=*/2, /*timeout=*/0.5);
  const auto start = std::chrono::steady_clock::now();
  const ModelError error = error_of(*c->client);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.5);
  EXPECT_EQ(error.kind(), ModelError::Kind::kTimeout);
  EXPECT_NE(std::string(error.what()).find("gave up after 2 attempts"), std::string::npos) << error.what();
}

TEST(ModelClient, RefusedConnectionIsAConnectionError) {
  ModelSettings settings;
  settings.base_url = "http://127.0.0.1:1";
  settings.max_attempts = 1;
  auto client = make_http_client(settings, kKey);
  EXPECT_EQ(error_of(*client).kind(), ModelError::Kind::kConnection);
}

TEST(ModelClient, BaseUrlsAreReadAsTheSdksReadThem) {
  auto none = [](const char*) -> const char* { return nullptr; };
  EXPECT_EQ(default_base_url(ModelApi::kAnthropic, none), "https://api.anthropic.com");
  EXPECT_EQ(default_base_url(ModelApi::kOpenAi, none), "https://api.openai.com/v1");
  auto set = [](const char* name) -> const char* {
    return std::string(name) == "OPENAI_BASE_URL" ? "http://127.0.0.1:8000/v1" : nullptr;
  };
  EXPECT_EQ(default_base_url(ModelApi::kOpenAi, set), "http://127.0.0.1:8000/v1");
  EXPECT_EQ(default_base_url(ModelApi::kAnthropic, set), "https://api.anthropic.com");
}

TEST(ModelCassette, ARecordedRunReplaysWithoutTheServer) {
  const std::string cassette = files::temporary_directory() + "/backendbench_cassette_" + std::to_string(getpid());
  files::remove_tree(cassette);
  {
    ScriptedServer server(answers({{{"text", "first"}}, {{"status", 401}, {"error_type", "authentication_error"}}}));
    auto c = client_of(server, ModelApi::kAnthropic);
    auto recording = make_recording_client(std::move(c->client), cassette);
    EXPECT_EQ(recording->ask(kQuestion).text, "first");
    ModelRequest second = kQuestion;
    second.key = "relu__default/w1_r2";
    EXPECT_THROW(recording->ask(second), ModelError);
  }
  const std::string recorded = read_file(cassette_file(cassette, kQuestion.key));
  EXPECT_NE(recorded.find("Write it."), std::string::npos);
  EXPECT_EQ(recorded.find(kKey), std::string::npos);
  auto replay = make_replay_client(cassette);
  EXPECT_EQ(replay->ask(kQuestion).text, "first");
  ModelRequest second = kQuestion;
  second.key = "relu__default/w1_r2";
  try {
    replay->ask(second);
    ADD_FAILURE() << "the recorded error was not replayed";
  } catch (const ModelError& error) {
    EXPECT_EQ(error.kind(), ModelError::Kind::kAuthentication);
  }
  ModelRequest unknown = kQuestion;
  unknown.key = "add__Tensor/w1_r1";
  try {
    replay->ask(unknown);
    ADD_FAILURE() << "an unrecorded question was answered";
  } catch (const ModelError& error) {
    EXPECT_NE(std::string(error.what()).find("add__Tensor/w1_r1.json: error: no recorded answer"), std::string::npos) << error.what();
    EXPECT_TRUE(error.stops_the_run());
  }
  files::remove_tree(cassette);
}

}  // namespace
}  // namespace backendbench::agents
