import Foundation

/// Writes whole lines to standard output and standard error.
enum StandardStreams {
    /// Writes text and a newline to standard output.
    static func writeOutput(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes a value as one line of JSON to standard output (sorted keys, dates as ISO 8601).
    static func writeJSONLine(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        Self.writeOutput(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Writes text and a newline (unless `newline` is false: a line redrawn in place) to standard error.
    static func writeError(_ text: String, newline: Bool = true) {
        FileHandle.standardError.write(Data((text + (newline ? "\n" : "")).utf8))
    }
}
