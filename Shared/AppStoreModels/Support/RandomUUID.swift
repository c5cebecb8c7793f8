import Foundation

/// Random (version 4, RFC 4122 variant) UUIDs from the kernel's generator in one `getrandom` call (glibc's
/// `arc4random_buf`). Foundation's `UUID()` opens and reads `/dev/urandom` on every call here, and
/// `SystemRandomNumberGenerator` makes a call for each 8 bytes; ingest draws a request id and retention-messaging an
/// offer nonce for nearly every request.
public enum RandomUUID {
    /// A new random UUID's 16 bytes.
    public static func bytes() -> uuid_t {
        var words = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &words) { arc4random_buf($0.baseAddress!, $0.count) }
        var uuid = withUnsafeBytes(of: &words) { $0.load(as: uuid_t.self) }
        uuid.6 = (uuid.6 & 0x0F) | 0x40  // version 4
        uuid.8 = (uuid.8 & 0x3F) | 0x80  // RFC 4122 variant
        return uuid
    }
}
