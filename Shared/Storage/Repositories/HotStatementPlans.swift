public import Logging
public import PostgresNIO

/// The query plans of the hot statements (the customer look-up, the updater's log-and-state read), as PostgreSQL
/// would run them now: the scale benchmark prints them at size to show each is served by an index, not a scan.
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
        var plans: [(String, [String])] = []
        for (name, sql, bindings) in [
            ("customer look-up (customer-api)", CustomerViewStatement.sql, try lookup.makeBindings()),
            (
                "log and subject state (entitlement-updater)", SubjectRows.LogAndStatesStatement.sql,
                try states.makeBindings()
            ),
        ] {
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
