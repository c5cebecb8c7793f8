import Foundation
import Storage
import TestSupport
import Testing

/// `docs/schema.sql` is the schema the migrations produce, as `pg_dump --schema-only` prints it: a reader sees
/// the tables without replaying seven migrations, and a migration that forgets to regenerate it fails here.
@Suite(.tags(.integration), .notInUnitRuns) struct SchemaDocumentTests {
    @Test func theDocumentedSchemaIsTheMigratedOne() async throws {
        let document = try String(
            contentsOf: LocalComponents.repositoryRoot.appending(path: "docs/schema.sql"), encoding: .utf8)
        try await withLocalPostgresDirectory { url, directory in
            try await DatabaseClient.with(try DatabaseSettings(url: url), logger: .init(label: "schema")) { client in
                try await MigrationRunner().migrate(client: client, logger: .init(label: "schema"))
            }
            let dumped = try await LocalComponents.script(
                "postgres.sh", ["dump-schema", directory.path], trimmed: false)
            #expect(dumped.contains("CREATE TABLE public.entitlements"), "the dump is a real schema")
            if dumped != document {
                let documentLines = document.split(separator: "\n", omittingEmptySubsequences: false)
                let dumpedLines = dumped.split(separator: "\n", omittingEmptySubsequences: false)
                let first = zip(documentLines, dumpedLines).enumerated().first { $0.element.0 != $0.element.1 }
                Issue.record(
                    """
                    docs/schema.sql is not the migrated schema (run deploy/local/schema.sh); first difference at line \
                    \((first?.offset ?? min(documentLines.count, dumpedLines.count)) + 1): \
                    documented \(first.map { "'\($0.element.0)'" } ?? "end"), migrated \(first.map { "'\($0.element.1)'" } ?? "end")
                    """)
            }
        }
    }
}
