import Foundation

/// What a long `iapctl resync` has finished, on disk, so an interrupted run resumes where it stopped: one line
/// per entry whose records the broker acknowledged, appended (and flushed) as each one ends. An entry is its
/// line's text, so a file edited between runs still skips exactly the entries already done, and an entry
/// listed twice is done once. Failed entries are not written: the next run tries them again.
final class ResyncJournal {
    static let header = "# iapctl resync journal: entries done (delete this file to start over)"
    let path: String
    /// The entries already done when the journal was opened.
    let done: Set<String>
    private let handle: FileHandle

    /// Opens (or creates) the journal at `path` and reads what it holds.
    init(path: String) throws {
        self.path = path
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            guard manager.createFile(atPath: path, contents: Data((Self.header + "\n").utf8)) else {
                throw ResyncJournalError("cannot create the journal \(path)")
            }
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasPrefix(Self.header) else {
            throw ResyncJournalError("\(path) is not an iapctl resync journal (it would be appended to)")
        }
        self.done = Set(text.split(separator: "\n").dropFirst().map(String.init))
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw ResyncJournalError("cannot write the journal \(path)")
        }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    deinit { try? self.handle.close() }

    /// Records an entry as done (one write of one line: a crash leaves whole lines, or a last partial one that
    /// matches no entry and is simply done again).
    func record(_ entry: String) throws {
        try self.handle.write(contentsOf: Data((entry + "\n").utf8))
    }
}

/// The journal cannot be used.
struct ResyncJournalError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
