import Foundation

/// The identifier of a request that came without `x-request-id`: a random (version 4) UUID drawn from the
/// system generator. Foundation's `UUID()` opens and reads `/dev/urandom` on every call here, a cost ingest
/// paid once per notification.
enum RequestIdentifier {
    /// A new random UUID string.
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next() as UInt64, generator.next() as UInt64)
        var uuid = withUnsafeBytes(of: &bytes) { $0.load(as: uuid_t.self) }
        uuid.6 = (uuid.6 & 0x0F) | 0x40  // version 4
        uuid.8 = (uuid.8 & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: uuid).uuidString
    }
}
