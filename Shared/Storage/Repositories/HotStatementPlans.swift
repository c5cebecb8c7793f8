import Foundation
public import Logging
import PipelineRecords
public import PostgresNIO

/// The query plans of the hot statements (the customer look-up, the updater's log-and-state read, the renewal
/// sweep, the support console's customer search, consumption requests and dead letters), as PostgreSQL would run
/// them now: the scale benchmark prints them at size to show each is served by an index, not a scan.
public enum HotStatementPlans {
    /// Each statement's name and its `EXPLAIN` lines, for a look-up of `customer` (an originalTransactionId) and a
    /// notification of subject `customer`, in Sandbox of `bundleId`.
    public static func explain(customer: String, bundleId: String, client: PostgresClient, logger: Logger) async throws
        -> [(name: String, plan: [String])]
    {
        let lookup = CustomerViewStatement(
            bundleId: bundleId, customer: customer, kind: .originalTransactionId, environment: "Sandbox", asOf: 0)
        let entries = """
            [{"id":"plan-probe","type":"DID_RENEW","subtype":null,"subject":"\(customer)","environment":"Sandbox",\
            "bundle_id":"\(bundleId)","signed_date":0,"received_at":null}]
            """
        let states = SubjectRows.LogAndStatesStatement(entries: entries)
        let hourAgo = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        var plans: [(String, [String])] = []
        for (name, sql, bindings) in [
            ("customer look-up (customer-api)", CustomerViewStatement.sql, try lookup.makeBindings()),
            (
                "log and subject state (entitlement-updater)", SubjectRows.LogAndStatesStatement.sql,
                try states.makeBindings()
            ),
        ]
            + [
                (
                    "renewal sweep (entitlement-updater)",
                    RenewalSweep.statement(endedBefore: hourAgo, batch: 100, topics: PipelineTopics())
                ),
                ("console: customer search (customer-api)", SupportLookup.customerQuery(customer, bundleId: bundleId)),
                (
                    "console: consumption requests (customer-api)",
                    SupportLookup.consumptionQuery(bundleId: bundleId, customer: customer, subjects: [customer])
                ),
                (
                    "console: dead letters (customer-api)",
                    DeadLetters.rowsQuery(bundleId: bundleId, subjects: [customer], limit: 100)
                ),
            ].map { ($0.0, $0.1.sql, $0.1.binds) }
        {
            var lines: [String] = []
            // EXPLAIN without ANALYZE plans the statement and runs nothing (the log insert included).
            for try await line in try await client.query(
                PostgresQuery(unsafeSQL: "EXPLAIN " + sql, binds: bindings), logger: logger
            ).decode(String.self) {
                lines.append(line)
            }
            plans.append((name, lines))
        }
        return plans
    }
}
