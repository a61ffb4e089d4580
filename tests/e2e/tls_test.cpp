// The API over TLS, through the real binary: the simulator
// serves HTTPS with certificates of a CA made for the test (tests/tls/test_pki.h). SSL_CERT_FILE
// names the CA bundle to trust; a certificate that fails (unknown issuer, wrong host, expired)
// fails the command at once, naming which, before anything reaches the API; plain http:// goes to
// loopback only, unless DBFORM_ALLOW_HTTP=1.
#include <signal.h>

#include "common.h"
#include "tls/test_pki.h"

using namespace e2e;

namespace {

dbform::SimTls served(const tlstest::TempPki& pki, const std::string& stem) {
  return {pki.file(stem + ".pem"), pki.file(stem + ".key")};
}

// An apply over HTTPS refused for its certificate: at once (not retried over half a minute),
// exit 1, saying `which`, and not one request reached the simulator.
void check_tls_refused(Sandbox& sb, const std::map<std::string, std::string>& env, const std::string& which) {
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult r = sb.apply({}, env);
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "GET " + sb.api_url() + "/auth/info: the server's TLS certificate was refused, so nothing "
                                                 "was sent: " + which));
  CHECK_FALSE(contains(r.err, "attempts"));
  CHECK(r.elapsed < std::chrono::seconds(5));  // six tries with back-off took 28 s
  CHECK(sb.total_requests() == 0);
  CHECK_FALSE(contains(r.all(), kKey));
  CHECK_FALSE(sb.exists("dbform.state.json"));

  RunResult who = sb.run({"whoami"}, env);
  INFO(who.describe());
  CHECK(who.exit_code == 1);
  CHECK(contains(who.out, "Project " + kProject + ": NOT CHECKED: the API gave no answer to the key from "
                          "DBFORM_API_KEY: GET /auth/info: could not reach the API: GET " + sb.api_url() +
                          "/auth/info: the server's TLS certificate was refused, so nothing was sent: " + which));
  CHECK(sb.total_requests() == 0);
}

}  // namespace

TEST_CASE("e2e: tls: with SSL_CERT_FILE naming the CA, whoami and apply work over HTTPS") {
  tlstest::TempPki pki;
  Sandbox sb(default_sim_config(), served(pki, "good"));
  REQUIRE(sb.api_url().rfind("https://127.0.0.1:", 0) == 0);
  const std::map<std::string, std::string> trust = {{"SSL_CERT_FILE", pki.file("ca.pem")}};
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));

  RunResult who = sb.run({"whoami"}, trust);
  INFO(who.describe());
  CHECK(who.exit_code == 0);
  CHECK(contains(who.out, "Project " + kProject + ": ok"));

  RunResult r = sb.apply({}, trust);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(sb.count(kPostService) == 1);
  CHECK(find_resource(sb.state(), service_address("orders"))["status"] == "READY");
  // localhost is the same loopback server, and the certificate names it too.
  RunResult by_name = sb.run({"plan", "--refresh", "--detailed-exitcode"},
                             {{"SSL_CERT_FILE", pki.file("ca.pem")},
                              {"DBFORM_API_URL", "https://localhost:" + std::to_string(sb.port()) + "/public/api/v1"}});
  INFO(by_name.describe());
  CHECK(by_name.exit_code == 0);
}

// A directory as `c_rehash` makes it: the CA's certificate under its subject's hash.
std::string hashed_ca_dir(const tlstest::TempPki& pki, const fs::path& dir) {
  fs::create_directories(dir);
  std::FILE* in = std::fopen(pki.file("ca.pem").c_str(), "r");
  REQUIRE(in);
  X509* ca = PEM_read_X509(in, nullptr, nullptr, nullptr);
  std::fclose(in);
  REQUIRE(ca);
  char name[16];
  std::snprintf(name, sizeof name, "%08lx.0", X509_subject_name_hash(ca));
  X509_free(ca);
  fs::copy_file(pki.file("ca.pem"), dir / name);
  return dir.string();
}

TEST_CASE("e2e: tls: SSL_CERT_DIR is read as OpenSSL reads it - a hashed directory of the CA, ':'-separated - and a wrong one is named") {
  tlstest::TempPki pki;
  Sandbox sb(default_sim_config(), served(pki, "good"));
  const std::string dir = hashed_ca_dir(pki, sb.dir() / "certs");
  const std::string empty = (sb.dir() / "empty").string();
  fs::create_directories(empty);
  // Without the CA's directory the CA is unknown.
  check_tls_refused(sb, {{"SSL_CERT_DIR", empty}},
                "unknown issuer: the certificate's issuer is not among the system's CA bundle and the certificates in " +
                    empty + " (SSL_CERT_DIR)");
  RunResult who = sb.run({"whoami"}, {{"SSL_CERT_DIR", empty + ":" + dir}});
  INFO(who.describe());
  CHECK(who.exit_code == 0);
  CHECK(contains(who.out, "Project " + kProject + ": ok"));
  CHECK(sb.count(kAuthInfo) == 1);
  // A directory that is not one is named, before anything is sent.
  const long long before = sb.total_requests();
  for (const std::string wrong : {(sb.dir() / "missing").string(), pki.file("ca.pem")}) {
    RunResult r = sb.run({"whoami"}, {{"SSL_CERT_DIR", dir + ":" + wrong}});
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "SSL_CERT_DIR names " + wrong + ", which "));
  }
  CHECK(sb.total_requests() == before);
}

TEST_CASE("e2e: tls: a certificate whose issuer is not trusted fails at once as an unknown issuer, nothing sent") {
  tlstest::TempPki pki;
  SECTION("a CA the system does not know, SSL_CERT_FILE unset") {
    Sandbox sb(default_sim_config(), served(pki, "good"));
    check_tls_refused(sb, {}, "unknown issuer: the certificate's issuer is not among the system's CA certificates");
  }
  SECTION("a self-signed certificate") {
    Sandbox sb(default_sim_config(), served(pki, "self_signed"));
    check_tls_refused(sb, {{"SSL_CERT_FILE", pki.file("ca.pem")}},
                  "unknown issuer: the certificate is self-signed and not among the CA bundle " + pki.file("ca.pem") +
                      " (SSL_CERT_FILE)");
  }
}

TEST_CASE("e2e: tls: a certificate for another host fails at once as a wrong host, nothing sent") {
  tlstest::TempPki pki;
  Sandbox sb(default_sim_config(), served(pki, "wrong_host"));
  check_tls_refused(sb, {{"SSL_CERT_FILE", pki.file("ca.pem")}}, "wrong host: the certificate is not for 127.0.0.1");
}

TEST_CASE("e2e: tls: an expired certificate fails at once as expired, nothing sent") {
  tlstest::TempPki pki;
  Sandbox sb(default_sim_config(), served(pki, "expired"));
  check_tls_refused(sb, {{"SSL_CERT_FILE", pki.file("ca.pem")}}, "the certificate has expired");
}

TEST_CASE("e2e: tls: an SSL_CERT_FILE that names no readable file is refused naming it, nothing sent") {
  tlstest::TempPki pki;
  Sandbox sb(default_sim_config(), served(pki, "good"));
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  RunResult missing = sb.apply({}, {{"SSL_CERT_FILE", (sb.dir() / "no-such-ca.pem").string()}});
  INFO(missing.describe());
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "SSL_CERT_FILE names " + (sb.dir() / "no-such-ca.pem").string() +
                                  ", which does not exist: it must name the CA bundle (PEM) to trust; nothing was sent"));
  RunResult directory = sb.apply({}, {{"SSL_CERT_FILE", sb.dir().string()}});
  CHECK(directory.exit_code == 1);
  CHECK(contains(directory.err, "which is not a file"));
  RunResult newline = sb.apply({}, {{"SSL_CERT_FILE", pki.file("ca.pem") + "\n"}});
  CHECK(newline.exit_code == 1);
  CHECK(contains(newline.err, "SSL_CERT_FILE"));
  CHECK(sb.total_requests() == 0);
}

TEST_CASE("e2e: tls: dbform sim --tls-cert --tls-key serves HTTPS that dbform trusts through SSL_CERT_FILE") {
  tlstest::TempPki pki;
  Sandbox sb;
  auto sim = sb.start({"sim", "--listen", "127.0.0.1:0", "--port-file", "sim.port", "--key", "tls-key=tls-project",
                       "--tls-cert", pki.file("good.pem"), "--tls-key", pki.file("good.key")});
  REQUIRE(eventually([&] { return sb.exists("sim.port"); }, std::chrono::seconds(30)));
  const std::string port = sb.read("sim.port").substr(0, sb.read("sim.port").find('\n'));
  const std::string url = "https://localhost:" + port + "/public/api/v1";
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}, "tls-project"));
  RunResult who = sb.run({"whoami"}, {{"DBFORM_API_URL", url}, {"DBFORM_API_KEY", "tls-key"},
                                      {"SSL_CERT_FILE", pki.file("ca.pem")}});
  INFO(who.describe() << "\nsim: " << sim->stdout_so_far() << sim->stderr_so_far());
  CHECK(who.exit_code == 0);
  CHECK(contains(who.out, "Project tls-project: ok"));
  CHECK(contains(sim->stdout_so_far(), "dbform sim listening on https://127.0.0.1:" + port + "/public/api/v1"));
  sim->signal(SIGTERM);
  CHECK(sim->wait().exit_code == 0);

  RunResult half = sb.run({"sim", "--key", "k=p", "--tls-cert", pki.file("good.pem")});
  CHECK(half.exit_code != 0);
  CHECK(contains(half.err, "--tls-cert requires --tls-key"));
}

TEST_CASE("e2e: tls: plain http:// to a host that is not loopback is refused naming DBFORM_API_URL, unless "
          "DBFORM_ALLOW_HTTP=1") {
  // The simulator stands in as the HTTP proxy (http_proxy, which libcurl follows) of a remote
  // host: whatever dbform sends to that host reaches the simulator and is counted there.
  Sandbox sb;
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}));
  const std::string remote = "http://api.example.com/public/api/v1";
  const std::string proxy = "http://127.0.0.1:" + std::to_string(sb.port());
  for (const std::string allow : {"", "0"}) {
    std::map<std::string, std::string> env = {{"DBFORM_API_URL", remote}, {"http_proxy", proxy}};
    if (!allow.empty()) env["DBFORM_ALLOW_HTTP"] = allow;
    RunResult refused = sb.apply({}, env);
    INFO(refused.describe());
    CHECK(refused.exit_code == 1);
    CHECK(contains(refused.err, "DBFORM_API_URL is refused: it is plain http:// to api.example.com, which is not a "
                                "loopback address: the API key would travel in clear text (use https://); nothing "
                                "was sent (DBFORM_ALLOW_HTTP=1 allows plain http:// to any host)"));
    CHECK_FALSE(contains(refused.all(), kKey));
  }
  for (const std::string url : {"http://10.1.2.3:8080/v1", "http://[fd00::1]/v1", "http://127.0.0.1.nip.io/v1"}) {
    RunResult refused = sb.run({"whoami"}, {{"DBFORM_API_URL", url}, {"http_proxy", proxy}});
    INFO(refused.describe());
    CHECK(refused.exit_code == 1);
    CHECK(contains(refused.err, "which is not a loopback address"));
  }
  RunResult odd = sb.apply({}, {{"DBFORM_API_URL", remote}, {"http_proxy", proxy}, {"DBFORM_ALLOW_HTTP", "yes"}});
  CHECK(odd.exit_code == 1);
  CHECK(contains(odd.err, "DBFORM_ALLOW_HTTP must be 1 (plain http:// to any host) or 0, not `yes`"));
  CHECK(sb.total_requests() == 0);

  // Allowed: the key check goes out, in clear text, through the proxy.
  RunResult allowed = sb.run({"whoami"}, {{"DBFORM_API_URL", remote}, {"http_proxy", proxy}, {"DBFORM_ALLOW_HTTP", "1"}});
  INFO(allowed.describe());
  CHECK(allowed.exit_code == 0);
  CHECK(contains(allowed.out, "Project " + kProject + ": ok"));
  CHECK(sb.count(kAuthInfo) == 1);  // answered by the simulator behind the proxy

  // Loopback needs no permission: every other test speaks http:// to 127.0.0.1.
  const long long before = sb.total_requests();
  RunResult local =
      sb.run({"whoami"}, {{"DBFORM_API_URL", "http://localhost:" + std::to_string(sb.port()) + "/public/api/v1"}});
  INFO(local.describe());
  CHECK(local.exit_code == 0);
  CHECK(sb.count(kAuthInfo) == 2);
  CHECK(sb.total_requests() == before + 1);
}
