#include "sim/tls_cert.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <type_traits>

#include "util/atomic_file.h"
#include "util/error.h"

namespace dbform::sim {

namespace {

[[noreturn]] void fail(const std::string& step) {
  char reason[256] = "unknown error";
  if (unsigned long code = ERR_get_error()) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  throw Error("cannot make the simulator's TLS certificate (" + step + "): " + reason);
}

template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, std::integral_constant<decltype(Free), Free>>;

std::string to_pem(const std::function<int(BIO*)>& write, const std::string& what) {
  Owned<BIO, BIO_free_all> bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) fail("writing the " + what);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

void add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION, X509_EXTENSION_free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) fail("adding an extension");
}

}  // namespace

void write_self_signed_certificate(const std::string& cert_path, const std::string& key_path) {
  Owned<EVP_PKEY, EVP_PKEY_free> key(EVP_EC_gen("P-256"));
  if (!key) fail("generating the key");
  Owned<X509, X509_free> cert(X509_new());
  if (!cert) fail("allocating the certificate");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), static_cast<long>(std::time(nullptr)));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("dbform sim"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_set_pubkey(cert.get(), key.get()) != 1) fail("setting the public key");
  add_extension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
  add_extension(cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) fail("signing");
  const std::string key_pem = to_pem(
      [&](BIO* bio) { return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr); }, "key");
  const std::string cert_pem = to_pem([&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()); }, "certificate");
  write_file_atomically(key_path, key_pem, 0600);
  write_file_atomically(cert_path, cert_pem, 0644);
}

}  // namespace dbform::sim
