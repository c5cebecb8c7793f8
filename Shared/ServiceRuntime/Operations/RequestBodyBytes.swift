public import Hummingbird

/// A request body larger than a route takes.
public struct BodyTooLarge: Error, Sendable {
    /// The route's limit, in bytes.
    public let limit: Int
}

extension Request {
    /// The whole body in one array, read within `limit` bytes: one copy out of NIO's buffers, where collecting a
    /// `ByteBuffer` and copying it out made two (and a third allocation when the body came in several parts).
    /// Throws ``BodyTooLarge`` past the limit, and ``BodyDeadlineExceeded`` when the body did not arrive within the
    /// server's body deadline (``RequestDeadlineHandler``).
    public func bodyBytes(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        if let length = self.headers[.contentLength].flatMap(Int.init), (0...limit).contains(length) {
            bytes.reserveCapacity(length)
        }
        for try await part in self.body {
            guard part.readableBytes <= limit - bytes.count else { throw BodyTooLarge(limit: limit) }
            part.withUnsafeReadableBytes { bytes.append(contentsOf: $0) }
        }
        return bytes
    }
}
