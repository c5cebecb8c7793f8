import Logging
import PostgresNIO

/// Version 12: consumption requests by subscription. The support console asks for a customer's requests "by
/// customer or by any of their subscriptions"; with only the customer index, PostgreSQL had to read every request
/// of the app for the second branch (the scale benchmark's plan showed it). With this one, each branch is an index
/// scan.
struct ConsumptionRequestsBySubscriptionMigration: SQLStatementsMigration {
    let version = 12
    let name = "consumption requests by subscription"

    static let statements = [
        "CREATE INDEX consumption_requests_subscription ON consumption_requests (bundle_id, original_transaction_id)"
    ]
}
