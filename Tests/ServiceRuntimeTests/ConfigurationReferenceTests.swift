import Foundation
import Testing

/// The configuration reference (`docs/configuration.md`) names every environment variable the code reads.
///
/// The code reads variables in a few shapes only (`EnvironmentSettings`' typed readers, `values[…]`,
/// `ProcessInfo.processInfo.environment[…]`, and a `switch` naming one variable per case such as
/// `DatabaseRoles.Service.passwordVariable`), each with the name as a string literal, so a scan of the sources finds
/// every one; a variable name built at run time would escape it, which is why there is none.
@Suite struct ConfigurationReferenceTests {
    /// The repository's root, found from this file's path.
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every variable name read by a Swift file under `Shared/` and `Services/`, with a file that reads it.
    static func variablesReadByCode() throws -> [String: String] {
        let reader =
            #/(?:settings\.(?:string|int|bool|requiredString|milliseconds|list|secretFile|readablePath)\(|environment\[|values\[|url\(settings, |case \.\w+: )"([A-Z][A-Z0-9_]+)"/#
        var found: [String: String] = [:]
        for folder in ["Shared", "Services"] {
            let base = Self.root.appending(path: folder)
            guard let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let file as URL in files where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: reader) { found[String(match.output.1)] = file.path }
            }
        }
        return found
    }

    /// The names documented in a table row of the reference, each in backticks.
    static func documentedVariables() throws -> Set<String> {
        let text = try String(contentsOf: Self.root.appending(path: "docs/configuration.md"), encoding: .utf8)
        var names = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("|") {
            for match in line.matches(of: #/`([A-Z][A-Z0-9_]+)`/#) { names.insert(String(match.output.1)) }
        }
        return names
    }

    @Test func everyVariableTheCodeReadsIsDocumented() throws {
        let read = try Self.variablesReadByCode()
        let documented = try Self.documentedVariables()
        // The scan itself must work: the services read dozens of variables, these among them.
        #expect(read.count > 50)
        #expect(read["DATABASE_URL"] != nil && read["RECORD_SIGNING_KEYS"] != nil && read["OPERATIONS_PORT"] != nil)
        for (name, file) in read.sorted(by: { $0.key < $1.key }) where !documented.contains(name) {
            Issue.record("\(name) is read by \(file) but has no row in docs/configuration.md")
        }
    }
}
