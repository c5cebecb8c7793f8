import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Storage
import TestSupport
import Testing

/// The scale benchmark's generated rows are the rows the entitlement-updater writes: for one subscription's purchase
/// and renewal, the repository's rows and ``ScaleData``'s have the same columns set (and unset) and the same values
/// where they do not name the customer, per table; the generated event carries an event's required fields.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct ScaleDataShapeTests {
    let logger: Logger = {
        var logger = Logger(label: "scale-shape-test")
        logger.logLevel = .error
        return logger
    }()

    /// Each row of `table` whose `column` is `value`, as a JSON object without the bookkeeping times.
    func rows(_ table: String, _ column: String, _ value: String, client: PostgresClient) async throws -> [[String:
        Any]]
    {
        var rows: [[String: Any]] = []
        let query = PostgresQuery(
            unsafeSQL: "SELECT to_jsonb(t)::text FROM \(table) t WHERE \(column) = $1 ORDER BY 1",
            binds: {
                var binds = PostgresBindings()
                binds.append(value)
                return binds
            }())
        for try await text in try await client.query(query, logger: self.logger).decode(String.self) {
            var row = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
            for time in ["updated_at", "applied_at", "received_at", "bound_at", "created_at", "published_at", "id"] {
                row.removeValue(forKey: time)
            }
            rows.append(row)
        }
        return rows
    }

    /// A row with the customer's name replaced, for comparing values.
    func normalized(_ row: [String: Any], _ name: String) -> [String: String] {
        row.compactMapValues { $0 is NSNull ? nil : "\($0)".replacingOccurrences(of: name, with: "X") }
    }

    @Test func generatedRowsHaveTheShapeOfTheRepositorysRows() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let repository = EntitlementRepository(client: client, logger: logger)
            for record in [
                VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "real-1", day: 0, expiresDay: 30),
                VerifiedRecords.step("DID_RENEW", original: "real-1", day: 30, expiresDay: 60),
            ] {
                _ = try await repository.apply(record, receivedAt: nil)
            }
            try await ScaleData.generate(
                customers: 1..<2, renewals: 1, start: VerifiedRecords.start, client: client, logger: logger)
            for (table, column) in [
                ("transactions", "original_transaction_id"), ("notification_log", "subject"),
                ("renewal_infos", "original_transaction_id"), ("subscriptions", "original_transaction_id"),
                ("entitlements", "original_transaction_id"),
            ] {
                let real = try await self.rows(table, column, "real-1", client: client).map {
                    self.normalized($0, "real-1")
                }
                let generated = try await self.rows(table, column, "scale-1", client: client).map {
                    self.normalized($0, "scale-1")
                }
                #expect(
                    real.count == generated.count, "\(table): \(real.count) rows written, \(generated.count) generated")
                for (written, made) in zip(real, generated) {
                    #expect(
                        written == made,
                        "\(table): written \(written.sorted { $0.key < $1.key }), generated \(made.sorted { $0.key < $1.key })"
                    )
                }
            }
            // The generated event (customer 4: one in four has last week's event) has an event's required fields.
            try await ScaleData.generate(
                customers: 4..<5, renewals: 1, start: VerifiedRecords.start, client: client, logger: logger)
            var payload: [String: Any] = [:]
            for try await text in try await client.query(
                "SELECT payload::text FROM outbox WHERE key LIKE '%scale-4'", logger: logger
            ).decode(String.self) {
                payload = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
            }
            let required = [
                "eventId", "eventType", "schemaVersion", "occurredAt", "stream", "subject", "customer", "productId",
                "cause",
                "environment", "bundleId", "store", "outOfOrder",
            ]
            #expect(required.allSatisfy { payload[$0] != nil }, "missing: \(required.filter { payload[$0] == nil })")
        }
    }
}
