// The model API clients; see model_client.h.
#include "agents/model_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "language/json_text.h"

namespace backendbench::agents {
namespace {

using Json = nlohmann::json;

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string trimmed_right(std::string text) {
  while (!text.empty() && (text.back() == '/' || std::isspace(static_cast<unsigned char>(text.back())))) text.pop_back();
  return text;
}

// Each occurrence of `secret` in `text` replaced: a server may echo part of a request.
std::string redacted(std::string text, const std::string& secret) {
  if (secret.size() < 4) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) text.replace(at, secret.size(), "<redacted>");
  return text;
}

std::string shortened(const std::string& text, size_t limit = 300) {
  return text.size() <= limit ? text : text.substr(0, limit) + "...";
}

// The server's own words for an error body: "<type>: <message>", or the body's start.
struct ServerError {
  std::string type, code, message;
  std::string text() const {
    std::string out = type;
    if (!code.empty() && code != type) out += (out.empty() ? "" : "/") + code;
    if (!message.empty()) out += (out.empty() ? "" : ": ") + message;
    return out;
  }
};
ServerError server_error(const std::string& body) {
  ServerError error;
  const Json parsed = Json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error")) {
    const Json& e = parsed["error"];
    if (e.is_object()) {
      if (e.contains("type") && e["type"].is_string()) error.type = e["type"];
      if (e.contains("code") && e["code"].is_string()) error.code = e["code"];
      if (e.contains("message") && e["message"].is_string()) error.message = e["message"];
      if (e.contains("details") && e["details"].is_object() && e["details"].contains("error_code") &&
          e["details"]["error_code"].is_string()) {
        error.code = e["details"]["error_code"];
      }
    } else if (e.is_string()) {
      error.message = e;
    }
  }
  if (error.type.empty() && error.message.empty()) error.message = shortened(body);
  return error;
}

bool is_spend_limit(const ServerError& error) {
  const std::string all = lowercase(error.type + " " + error.code + " " + error.message);
  for (const char* marker : {"spend_limit", "spend limit", "insufficient_quota", "billing", "credit balance", "exceeded your current quota"}) {
    if (all.find(marker) != std::string::npos) return true;
  }
  return false;
}

// Seconds from retry-after-ms or retry-after (seconds; an HTTP date is not read); nullopt: none.
std::optional<double> retry_after(const std::map<std::string, std::string>& headers) {
  auto number = [](const std::string& text) -> std::optional<double> {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(value) || value < 0) return std::nullopt;
    return value;
  };
  if (auto it = headers.find("retry-after-ms"); it != headers.end()) {
    if (auto ms = number(it->second)) return *ms / 1000;
  }
  if (auto it = headers.find("retry-after"); it != headers.end()) return number(it->second);
  return std::nullopt;
}

class HttpModelClient : public ModelClient {
 public:
  HttpModelClient(ModelSettings settings, std::string key, HttpTransport transport, std::function<void(double)> sleep)
      : settings_(std::move(settings)), key_(std::move(key)), transport_(std::move(transport)), sleep_(std::move(sleep)) {
    if (!sleep_) sleep_ = [](double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); };
  }

  std::string describe() const override {
    return std::string(model_api_name(settings_.api)) + " " + settings_.model + " at " + url();
  }

  ModelAnswer ask(const ModelRequest& request) override {
    const auto start = std::chrono::steady_clock::now();
    HttpRequest http{url(), request_body(settings_, request), headers(), settings_.timeout_seconds};
    double backoff = settings_.backoff_seconds;
    for (int attempt = 1;; ++attempt) {
      std::optional<ModelError> failure;
      std::optional<double> wait;
      try {
        const HttpResponse response = transport_(http);
        if (response.status == 200) {
          ModelAnswer answer = parse_answer(settings_.api, response.body);
          answer.attempts = attempt;
          answer.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          answer.response_body = redacted(response.body, key_);
          return answer;
        }
        failure = error_of(response);
        wait = retry_after(response.headers);
      } catch (const ModelError& error) {
        failure = ModelError(error.kind(), error.http_status(), redacted(error.what(), key_));
      }
      if (!failure->transient() || attempt >= settings_.max_attempts) {
        if (!failure->transient()) throw *failure;
        throw ModelError(failure->kind(), failure->http_status(),
                         std::string(failure->what()) + " (gave up after " + std::to_string(attempt) + " attempts; --llm-retries sets how many)");
      }
      double seconds = wait.value_or(backoff * (0.5 + 0.5 * jitter()));
      seconds = std::min(seconds, settings_.max_retry_wait_seconds);
      backoff *= 2;
      sleep_(seconds);
    }
  }

 private:
  std::string url() const {
    return trimmed_right(settings_.base_url) + (settings_.api == ModelApi::kAnthropic ? "/v1/messages" : "/chat/completions");
  }

  std::map<std::string, std::string> headers() const {
    std::map<std::string, std::string> out = {{"content-type", "application/json"}};
    if (settings_.api == ModelApi::kAnthropic) {
      out["anthropic-version"] = "2023-06-01";
      if (!key_.empty()) out["x-api-key"] = key_;
    } else if (!key_.empty()) {
      out["authorization"] = "Bearer " + key_;
    }
    return out;
  }

  double jitter() {
    std::lock_guard<std::mutex> lock(random_mutex_);
    return std::uniform_real_distribution<double>(0, 1)(random_);
  }

  ModelError error_of(const HttpResponse& response) const {
    const ServerError server = server_error(redacted(response.body, key_));
    const std::string said = "HTTP " + std::to_string(response.status) + (server.text().empty() ? "" : ": " + server.text());
    const std::string where = std::string(model_api_name(settings_.api)) + " " + url();
    using K = ModelError::Kind;
    const int status = response.status;
    if (status == 401 || status == 403) {
      return {K::kAuthentication, status,
              where + ": error: authentication failed (" + said + "), not retried; expected a valid key in " +
                  api_key_variable(settings_.api)};
    }
    if (is_spend_limit(server) || status == 402) {
      return {K::kSpendLimit, status,
              where + ": error: the account's spend limit or quota is reached (" + said +
                  "), not retried; expected credit on the account, or a higher limit"};
    }
    if (status == 429) {
      return {K::kRateLimited, status, where + ": error: rate limited (" + said + "); expected an answer after waiting"};
    }
    if (status == 529 || status >= 500) {
      return {K::kServer, status, where + ": error: the server failed (" + said + "); expected an answer after retrying"};
    }
    return {K::kBadRequest, status,
            where + ": error: the request was refused (" + said + "), not retried; expected a model name the server knows (--model) and a valid base URL"};
  }

  ModelSettings settings_;
  std::string key_;
  HttpTransport transport_;
  std::function<void(double)> sleep_;
  std::mutex random_mutex_;
  std::mt19937_64 random_{std::random_device{}()};
};

size_t append_body(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

size_t append_header(char* data, size_t size, size_t count, void* out) {
  const std::string line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string value = line.substr(colon + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(0, 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[lowercase(line.substr(0, colon))] = value;
  }
  return size * count;
}

}  // namespace

const char* model_api_name(ModelApi api) { return api == ModelApi::kAnthropic ? "anthropic" : "openai"; }

const char* api_key_variable(ModelApi api) { return api == ModelApi::kAnthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"; }

std::string default_base_url(ModelApi api, const std::function<const char*(const char*)>& getenv) {
  const char* variable = api == ModelApi::kAnthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";
  if (const char* value = getenv(variable); value != nullptr && *value != '\0') return value;
  return api == ModelApi::kAnthropic ? "https://api.anthropic.com" : "https://api.openai.com/v1";
}

bool ModelError::transient() const {
  return kind_ == Kind::kRateLimited || kind_ == Kind::kServer || kind_ == Kind::kTimeout || kind_ == Kind::kConnection;
}

std::string request_body(const ModelSettings& settings, const ModelRequest& request) {
  Json body = {{"model", settings.model}, {"max_tokens", settings.max_tokens}, {"temperature", settings.temperature}};
  if (settings.api == ModelApi::kAnthropic) {
    body["system"] = request.system;
    body["messages"] = Json::array({{{"role", "user"}, {"content", request.prompt}}});
  } else {
    body["messages"] = Json::array({{{"role", "system"}, {"content", request.system}}, {{"role", "user"}, {"content", request.prompt}}});
  }
  return json_text::dump(body);
}

ModelAnswer parse_answer(ModelApi api, const std::string& body) {
  const Json parsed = Json::parse(body, nullptr, false);
  auto malformed = [&](const std::string& what) {
    return ModelError(ModelError::Kind::kMalformed, 200,
                      std::string(model_api_name(api)) + " answer: error: " + what + "; expected " +
                          (api == ModelApi::kAnthropic ? "a Messages API response ({\"content\": [{\"type\": \"text\", \"text\": ...}], \"usage\": ...})"
                                                       : "a chat-completions response ({\"choices\": [{\"message\": {\"content\": ...}}], \"usage\": ...})") +
                          " (the body began: " + shortened(body, 120) + ")");
  };
  if (parsed.is_discarded()) throw malformed("the body is not JSON");
  if (!parsed.is_object()) throw malformed("the body is not a JSON object");
  ModelAnswer answer;
  try {
    if (api == ModelApi::kAnthropic) {
      if (!parsed.contains("content") || !parsed["content"].is_array()) throw malformed("no \"content\" list");
      for (const Json& block : parsed["content"]) {
        if (block.value("type", "") == "text" && block.contains("text") && block["text"].is_string()) answer.text += block["text"].get<std::string>();
      }
      answer.stop_reason = parsed.contains("stop_reason") && parsed["stop_reason"].is_string() ? parsed["stop_reason"].get<std::string>() : "";
      if (parsed.contains("usage") && parsed["usage"].is_object()) {
        answer.input_tokens = parsed["usage"].value("input_tokens", int64_t{0});
        answer.output_tokens = parsed["usage"].value("output_tokens", int64_t{0});
      }
    } else {
      if (!parsed.contains("choices") || !parsed["choices"].is_array() || parsed["choices"].empty()) throw malformed("no \"choices\"");
      const Json& choice = parsed["choices"][0];
      if (!choice.contains("message") || !choice["message"].is_object()) throw malformed("no \"message\" in the first choice");
      const Json& content = choice["message"].contains("content") ? choice["message"]["content"] : Json();
      if (content.is_string()) answer.text = content.get<std::string>();
      answer.stop_reason = choice.contains("finish_reason") && choice["finish_reason"].is_string() ? choice["finish_reason"].get<std::string>() : "";
      if (parsed.contains("usage") && parsed["usage"].is_object()) {
        answer.input_tokens = parsed["usage"].value("prompt_tokens", int64_t{0});
        answer.output_tokens = parsed["usage"].value("completion_tokens", int64_t{0});
      }
    }
  } catch (const Json::exception& error) {
    throw malformed(std::string("a field has the wrong type (") + error.what() + ")");
  }
  return answer;
}

HttpTransport curl_transport() {
  static std::once_flag initialised;
  std::call_once(initialised, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  return [](const HttpRequest& request) {
    std::unique_ptr<CURL, void (*)(CURL*)> handle(curl_easy_init(), curl_easy_cleanup);
    if (!handle) throw ModelError(ModelError::Kind::kConnection, 0, "cannot start an HTTP request (curl_easy_init failed)");
    curl_slist* header_list = nullptr;
    for (const auto& [name, value] : request.headers) header_list = curl_slist_append(header_list, (name + ": " + value).c_str());
    std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(header_list, curl_slist_free_all);
    HttpResponse response;
    CURL* curl = handle.get();
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, append_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_seconds * 1000));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(request.timeout_seconds, 30.0) * 1000));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for timeouts
    const CURLcode code = curl_easy_perform(curl);
    // The URL is the base URL the user set plus the API's path: it holds no key.
    if (code == CURLE_OPERATION_TIMEDOUT) {
      throw ModelError(ModelError::Kind::kTimeout, 0,
                       request.url + ": error: no answer within " + std::to_string(static_cast<int>(std::lround(request.timeout_seconds))) +
                           " s; expected an answer within --llm-timeout");
    }
    if (code != CURLE_OK) {
      throw ModelError(ModelError::Kind::kConnection, 0,
                       request.url + ": error: " + curl_easy_strerror(code) + "; expected a server at the base URL (ANTHROPIC_BASE_URL, OPENAI_BASE_URL)");
    }
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
    return response;
  };
}

std::unique_ptr<ModelClient> make_http_client(const ModelSettings& settings, std::string api_key, HttpTransport transport,
                                              std::function<void(double)> sleep) {
  return std::make_unique<HttpModelClient>(settings, std::move(api_key), std::move(transport), std::move(sleep));
}

}  // namespace backendbench::agents
