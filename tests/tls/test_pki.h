#pragma once
// For tests of TLS: a throwaway certificate authority and the server certificates a test needs,
// made with the OpenSSL library into a directory (PEM files, keys mode 0600):
//
//   ca.pem                      the test CA (what SSL_CERT_FILE names when it is trusted)
//   good.pem / good.key         signed by the CA, for 127.0.0.1, ::1 and localhost, valid now
//   wrong_host.pem / .key       signed by the CA, valid now, but for elsewhere.invalid only
//   expired.pem / .key          signed by the CA, for 127.0.0.1 and localhost, expired yesterday
//   self_signed.pem / .key      for 127.0.0.1 and localhost, valid now, signed by itself
//
// Keys are P-256: made in microseconds, so every test can have its own authority.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace tlstest {

namespace detail {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

inline void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: ") + what + " failed");
}

inline Key new_key() {
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

inline void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "X509V3_EXT_conf_nid");
  check(X509_add_ext(cert, ext, -1) == 1, "X509_add_ext");
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name`, valid from `from_days` to `to_days` (relative to
// now), signed by `issuer` with `issuer_key` (itself when both are null).
inline Cert make_cert(EVP_PKEY* key, const std::string& common_name, const std::string& alt_names, bool is_ca,
                      long from_days, long to_days, X509* issuer, EVP_PKEY* issuer_key) {
  static long serial = 1;
  Cert cert(X509_new());
  check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), ++serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), from_days * 86400);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), to_days * 86400);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("dbform tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  add_extension(cert.get(), signer, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  add_extension(cert.get(), signer, NID_key_usage,
                is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
  add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (issuer) add_extension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
  if (!is_ca) add_extension(cert.get(), signer, NID_ext_key_usage, "serverAuth");
  if (!alt_names.empty()) add_extension(cert.get(), signer, NID_subject_alt_name, alt_names);
  check(X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

inline void write_cert(const std::filesystem::path& path, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "opening a certificate file");
  const bool ok = PEM_write_X509(f, cert) == 1;
  std::fclose(f);
  check(ok, "PEM_write_X509");
}

inline void write_key(const std::filesystem::path& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "opening a key file");
  ::fchmod(fileno(f), 0600);
  const bool ok = PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  check(ok, "PEM_write_PrivateKey");
}

}  // namespace detail

inline const std::string kLoopbackNames = "IP:127.0.0.1,IP:::1,DNS:localhost";

// Writes the files listed at the top into `dir` (created if need be).
inline void make_test_pki(const std::filesystem::path& dir) {
  using namespace detail;
  std::filesystem::create_directories(dir);
  Key ca_key = new_key();
  Cert ca = make_cert(ca_key.get(), "dbform test CA", "", true, -1, 30, nullptr, nullptr);
  write_cert(dir / "ca.pem", ca.get());

  auto leaf = [&](const std::string& stem, const std::string& alt_names, long from_days, long to_days, bool signed_by_ca) {
    Key key = new_key();
    Cert cert = make_cert(key.get(), alt_names.find("127.0.0.1") != std::string::npos ? "127.0.0.1" : "elsewhere.invalid",
                          alt_names, false, from_days, to_days, signed_by_ca ? ca.get() : nullptr,
                          signed_by_ca ? ca_key.get() : nullptr);
    write_cert(dir / (stem + ".pem"), cert.get());
    write_key(dir / (stem + ".key"), key.get());
  };
  leaf("good", kLoopbackNames, -1, 30, true);
  leaf("wrong_host", "DNS:elsewhere.invalid", -1, 30, true);
  leaf("expired", kLoopbackNames, -3, -1, true);
  leaf("self_signed", kLoopbackNames, -1, 30, false);
}

// The files above in a fresh temporary directory, removed with it.
struct TempPki {
  TempPki()
      : dir(std::filesystem::temp_directory_path() /
            ("dbform-tls-" + std::to_string(::getpid()) + "-" + std::to_string(++made))) {
    std::filesystem::remove_all(dir);
    make_test_pki(dir);
  }
  ~TempPki() { std::filesystem::remove_all(dir); }
  TempPki(const TempPki&) = delete;
  TempPki& operator=(const TempPki&) = delete;
  std::string file(const std::string& name) const { return (dir / name).string(); }

  static inline std::atomic<int> made{0};
  std::filesystem::path dir;
};

}  // namespace tlstest
