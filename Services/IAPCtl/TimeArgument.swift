import Foundation

/// Parses `--at`: epoch milliseconds, or ISO 8601 with or without fractional seconds.
enum TimeArgument {
    /// The instant the text names, or nil.
    static func parse(_ text: String) -> Date? {
        if let milliseconds = Int64(text) {
            return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
