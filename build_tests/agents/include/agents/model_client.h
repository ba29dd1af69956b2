// Clients of the model APIs the llm backends talk to: the Anthropic Messages API and the
// OpenAI-compatible chat-completions API (OpenAI itself, relays, local servers). One request
// shape in (a system text and a user prompt), one answer out (the text and the token counts).
//
// Endpoints and keys are read the way the official SDKs read them: ANTHROPIC_BASE_URL /
// OPENAI_BASE_URL, ANTHROPIC_API_KEY / OPENAI_API_KEY, from the environment only. A key is put
// into the request's header and nowhere else: no error, log, cassette or result holds it.
//
// Retries are bounded: rate limits (429), overload (529) and server errors (5xx), timeouts and
// refused connections are tried again up to `max_attempts` times, waiting what `retry-after`
// says (capped) or an exponential backoff. Authentication (401, 403), bad requests (400, 404,
// 422) and spend limits (a 429 whose body says the spend limit or quota is reached) are never
// retried. Each failure is one ModelError saying what happened and what to do.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace backendbench::agents {

enum class ModelApi { kAnthropic, kOpenAi };
const char* model_api_name(ModelApi api);  // "anthropic", "openai"

struct ModelSettings {
  ModelApi api = ModelApi::kAnthropic;
  std::string base_url;  // without the API's path: https://api.anthropic.com, https://api.openai.com/v1
  std::string model;
  double temperature = 0.2;
  int max_tokens = 8000;
  double timeout_seconds = 120;  // one request, connection to last byte
  int max_attempts = 4;          // requests per question, first one included
  double max_retry_wait_seconds = 60;
  double backoff_seconds = 1;  // first wait without retry-after; doubled each time
};

// The SDKs' defaults, then the environment: ANTHROPIC_BASE_URL or OPENAI_BASE_URL.
std::string default_base_url(ModelApi api, const std::function<const char*(const char*)>& getenv);
// ANTHROPIC_API_KEY or OPENAI_API_KEY.
const char* api_key_variable(ModelApi api);

struct ModelRequest {
  std::string key;  // the question's place in its run (relu__default/w1_r2): cassettes file it under this
  std::string system, prompt;
};

struct ModelAnswer {
  std::string text;
  int64_t input_tokens = 0, output_tokens = 0;
  std::string stop_reason;  // end_turn / stop, max_tokens / length, ...
  int attempts = 1;         // requests made, retries included
  double seconds = 0;       // wall time, waits included
  std::string response_body;  // the last response as the server sent it (holds no key)
};

class ModelError : public std::runtime_error {
 public:
  // kNotRecorded: a replay asked a question its cassette does not hold.
  enum class Kind { kAuthentication, kSpendLimit, kBadRequest, kRateLimited, kServer, kTimeout, kConnection, kMalformed, kNotRecorded };
  ModelError(Kind kind, int http_status, const std::string& message)
      : std::runtime_error(message), kind_(kind), http_status_(http_status) {}
  Kind kind() const { return kind_; }
  int http_status() const { return http_status_; }  // 0 when there was no response
  // Whether asking again later could succeed (rate limits, overload, 5xx, timeouts).
  bool transient() const;
  // A spend limit, an authentication failure, a replay off its recording: nothing more should be asked.
  bool stops_the_run() const { return kind_ == Kind::kAuthentication || kind_ == Kind::kSpendLimit || kind_ == Kind::kNotRecorded; }

 private:
  Kind kind_;
  int http_status_;
};

// One HTTP exchange, as the clients need it; libcurl's is the real one, tests may give another.
struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lowercased
};
struct HttpRequest {
  std::string url, body;
  std::map<std::string, std::string> headers;
  double timeout_seconds = 120;
};
// Throws ModelError (kTimeout, kConnection) when no response came.
using HttpTransport = std::function<HttpResponse(const HttpRequest&)>;
HttpTransport curl_transport();

class ModelClient {
 public:
  virtual ~ModelClient() = default;
  // Throws ModelError once retries are spent or the failure is not one to retry.
  virtual ModelAnswer ask(const ModelRequest& request) = 0;
  virtual std::string describe() const = 0;  // "anthropic claude-sonnet-4-20250514 at https://..."
};

// A client of `settings.api` with `api_key`. `sleep` waits between attempts (tests pass one
// that records); `transport` defaults to libcurl.
std::unique_ptr<ModelClient> make_http_client(const ModelSettings& settings, std::string api_key,
                                              HttpTransport transport = curl_transport(),
                                              std::function<void(double seconds)> sleep = nullptr);

// The request body the client sends (no key: keys go in headers), for cassettes and tests.
std::string request_body(const ModelSettings& settings, const ModelRequest& request);
// Reads an answer from a 200 response's body; throws ModelError (kMalformed) naming what is missing.
ModelAnswer parse_answer(ModelApi api, const std::string& body);

}  // namespace backendbench::agents
