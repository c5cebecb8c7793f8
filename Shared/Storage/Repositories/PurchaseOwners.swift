public import Entitlements
public import Logging
public import PostgresNIO

/// Reads who owns a purchase (``PurchaseOwnership/Owner``) within its environment and app: its binding, its
/// appAccountToken (the claimed transaction's, else the newest stored one's) and whom the app team declared that
/// token for. The entitlement-updater reads it under the subject's lock before it binds; customer-api reads it
/// before it publishes a claim.
public enum PurchaseOwners {
    /// The owner of purchase `subject`; `claimedToken` is the token of the transaction being claimed, if valid.
    public static func owner(
        environment: String, bundleId: String, subject: String, claimedToken: String?,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> PurchaseOwnership.Owner {
        var owner = PurchaseOwnership.Owner()
        let rows = try await connection.query(
            """
            SELECT (SELECT app_user_id FROM customer_bindings
                    WHERE environment = \(environment) AND bundle_id = \(bundleId) AND original_transaction_id = \(subject)),
                   ARRAY(SELECT app_account_token FROM transactions
                         WHERE environment = \(environment) AND bundle_id = \(bundleId) AND original_transaction_id = \(subject)
                           AND app_account_token IS NOT NULL
                         ORDER BY purchase_date DESC NULLS LAST LIMIT 5)
            """, logger: logger)
        for try await (bound, stored) in rows.decode((String?, [String]).self) {
            owner.boundTo = bound
            owner.accountToken = claimedToken ?? stored.lazy.compactMap(CustomerKey.validToken).first
        }
        guard let token = owner.accountToken else { return owner }
        let declared = try await connection.query(
            """
            SELECT app_user_id FROM account_token_owners
            WHERE environment = \(environment) AND bundle_id = \(bundleId) AND app_account_token = \(token)
            """, logger: logger)
        for try await user in declared.decode(String.self) { owner.tokenDeclaredTo = user }
        return owner
    }
}

/// The app team's declarations of which app user an appAccountToken belongs to (`account_token_owners`): the
/// explicit, authenticated call that lets that user claim the token's purchases. The first declaration wins; a
/// conflicting second one is refused.
public struct AccountTokenOwners: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// What a declaration did.
    public enum Declared: Hashable, Sendable {
        /// Recorded now.
        case created
        /// The token was declared for this app user before: nothing changed.
        case unchanged
        /// The token belongs to another app user: nothing changed.
        case conflict
    }

    /// Declares `token` (lowercased valid UUID) as `appUserId`'s in one environment and app, by API key `keyId`.
    /// (A declaration racing another commits first or finds the other's row: the statement's snapshot may miss a
    /// row committed while it waited, so an empty answer is asked once more.)
    public func declare(token: String, appUserId: String, environment: String, bundleId: String, keyId: String)
        async throws -> Declared
    {
        for _ in 0..<2 {
            if let declared = try await self.tryDeclare(
                token: token, appUserId: appUserId, environment: environment, bundleId: bundleId,
                keyId: keyId)
            {
                return declared
            }
        }
        return .conflict
    }

    /// One attempt: nil when the statement saw neither its own insert nor another's row.
    private func tryDeclare(token: String, appUserId: String, environment: String, bundleId: String, keyId: String)
        async throws -> Declared?
    {
        let rows = try await self.client.query(
            """
            WITH inserted AS (
                INSERT INTO account_token_owners (environment, bundle_id, app_account_token, app_user_id, declared_by_key)
                VALUES (\(environment), \(bundleId), \(token), \(appUserId), \(keyId))
                ON CONFLICT (environment, bundle_id, app_account_token) DO NOTHING
                RETURNING app_user_id
            )
            SELECT true, app_user_id FROM inserted
            UNION ALL
            SELECT false, app_user_id FROM account_token_owners
            WHERE environment = \(environment) AND bundle_id = \(bundleId) AND app_account_token = \(token)
            """, logger: self.logger)
        var result: Declared?
        for try await (created, owner) in rows.decode((Bool, String).self) {
            if created { return .created }
            result = owner == appUserId ? .unchanged : .conflict
        }
        return result
    }
}
