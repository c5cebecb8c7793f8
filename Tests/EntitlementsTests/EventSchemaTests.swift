import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import Testing

/// Every event the rules emit validates against the published JSON Schemas (Shared/Entitlements/Schemas),
/// checked with Python's `jsonschema` from the project's tools (deploy/local/env.sh).
@Suite struct EventSchemaTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let schemas = repository.appendingPathComponent("Shared/Entitlements/Schemas")

    /// Runs the validator over events; returns its exit status and output.
    static func validate(_ events: [[String: Any]]) throws -> (Int32, String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: events).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let python = ProcessInfo.processInfo.environment["APPSTORE_TOOLS_PYTHON"]
            ?? repository.appendingPathComponent(".build-tools/venv/bin/python").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [schemas.appendingPathComponent("validate_events.py").path, schemas.path, file.path]
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("validate-\(UUID().uuidString).out")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        process.standardOutput = try FileHandle(forWritingTo: output)
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: try Data(contentsOf: output), as: UTF8.self))
    }

    /// Every event of the rules table, as the outbox stores it.
    static func allEvents() throws -> [[String: Any]] {
        let encoder = AppStoreJSON.makeCanonicalEncoder()
        return try EntitlementRulesTests.rows.flatMap { row in
            EntitlementRules.apply(row.notification, subject: "sub-1", current: SubjectState(entitlement: row.current)).events
        }.map { try JSONSerialization.jsonObject(with: encoder.encode($0)) as! [String: Any] }
    }

    @Test func everyEmittedEventMatchesItsSchema() throws {
        let events = try Self.allEvents()
        let types = Set(events.compactMap { $0["eventType"] as? String })
        #expect(types.count >= 12, "the table exercises every event type: \(types.sorted())")
        let (status, output) = try Self.validate(events)
        #expect(status == 0, "\(output)")
        #expect(output.contains("\(events.count) events checked, 0 errors"))
    }

    @Test func theValidatorRefusesBrokenEvents() throws {
        var events = try Self.allEvents()
        events[0]["eventType"] = "entitlement.teleported"
        events[1].removeValue(forKey: "cause")
        events[2]["schemaVersion"] = 2
        let (status, output) = try Self.validate(Array(events.prefix(3)))
        #expect(status == 1)
        #expect(output.contains("3 errors"), "\(output)")
    }
}
