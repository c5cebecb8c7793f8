import Foundation

/// The identifier of a request that came without `x-request-id`: a random (version 4) UUID drawn from the
/// kernel's generator in one `getrandom` call (glibc's `arc4random_buf`). Foundation's `UUID()` opened and read
/// `/dev/urandom` on every call here, and `SystemRandomNumberGenerator` makes a call for each 8 bytes: ingest
/// pays this once per notification.
enum RequestIdentifier {
    /// A new random UUID string.
    static func random() -> String {
        var bytes = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &bytes) { arc4random_buf($0.baseAddress!, $0.count) }
        var uuid = withUnsafeBytes(of: &bytes) { $0.load(as: uuid_t.self) }
        uuid.6 = (uuid.6 & 0x0F) | 0x40  // version 4
        uuid.8 = (uuid.8 & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: uuid).uuidString
    }
}
