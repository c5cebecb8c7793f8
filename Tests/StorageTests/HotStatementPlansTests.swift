import Logging
import PostgresNIO
import Storage
import TestSupport
import Testing

/// The plans the scale benchmark prints come from the statements the services run: on a migrated database every
/// hot statement plans (its SQL and bindings are valid as they stand), and the ones keyed by a subject reach its
/// table through an index even with nothing in it to scan.
@Suite(.tags(.integration), .notInUnitRuns) struct HotStatementPlansTests {
    @Test func everyHotStatementPlans() async throws {
        let logger = {
            var logger = Logger(label: "plans-test")
            logger.logLevel = .error
            return logger
        }()
        try await withMigratedDatabase(logger: logger) { client, _ in
            let plans = try await HotStatementPlans.explain(
                customer: "1000000001", bundleId: "com.example.app", client: client, logger: logger)
            #expect(
                plans.map(\.name) == [
                    "customer look-up (customer-api)", "log and subject state (entitlement-updater)",
                    "renewal sweep (entitlement-updater)", "console: customer search (customer-api)",
                    "console: consumption requests (customer-api)", "console: dead letters (customer-api)",
                ])
            for (name, plan) in plans {
                #expect(!plan.isEmpty, "\(name) has a plan")
            }
            let search = plans.first { $0.name.hasPrefix("console: customer search") }?.plan ?? []
            #expect(search.contains { $0.contains("transactions_pkey") || $0.contains("Index") }, "\(search)")
        }
    }
}
