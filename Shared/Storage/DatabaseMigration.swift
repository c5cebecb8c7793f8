public import Logging
public import PostgresNIO

/// One step of the schema, applied once, in order, in its own transaction.
public protocol DatabaseMigration: Sendable {
    /// Its position in the history; versions are 1, 2, 3… with no gaps.
    var version: Int { get }
    /// What it does, recorded beside the version.
    var name: String { get }
    /// Applies the step on a connection that is inside a transaction.
    func apply(on connection: PostgresConnection, logger: Logger) async throws
}

/// A migration that is a list of SQL statements, run in order.
protocol SQLStatementsMigration: DatabaseMigration {
    static var statements: [String] { get }
}

extension SQLStatementsMigration {
    func apply(on connection: PostgresConnection, logger: Logger) async throws {
        for statement in Self.statements {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }
}

/// Every migration of the product, in order.
public enum Migrations {
    public static let all: [any DatabaseMigration] = [
        InitialSchema(), SubjectOrdering(), EnvironmentAndAppIdentity(), CustomerAPIKeys(),
        CustomerBindingsMigration(), SupportMigration(), PurchaseOwnershipMigration(), OutboxTraceContextMigration(),
        WinBackOffersMigration(),
        SubscriptionMigrationsMigration(),
        PruningIndexesMigration(),
        ConsumptionRequestsBySubscriptionMigration(),
        OutboxPublicationsMigration(),
        ConsumptionFactsKindsMigration(),
        RealtimeAnswersMigration(),
        EventSequencesMigration(),
        WebhooksMigration(),
    ]
}
