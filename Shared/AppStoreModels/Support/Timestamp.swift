import Foundation

/// An App Store timestamp: milliseconds since 1970-01-01T00:00:00Z, as Apple writes every date field.
///
/// Stored as whole milliseconds so that decoding and re-encoding keeps the exact value Apple signed.
/// Xcode's StoreKit testing writes fractional milliseconds (`1697679936049.7297`); those decode and are
/// truncated to the whole millisecond, the precision every other environment uses.
public struct Timestamp: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch.
    public var millisecondsSince1970: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Creates a timestamp from a date, truncated to the millisecond.
    public init(_ date: Date) {
        self.millisecondsSince1970 = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The timestamp as a `Date`.
    public var date: Date {
        Date(timeIntervalSince1970: Double(self.millisecondsSince1970) / 1000)
    }

    /// Decodes an integer, or a floating-point number of milliseconds (Xcode), from a single JSON number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let whole = try? container.decode(Int64.self) {
            self.millisecondsSince1970 = whole
        } else {
            let fractional = try container.decode(Double.self)
            guard fractional.isFinite, abs(fractional) < 9.0e15 else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "timestamp \(fractional) is not a millisecond date")
            }
            self.millisecondsSince1970 = Int64(fractional.rounded(.down))
        }
    }

    /// Encodes the whole number of milliseconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.millisecondsSince1970)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// ISO 8601 with milliseconds, for logs and command-line output.
    public var description: String {
        self.date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
    }
}
