// The only file in dbform that includes curl: the network is one side effect behind a narrow seam
// (Transport), so every other file's tests run against a fake transport instead.
#include "http/curl_transport.h"

#include <curl/curl.h>
#include <arpa/inet.h>
#include <openssl/x509.h>  // the verify result codes libcurl reports (CURLINFO_SSL_VERIFYRESULT)

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>
#include <string>

#include "util/env.h"
#include "util/text.h"

namespace dbform {
namespace {

// curl_global_init is not thread-safe; a function-local static is initialised exactly once.
void ensure_curl_initialised() {
  static const CURLcode init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (init_result != CURLE_OK) {
    throw TransportError(std::string("libcurl could not be initialised: ") + curl_easy_strerror(init_result),
                         false);
  }
}

}  // namespace

// Not in the anonymous namespace: CurlTransport::Handles holds them.
struct EasyHandleDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using EasyHandle = std::unique_ptr<CURL, EasyHandleDeleter>;

// Easy handles kept between requests, so that each one's connection cache keeps connections to the
// API alive: a request takes an idle one (or a new one) and gives it back. Not thread_local: glibc
// aborts the process when it has no memory to register a thread's destructors, and running
// out of memory or threads fails calls by name, never aborts (docs/safety.md).
struct CurlTransport::Handles {
  std::mutex mu;
  std::vector<EasyHandle> idle;

  EasyHandle take() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        EasyHandle handle = std::move(idle.back());
        idle.pop_back();
        curl_easy_reset(handle.get());  // keeps its live connections
        return handle;
      }
    }
    EasyHandle handle(curl_easy_init());
    if (!handle) throw TransportError("libcurl could not create a request handle (out of memory?)", false);
    return handle;
  }
  void give_back(EasyHandle handle) {
    std::lock_guard<std::mutex> lock(mu);
    idle.push_back(std::move(handle));
  }
};

namespace {

struct HeaderListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using HeaderList = std::unique_ptr<curl_slist, HeaderListDeleter>;

HeaderList build_header_list(const HttpRequest& request) {
  curl_slist* list = nullptr;
  auto append = [&list](const std::string& line) {
    curl_slist* grown = curl_slist_append(list, line.c_str());
    if (!grown) {
      curl_slist_free_all(list);
      throw TransportError("libcurl could not allocate request headers", false);
    }
    list = grown;
  };
  for (const auto& [name, value] : request.headers) {
    // A line break in a value would send a header of its own: refused, the value never quoted (it
    // may be a key).
    if (has_control_character(name) || has_control_character(value))
      throw TransportError("refusing to send request header " + valid_utf8(name) + ": it holds a control character",
                           false);
    append(name + ": " + value);
  }
  // Without this curl may wait for a "100 Continue" the API never sends.
  append("Expect:");
  return HeaderList(list);
}

struct BodySink {
  std::string& body;
  size_t max_bytes;
  bool too_large = false;
};

size_t collect_body(char* data, size_t size, size_t count, void* user) {
  auto& sink = *static_cast<BodySink*>(user);
  if (sink.body.size() + size * count > sink.max_bytes) {
    sink.too_large = true;
    return 0;  // curl stops reading: CURLE_WRITE_ERROR
  }
  sink.body.append(data, size * count);
  return size * count;
}

// Called once per header line, including each status line. A new status line (after a redirect
// or an interim 1xx response) starts a fresh header set so only the final response's remain.
size_t collect_header(char* data, size_t size, size_t count, void* user) {
  auto& headers = *static_cast<std::map<std::string, std::string>*>(user);
  std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    headers.clear();
    return size * count;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  std::string name = lower(trim(line.substr(0, colon)));
  std::string value = trim(line.substr(colon + 1));
  auto [it, inserted] = headers.emplace(name, value);
  if (!inserted) it->second += ", " + value;  // repeated headers combine, as RFC 9110 allows
  return size * count;
}

// Errors after which the request certainly never reached a server: nothing can have been created,
// so even a create may be sent again.
bool may_have_reached_server(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return false;
    default:
      return true;
  }
}

// A body libcurl reads once and cannot rewind: the re-send of a request on a reused connection that
// closed before answering needs a rewind, so it fails (CURLE_SEND_FAIL_REWIND) instead of performing
// the request a second time.
struct OneShotBody {
  const std::string& text;
  size_t sent = 0;
};

size_t read_once(char* buffer, size_t size, size_t count, void* user) {
  auto& body = *static_cast<OneShotBody*>(user);
  const size_t n = std::min(size * count, body.text.size() - body.sent);
  std::memcpy(buffer, body.text.data() + body.sent, n);
  body.sent += n;
  return n;
}

int refuse_rewind(void*, curl_off_t, int) { return CURL_SEEKFUNC_CANTSEEK; }

// One part of a URL libcurl can parse ("" when it cannot).
std::string url_part(const std::string& url, CURLUPart which) {
  std::unique_ptr<CURLU, void (*)(CURLU*)> parsed(curl_url(), curl_url_cleanup);
  if (!parsed || curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "";
  char* value = nullptr;
  std::string out;
  if (curl_url_get(parsed.get(), which, &value, 0) == CURLUE_OK && value) out = value;
  curl_free(value);
  return out;
}

// Why the server's certificate was refused, in words that say which check failed, or "" when
// `code` is not a certificate failure. Such a failure ends the TLS handshake, before a byte of the
// request is written, and trying again would fail the same way.
std::string certificate_problem(CURL* curl, CURLcode code, const std::string& url, const std::string& ca_file,
                                const std::string& ca_dir) {
  const std::string dir = "the certificates in " + ca_dir + " (SSL_CERT_DIR)";
  const std::string trusted =
      ca_file.empty() ? (ca_dir.empty() ? "the system's CA certificates (SSL_CERT_FILE names another bundle)"
                                        : "the system's CA bundle and " + dir)
                      : "the CA bundle " + ca_file + " (SSL_CERT_FILE)" + (ca_dir.empty() ? "" : " and " + dir);
  if (code == CURLE_SSL_CACERT_BADFILE)
    return (ca_file.empty() ? "the system's CA bundle" : "the CA bundle " + ca_file + " (SSL_CERT_FILE)") +
           " cannot be read as PEM certificates";
  if (code != CURLE_PEER_FAILED_VERIFICATION) return "";
  long verify = X509_V_OK;
  curl_easy_getinfo(curl, CURLINFO_SSL_VERIFYRESULT, &verify);
  switch (verify) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the certificate has expired";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the certificate is not valid yet (is this machine's clock right?)";
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
      return "unknown issuer: the certificate is self-signed and not among " + trusted;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return "unknown issuer: the certificate's issuer is not among " + trusted;
    case X509_V_ERR_CERT_REVOKED:
      return "the certificate has been revoked";
    // libcurl checks the name itself before it reads the chain's verdict, which it reports as
    // X509_V_ERR_UNSPECIFIED until then: its only certificate failure in that state is the name.
    case X509_V_OK:
    case X509_V_ERR_UNSPECIFIED:
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "wrong host: the certificate is not for " + valid_utf8(url_part(url, CURLUPART_HOST));
    default:
      return std::string("the certificate failed verification (") + X509_verify_cert_error_string(verify) + ")";
  }
}

void set_method_and_body(CURL* curl, const HttpRequest& request, OneShotBody& once) {
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    return;
  }
  if (request.method != "POST") curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.method != "POST" && request.body.empty()) return;
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  if (!request.never_replay) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    return;
  }
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_once);
  curl_easy_setopt(curl, CURLOPT_READDATA, &once);
  curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, refuse_rewind);
}

}  // namespace

CurlTransport::CurlTransport(TransportOptions options) : options_(options), handles_(std::make_unique<Handles>()) {
  ensure_curl_initialised();
}

CurlTransport::~CurlTransport() = default;

HttpResponse CurlTransport::send(const HttpRequest& request) {
  ensure_curl_initialised();
  // Given back when this call is done with it, whatever way it ends: not before the last
  // curl_easy_getinfo, or another thread's request would reset it under us.
  struct Lease {
    Handles& pool;
    EasyHandle handle;
    ~Lease() {
      try {
        pool.give_back(std::move(handle));
      } catch (const std::bad_alloc&) {  // no room to keep it: it is closed instead
      }
    }
  } lease{*handles_, handles_->take()};
  CURL* curl = lease.handle.get();
  HeaderList headers = build_header_list(request);
  HttpResponse response;
  char error_text[CURL_ERROR_SIZE] = {0};

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // signals and threads do not mix
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
  BodySink sink{response.body, options_.max_body_bytes};
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_body_bytes));
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  if (!options_.ca_file.empty()) {  // that bundle instead of the system's, whose directory goes too
    curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
    curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr);
  }
  // The directories instead of the system's (OpenSSL reads the ':'-separated list as SSL_CERT_DIR
  // gives it), beside the bundle.
  if (!options_.ca_dir.empty()) curl_easy_setopt(curl, CURLOPT_CAPATH, options_.ca_dir.c_str());
  OneShotBody once{request.body};
  set_method_and_body(curl, request, once);

  CURLcode result = curl_easy_perform(curl);
  // The handle outlives this call; it must not keep pointers into this stack frame.
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_READDATA, nullptr);
  if (result != CURLE_OK) {
    if (std::string problem = certificate_problem(curl, result, request.url, options_.ca_file, options_.ca_dir); !problem.empty()) {
      const std::string said = error_text[0] ? error_text : curl_easy_strerror(result);
      throw TransportError(request.method + " " + redact_url(request.url) + ": the server's TLS certificate was "
                               "refused, so nothing was sent: " + problem + " (libcurl: " + valid_utf8(said) + ")",
                           /*may_have_reached_server=*/once.sent > 0, /*worth_retrying=*/false);
    }
    std::string detail = error_text[0] ? error_text : curl_easy_strerror(result);
    if (result == CURLE_SEND_FAIL_REWIND)  // libcurl's words name our refusal to rewind, not the fault
      detail = "the kept-alive connection closed before an answer came";
    if (sink.too_large || result == CURLE_FILESIZE_EXCEEDED)
      detail = "the answer is larger than " + std::to_string(options_.max_body_bytes >> 20) +
               " MiB (after decompression); it was not read";
    // Request headers (Authorization) and bodies are deliberately left out of the message.
    // A never-replay body that began to leave may have been performed, whatever the error: libcurl
    // may have retried on a fresh connection after a reused one died, and that connect failed.
    throw TransportError(request.method + " " + redact_url(request.url) + ": " + detail,
                         may_have_reached_server(result) || once.sent > 0);
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  return response;
}

bool is_loopback_host(const std::string& host) {
  std::string name = lower(host);
  if (name == "localhost") return true;  // libcurl resolves it to loopback itself, never by DNS
  in_addr v4{};
  if (::inet_pton(AF_INET, name.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
  in6_addr v6{};
  if (::inet_pton(AF_INET6, name.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

std::string base_url_problem(const std::string& url, bool plain_http_anywhere) {
  std::unique_ptr<CURLU, void (*)(CURLU*)> parsed(curl_url(), curl_url_cleanup);
  if (!parsed) return "libcurl could not allocate a URL";
  if (curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
    return "it is not a URL (write it as https://HOST/PATH)";
  auto part = [&](CURLUPart which) {
    char* value = nullptr;
    std::string out;
    if (curl_url_get(parsed.get(), which, &value, 0) == CURLUE_OK && value) out = value;
    curl_free(value);
    return out;
  };
  const std::string scheme = part(CURLUPART_SCHEME);
  if (scheme != "https" && scheme != "http") return "its scheme is not https or http";
  const std::string host = part(CURLUPART_HOST);
  if (host.empty()) return "it names no host";
  if (!part(CURLUPART_QUERY).empty() || !part(CURLUPART_FRAGMENT).empty())
    return "it has a query or a fragment (paths are appended to the base URL)";
  if (scheme == "http" && !plain_http_anywhere && !is_loopback_host(host))
    return "it is plain http:// to " + valid_utf8(host) +
           ", which is not a loopback address: the API key would travel in clear text (use https://)";
  return "";
}

std::string postgres_uri(const PostgresUri& uri) {
  std::unique_ptr<CURLU, void (*)(CURLU*)> url(curl_url(), curl_url_cleanup);
  if (!url) throw Error("libcurl could not allocate a URL");
  auto set = [&](CURLUPart part, const std::string& value, unsigned flags) {
    if (curl_url_set(url.get(), part, value.c_str(), flags) != CURLUE_OK)
      throw Error("cannot make a connection URI of host `" + uri.host + "`");  // never the password
  };
  set(CURLUPART_SCHEME, "postgres", CURLU_NON_SUPPORT_SCHEME);
  set(CURLUPART_HOST, uri.host, 0);
  if (uri.port) set(CURLUPART_PORT, std::to_string(uri.port), 0);
  set(CURLUPART_USER, uri.user, CURLU_URLENCODE);
  if (!uri.password.empty()) set(CURLUPART_PASSWORD, uri.password, CURLU_URLENCODE);
  set(CURLUPART_PATH, "/" + uri.database, CURLU_URLENCODE);
  if (!uri.query.empty()) set(CURLUPART_QUERY, uri.query, 0);
  char* out = nullptr;
  if (curl_url_get(url.get(), CURLUPART_URL, &out, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK || !out)
    throw Error("cannot make a connection URI of host `" + uri.host + "`");
  std::string text = out;
  curl_free(out);
  return text;
}

}  // namespace dbform
