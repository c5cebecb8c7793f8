import Foundation
import Testing

/// The README stays short and every link of the documentation leads somewhere: a page moved or renamed without
/// its links fails here.
@Suite struct DocumentationTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// README.md and every page under docs/.
    static func pages() throws -> [URL] {
        let docs = try FileManager.default.contentsOfDirectory(
            at: Self.root.appending(path: "docs"), includingPropertiesForKeys: nil)
        return [Self.root.appending(path: "README.md")] + docs.filter { $0.pathExtension == "md" }
    }

    @Test func theReadmeIsAFewHundredLinesAtMost() throws {
        let lines = try String(contentsOf: Self.root.appending(path: "README.md"), encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false
        ).count
        #expect(lines < 300, "README.md has \(lines) lines: move the detail to docs/")
    }

    @Test func everyRelativeLinkLeadsToAFile() throws {
        var checked = 0
        for page in try Self.pages() {
            let text = try String(contentsOf: page, encoding: .utf8)
            for match in text.matches(of: #/\]\(([^)\s]+)\)/#) {
                let target = String(match.output.1)
                guard !target.hasPrefix("http"), !target.hasPrefix("#"), !target.hasPrefix("mailto:") else { continue }
                let path = String(target.split(separator: "#", maxSplits: 1)[0])
                let resolved = page.deletingLastPathComponent().appending(path: path).standardizedFileURL
                #expect(
                    FileManager.default.fileExists(atPath: resolved.path),
                    "\(page.lastPathComponent) links to \(target), which is not there")
                checked += 1
            }
        }
        #expect(checked > 20, "the pages link to each other")
    }
}
