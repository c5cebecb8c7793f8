import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import TestSupport
import Testing

/// Every event the rules emit validates against the published JSON Schemas (Shared/Entitlements/Schemas),
/// checked with Python's `jsonschema` from the project's tools (deploy/local/env.sh).
@Suite(.tags(.integration), .notInUnitRuns) struct EventSchemaTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let schemas = repository.appendingPathComponent("Shared/Entitlements/Schemas")

    /// Runs the validator over events; returns its exit status and output.
    static func validate(_ events: [[String: Any]]) async throws -> (Int32, String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: events).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await Self.python(["validate_events.py", schemas.path, file.path])
    }

    /// Runs a script of the schema folder with the project's Python; returns its exit status and output.
    static func python(_ arguments: [String]) async throws -> (Int32, String) {
        try await LocalComponents.python("Shared/Entitlements/Schemas/" + arguments[0], Array(arguments.dropFirst()))
    }

    /// Every event of the rules table, as the outbox stores it: in order, out of order (stale), and a product
    /// change inside one entitlement.
    static func allEvents() throws -> [[String: Any]] {
        let encoder = AppStoreJSON.makeCanonicalEncoder()
        return try Self.allEmittedEvents().map {
            try JSONSerialization.jsonObject(with: encoder.encode($0)) as! [String: Any]
        }
    }

    /// Every event of the rules table (see ``allEvents()``), as values.
    static func allEmittedEvents() throws -> [EntitlementEvent] {
        let inOrder = EntitlementRulesTests.rows.flatMap { row in
            EntitlementRules.apply(row.notification, subject: "sub-1", current: SubjectState(entitlement: row.current))
                .events
        }
        let late = EntitlementRulesTests.rows.flatMap { row in
            EntitlementRules.apply(
                row.notification, subject: "sub-1",
                current: SubjectState(lastSignedDate: NotificationTypeTable.signed + 1, entitlement: row.current)
            ).events
        }
        var monthly = NotificationTypeTable.activeState
        monthly.productId = "pro.monthly"
        let changed = EntitlementRules.apply(
            NotificationTypeTable.notification("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), subject: "sub-1",
            current: SubjectState(entitlement: monthly),
            catalog: EntitlementCatalog(["pro.monthly": "pro", "pro": "pro"])
        ).events
        // A purchase bound to an app user while its rows are under its originalTransactionId: they move.
        let moved = EntitlementRules.apply(
            NotificationTypeTable.notification("DID_RENEW", nil), subject: "sub-1",
            current: SubjectState(entitlement: NotificationTypeTable.activeState, boundCustomer: "app-user-1")
        ).events
        // A subscription migrated from another (the repository found the previous one's entitlement).
        var migratedNotification = NotificationTypeTable.notification("MIGRATION", nil, status: .active)
        migratedNotification.transaction?.previousOriginalTransactionId = "sub-0"
        let migrated = EntitlementRules.apply(
            migratedNotification, subject: "sub-1",
            current: SubjectState(
                migration: SubjectMigration(
                    previousOriginalTransactionId: "sub-0", customer: "sub-0",
                    previousEntitlement: NotificationTypeTable.activeState))
        ).events
        // An Advanced Commerce item refunded while the purchase stands.
        var refund = NotificationTypeTable.notification("REFUND", nil, status: .active)
        var item = AdvancedCommerceTransactionItem()
        item.sku = "extra-storage"
        item.price = 990
        var itemRefund = AdvancedCommerceRefund()
        itemRefund.refundAmount = 990
        itemRefund.refundDate = Timestamp(millisecondsSince1970: NotificationTypeTable.signed)
        itemRefund.refundReason = "OTHER"
        itemRefund.refundType = "FULL"
        item.refunds = [itemRefund]
        var info = AdvancedCommerceTransactionInfo()
        info.items = [item]
        refund.transaction?.advancedCommerceInfo = try JSONValue(encoding: info)
        let itemsRefunded = EntitlementRules.apply(
            refund, subject: "sub-1", current: SubjectState(entitlement: NotificationTypeTable.activeState)
        ).events
        return inOrder + late + changed + moved + migrated + itemsRefunded
    }

    /// The event types a schema of the folder (or of v1/) lists for a stream.
    static func schema(_ stream: String, version: String = "") throws -> [String: Any] {
        let url = schemas.appendingPathComponent(version).appendingPathComponent("entitlements.\(stream).schema.json")
        return try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
    }

    @Test func everyEmittedEventMatchesItsSchemaAndEveryTypeIsEmitted() async throws {
        let events = try Self.allEvents()
        let types = Set(events.compactMap { $0["eventType"] as? String })
        var listed: Set<String> = []
        for stream in ["changes", "family", "revocations"] {
            let properties = try Self.schema(stream)["properties"] as! [String: Any]
            listed.formUnion((properties["eventType"] as! [String: Any])["enum"] as! [String])
        }
        #expect(
            listed.subtracting(types).isEmpty,
            "every type the schemas list is emitted by the table: missing \(listed.subtracting(types).sorted())")
        #expect(
            types.subtracting(listed).isEmpty, "every emitted type is listed: \(types.subtracting(listed).sorted())")
        #expect(
            events.contains { $0["outOfOrder"] as? Bool == true },
            "late notifications' facts are published, marked out of order")
        let (status, output) = try await Self.validate(events)
        #expect(status == 0, "\(output)")
        #expect(output.contains("\(events.count) events checked, 0 errors"))
    }

    @Test func versionOneFieldsKeepTheirNamesAndTypes() throws {
        /// A property's type-defining keywords (not its description).
        func shape(_ value: Any?) -> String {
            guard let object = value as? [String: Any] else { return "absent" }
            let kept = object.filter {
                ["type", "format", "enum", "required", "additionalProperties", "minLength"].contains($0.key)
            }
            var text = String(
                decoding: try! JSONSerialization.data(withJSONObject: kept, options: .sortedKeys), as: UTF8.self)
            if let nested = object["properties"] as? [String: Any] {
                text += "{" + nested.keys.sorted().map { "\($0):\(shape(nested[$0]))" }.joined(separator: ",") + "}"
            }
            return text
        }
        for stream in ["changes", "family", "revocations"] {
            let v1 = try Self.schema(stream, version: "v1")
            let v2 = try Self.schema(stream)
            let old = v1["properties"] as! [String: Any]
            let new = v2["properties"] as! [String: Any]
            for (name, definition) in old where name != "schemaVersion" && name != "eventType" {
                var newShape = shape(new[name])
                if name == "state", var state = new[name] as? [String: Any],
                    var properties = state["properties"] as? [String: Any]
                {
                    properties["entitlementId"] = nil  // the one field v2 adds inside state
                    state["properties"] = properties
                    newShape = shape(state)
                }
                #expect(newShape == shape(definition), "\(stream).\(name) keeps its type")
            }
            let oldTypes = Set((old["eventType"] as! [String: Any])["enum"] as! [String])
            let newTypes = Set((new["eventType"] as! [String: Any])["enum"] as! [String])
            #expect(oldTypes.isSubset(of: newTypes), "\(stream) keeps every v1 event type")
            #expect(
                Set(v1["required"] as! [String]).isSubset(of: Set(v2["required"] as! [String])),
                "\(stream): v1's required fields stay required")
            #expect((new["schemaVersion"] as? [String: Any])?["const"] as? Int == EntitlementEvent.schemaVersion)
        }
        // And an emitted event decodes with v1's field names and types.
        let event = try #require(try Self.allEvents().first { $0["eventType"] as? String == "revocation.refunded" })
        #expect(
            event["occurredAt"] is Int && event["customer"] is String && event["cause"] is [String: Any]
                && event["revocation"] is [String: Any])
    }

    @Test func theSchemaFilesAreWhatTheirGeneratorWrites() async throws {
        let (status, output) = try await Self.python(["make_schemas.py", "--check"])
        #expect(status == 0, "\(output)")
    }

    @Test func theValidatorRefusesBrokenEvents() async throws {
        var events = try Self.allEvents()
        events[0]["eventType"] = "entitlement.teleported"
        events[1].removeValue(forKey: "cause")
        events[2]["schemaVersion"] = 1
        let (status, output) = try await Self.validate(Array(events.prefix(3)))
        #expect(status == 1)
        #expect(output.contains("3 errors"), "\(output)")
    }
}
