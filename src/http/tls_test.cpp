// CurlTransport against a real HTTPS server on loopback (cpp-httplib's SSLServer) with a CA made for
// the test: a certificate of a trusted CA works; an unknown issuer, a self-signed certificate, a
// wrong host and an expired certificate fail at once, saying which, before the request is sent.
// And the rule for plain http:// base URLs: loopback only, unless DBFORM_ALLOW_HTTP=1.
#include <catch2/catch.hpp>
#include <httplib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "http/curl_transport.h"
#include "tls/test_pki.h"

using dbform::CurlTransport;
using dbform::HttpRequest;
using dbform::TransportError;
using dbform::TransportOptions;

namespace fs = std::filesystem;

namespace {

using Pki = tlstest::TempPki;

// An HTTPS server on 127.0.0.1 presenting `stem`.pem; counts the requests it received.
class TlsServer {
 public:
  TlsServer(const Pki& pki, const std::string& stem)
      : server_((pki.dir / (stem + ".pem")).c_str(), (pki.dir / (stem + ".key")).c_str()) {
    REQUIRE(server_.is_valid());
    server_.Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      ++received_;
      res.status = 201;
      res.set_content("you sent: " + req.body, "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~TlsServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& host, const std::string& path) const {
    return "https://" + host + ":" + std::to_string(port_) + path;
  }
  int received() const { return received_; }

 private:
  httplib::SSLServer server_;
  int port_ = -1;
  std::thread thread_;
  std::atomic<int> received_{0};
};

HttpRequest create_request(const std::string& url) {
  HttpRequest request{"POST", url, {{"Authorization", "Bearer tls-test-secret"}}, R"({"name":"orders"})"};
  request.never_replay = true;
  return request;
}

// The failure of sending a create to `server` with `ca_file` trusted: it must be one.
TransportError refused(TlsServer& server, const std::string& host, const std::string& ca_file) {
  TransportOptions options;
  options.ca_file = ca_file;
  CurlTransport transport(options);
  try {
    transport.send(create_request(server.url(host, "/echo")));
  } catch (const TransportError& e) {
    return e;
  }
  FAIL("the request was answered, though the certificate should have been refused");
  throw std::logic_error("unreachable");
}

// The same, as a certificate refused before anything was sent: the failure says `says`, is not
// worth a retry and cannot have reached the server, which received nothing. Its message, for more
// checks.
std::string refused_before_sending(TlsServer& server, const std::string& host, const std::string& ca_file,
                                   const std::string& says) {
  const TransportError e = refused(server, host, ca_file);
  const std::string what = e.what();
  INFO(what);
  CHECK(what.find(says) != std::string::npos);
  CHECK_FALSE(e.worth_retrying());
  CHECK_FALSE(e.may_have_reached_server());
  CHECK(server.received() == 0);
  return what;
}

}  // namespace

TEST_CASE("http: https to a server whose certificate chains to the CA bundle given works, over loopback names") {
  Pki pki;
  TlsServer server(pki, "good");
  TransportOptions options;
  options.ca_file = pki.file("ca.pem");
  CurlTransport transport(options);
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    INFO(host);
    dbform::HttpResponse answer = transport.send(create_request(server.url(host, "/echo")));
    CHECK(answer.status == 201);
    CHECK(answer.body == R"(you sent: {"name":"orders"})");
  }
  CHECK(server.received() == 2);
}

TEST_CASE("http: a certificate of a CA that is not trusted fails at once as an unknown issuer, nothing sent") {
  Pki pki;
  TlsServer server(pki, "good");
  // The system's CA certificates do not hold the test CA.
  const std::string what =
      refused_before_sending(server, "127.0.0.1", "",
                             "the server's TLS certificate was refused, so nothing was sent: unknown issuer: the "
                             "certificate's issuer is not among the system's CA certificates (SSL_CERT_FILE names "
                             "another bundle)");
  INFO(what);
  CHECK(what.find("POST https://127.0.0.1:") == 0);
  CHECK(what.find("tls-test-secret") == std::string::npos);
}

TEST_CASE("http: a self-signed certificate fails at once as an unknown issuer, nothing sent") {
  Pki pki;
  TlsServer server(pki, "self_signed");
  refused_before_sending(server, "127.0.0.1", pki.file("ca.pem"),
                         "unknown issuer: the certificate is self-signed and not among the CA bundle " +
                             pki.file("ca.pem") + " (SSL_CERT_FILE)");
}

TEST_CASE("http: a certificate for another host fails at once as a wrong host, nothing sent") {
  Pki pki;
  TlsServer server(pki, "wrong_host");
  refused_before_sending(server, "127.0.0.1", pki.file("ca.pem"), "wrong host: the certificate is not for 127.0.0.1");
}

TEST_CASE("http: an expired certificate fails at once as expired, nothing sent") {
  Pki pki;
  TlsServer server(pki, "expired");
  refused_before_sending(server, "localhost", pki.file("ca.pem"), "the certificate has expired");
}

TEST_CASE("http: a CA bundle that is not PEM fails at once naming it") {
  Pki pki;
  TlsServer server(pki, "good");
  {
    std::ofstream(pki.dir / "not-pem.txt") << "not a certificate\n";
  }
  TransportError e = refused(server, "127.0.0.1", pki.file("not-pem.txt"));
  CHECK(std::string(e.what()).find("the CA bundle " + pki.file("not-pem.txt") + " (SSL_CERT_FILE) cannot be read") !=
        std::string::npos);
  CHECK_FALSE(e.worth_retrying());
  CHECK(server.received() == 0);
}

TEST_CASE("http: plain http:// base URLs are accepted for loopback hosts only, unless allowed") {
  using dbform::base_url_problem;
  for (const std::string url : {"http://127.0.0.1:8080/public/api/v1", "http://127.9.8.7/v1", "http://localhost:1/v1",
                                "http://LOCALHOST/v1", "http://[::1]:8080/v1", "http://[::ffff:127.0.0.1]/v1",
                                "https://api.example.com/v1", "https://10.0.0.1/v1"}) {
    INFO(url);
    CHECK(base_url_problem(url) == "");
  }
  for (const std::string url : {"http://api.example.com/v1", "http://10.0.0.1:8080/v1", "http://128.0.0.1/v1",
                                "http://127.0.0.1.nip.io/v1", "http://localhost.example.com/v1", "http://[::2]/v1",
                                "http://[::ffff:10.0.0.1]/v1", "http://0.0.0.0/v1"}) {
    INFO(url);
    const std::string problem = base_url_problem(url);
    CHECK(problem.find("it is plain http:// to ") == 0);
    CHECK(problem.find("which is not a loopback address: the API key would travel in clear text (use https://)") !=
          std::string::npos);
    CHECK(base_url_problem(url, /*plain_http_anywhere=*/true) == "");
  }
  CHECK(base_url_problem("http://user:s3cret@api.example.com/v1").find("s3cret") == std::string::npos);
}
