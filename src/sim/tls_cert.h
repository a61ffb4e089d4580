#pragma once
// The certificate the simulator's PostgreSQL servers present (--postgres): self-signed, for
// localhost and 127.0.0.1, made with OpenSSL's library when the simulator starts, so that the
// `sslmode=require` connection strings `dbform output` writes work as they are.
#include <string>

namespace dbform::sim {

// Writes a new P-256 key (mode 0600) and a self-signed certificate valid for a year to the two
// paths. Throws Error naming the step that failed.
void write_self_signed_certificate(const std::string& cert_path, const std::string& key_path);

}  // namespace dbform::sim
