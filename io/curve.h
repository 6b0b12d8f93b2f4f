#pragma once
// CurveZMQ keys for channels over tcp: key pairs, and the certificate files
// ZeroMQ's tools write (CZMQ's zcert format), so that keys made by
// `sluice keygen`, zcert or pyzmq's zmq.auth work alike.
//
//   sluice::curve::save("server", sluice::curve::generate());   // writes server and server_secret
//   ChannelOptions in{.curve = {.secret = "server_secret", .allow = "clients/"}};
//   ChannelOptions out{.curve = {.secret = "client_secret", .server = "server"}};
//
// A receiving channel with a secret key is a CurveZMQ server: it takes
// senders whose public key has a certificate in its `allow` directory and
// refuses (and counts) every other peer, plaintext ones included.
//
// Thread safety: every function here may be called from any thread.

#include <string>

namespace sluice::curve {

// Z85 text, 40 characters each.
struct KeyPair {
  std::string public_key;
  std::string secret_key;  // empty in a public certificate
};

// A fresh key pair. WireError when this libzmq was built without CurveZMQ.
KeyPair generate();

// Writes `base` (the public key only) and `base_secret` (both; mode 0600),
// as CZMQ's zcert_save does. WireError when a file cannot be written.
void save(const std::string& base, const KeyPair& keys);

// Reads a certificate file (public, or secret with both keys). WireError
// naming the file, what was expected and what was found when it is not one.
KeyPair load(const std::string& path);

}  // namespace sluice::curve
