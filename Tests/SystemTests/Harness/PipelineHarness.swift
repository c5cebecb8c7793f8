@_spi(Testing) import AppStoreSimKit
import Foundation
import Logging
import PostgresNIO
import Storage
import TestSupport

/// The end state of a pipeline run (its services run as processes, ``ServiceFleet``) against the sim's expectations.
public enum PipelineHarness {
    /// The entitlements stored, as the sim states expectations.
    public static func storedEntitlements(client: PostgresClient, logger: Logger) async throws -> Set<String> {
        var rows = Set<String>()
        let query = try await client.query(
            "SELECT environment, customer, product_id, active, revoked_at IS NOT NULL FROM entitlements", logger: logger
        )
        for try await (environment, customer, product, active, revoked) in query.decode(
            (String, String, String, Bool, Bool).self)
        {
            rows.insert("\(environment) \(customer) \(product) active=\(active) revoked=\(revoked)")
        }
        return rows
    }

    /// The sim's expectations in the same form.
    public static func expected(_ sim: SimHarness) -> Set<String> {
        Set(
            sim.simulator.scenario.expected.map {
                "\($0.environment) \($0.customer) \($0.productId) active=\($0.active) revoked=\($0.revoked)"
            })
    }

    /// Polls the database until it holds exactly the sim's expected entitlements; returns the last difference.
    public static func waitForExpectedState(_ sim: SimHarness, databaseURL: String, timeout: Duration, logger: Logger)
        async throws -> (missing: Set<String>, extra: Set<String>)
    {
        let expected = Self.expected(sim)
        return try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger) { client in
            var difference: (missing: Set<String>, extra: Set<String>) = (expected, [])
            try await Polling.until(
                looks: Polling.looks(in: timeout, every: .milliseconds(500)), every: .milliseconds(500)
            ) {
                let stored = try await Self.storedEntitlements(client: client, logger: logger)
                difference = (expected.subtracting(stored), stored.subtracting(expected))
                return difference.missing.isEmpty && difference.extra.isEmpty
            }
            return difference
        }
    }
}
