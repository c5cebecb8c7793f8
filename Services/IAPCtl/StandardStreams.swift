import Foundation

/// Writes whole lines to standard output and standard error.
enum StandardStreams {
    /// Writes text and a newline to standard output.
    static func writeOutput(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes text and a newline to standard error.
    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
