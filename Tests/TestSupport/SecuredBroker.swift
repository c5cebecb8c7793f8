public import Foundation

/// A broker of its own reached only over mutual TLS (Tansu behind `deploy/local/kafka-tls-proxy.py`), with a CA, a
/// server certificate for `localhost` and a client certificate made for it by `tls-certs.sh` (in `certificates`:
/// ca.pem, client.pem, client.key). Stopped when the body returns or throws.
public func withLocalTLSBroker<T>(_ body: (_ bootstrapServers: String, _ certificates: URL) async throws -> T)
    async throws -> T
{
    try LocalComponents.requireModernLibrdkafka()
    let directory = try LocalComponents.temporaryDirectory("tansu-tls")
    let certificates = directory.appending(path: "certificates")
    _ = try await LocalComponents.script("tls-certs.sh", [certificates.path, "localhost"])
    let bootstrap = try await LocalComponents.script("broker.sh", ["start-tls", directory.path, certificates.path])
    return try await withCleanUp {
        try await body(bootstrap, certificates)
    } cleanUp: {
        _ = try? await LocalComponents.script("broker.sh", ["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A broker of its own that demands SASL authentication (Tansu `--authentication`, SCRAM-SHA-256/512).
public func withLocalSASLBroker<T>(_ body: (_ bootstrapServers: String) async throws -> T) async throws -> T {
    try LocalComponents.requireModernLibrdkafka()
    let directory = try LocalComponents.temporaryDirectory("tansu-sasl")
    let bootstrap = try await LocalComponents.script("broker.sh", ["start-sasl", directory.path])
    return try await withCleanUp {
        try await body(bootstrap)
    } cleanUp: {
        _ = try? await LocalComponents.script("broker.sh", ["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }
}
