public import Foundation

/// Files of `Tests/Fixtures`: Apple's conformance vectors (copied from the project's shared conformance
/// set, MIT licence in `apple/`) and the real Apple-signed Sandbox notification.
public enum Fixtures {
    /// `Tests/Fixtures`, found from this source file so tests run from any working directory.
    public static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The URL of a fixture, by its path below `Tests/Fixtures`.
    public static func url(_ path: String) -> URL {
        directory.appendingPathComponent(path)
    }

    /// A fixture's bytes.
    public static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: url(path)))
    }

    /// A fixture as text, without surrounding whitespace.
    public static func text(_ path: String) throws -> String {
        String(decoding: try bytes(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
