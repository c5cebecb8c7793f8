import EntitlementDecisions
import Entitlements
import Logging
import PipelineRecords
import PostgresNIO

/// The app user each purchase belongs to (`customer_bindings`, one row per environment, app and
/// originalTransactionId), written by the entitlement-updater only, and the move of a subject's rows when
/// its customer changes.
enum CustomerBindings {
    /// Binds the binding's subject to its app user, keeping who had it before and the proof it was made on
    /// (the planner decided the claim under the subject's lock, ``EntitlementPlanner``).
    static func bind(_ binding: WavePlan.Binding, on connection: PostgresConnection, logger: Logger) async throws {
        let entry = binding.entry
        try await connection.query(
            """
            INSERT INTO customer_bindings (environment, bundle_id, original_transaction_id, app_user_id, source, transfer_proof)
            VALUES (\(entry.environment), \(entry.bundleId), \(entry.subject), \(binding.appUserId), \(binding.source),
                    \(binding.proof?.recorded))
            ON CONFLICT (environment, bundle_id, original_transaction_id) DO UPDATE SET
                previous_app_user_id = customer_bindings.app_user_id, app_user_id = EXCLUDED.app_user_id, source = EXCLUDED.source,
                transfer_proof = EXCLUDED.transfer_proof, bound_at = now()
            """, logger: logger)
    }

    /// Moves the subject's entitlement rows and subscription view from `previous` (or any other customer) to
    /// `customer`, so one purchase is never active under two customers. The rows keep their `updated_at`: the
    /// subject's state is its newest row, and a move changes whose rows they are, not which is newest.
    static func moveRows(
        of entry: NotificationLogEntry, from previous: String, to customer: String,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            WITH moved AS (
                DELETE FROM entitlements
                WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId) AND original_transaction_id = \(entry.subject)
                  AND customer <> \(customer)
                RETURNING *
            ), view AS (
                UPDATE subscriptions SET customer = \(customer)
                WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId) AND original_transaction_id = \(entry.subject)
            )
            INSERT INTO entitlements (environment, bundle_id, customer, product_id, entitlement_id, active, original_transaction_id,
                                      source_transaction_id, ownership_type, valid_from, valid_until, revoked_at, revocation_reason,
                                      revocation_type, last_signed_date, updated_at)
            SELECT environment, bundle_id, \(customer), product_id, entitlement_id, active, original_transaction_id, source_transaction_id,
                   ownership_type, valid_from, valid_until, revoked_at, revocation_reason, revocation_type, last_signed_date, updated_at
            FROM moved
            ON CONFLICT (environment, bundle_id, customer, product_id) DO NOTHING
            """, logger: logger)
        logger.debug(
            "moved rows", metadata: ["subject": "\(entry.subject)", "from": "\(previous)", "to": "\(customer)"])
    }
}
