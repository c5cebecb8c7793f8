import Foundation
import Logging
import PostgresNIO
import Storage
import TestSupport
import Testing

/// What retention-messaging's rules see of a subscription, read in one pass over its transactions in a real
/// PostgreSQL, is what the seven sub-selects it replaced read: for every stored life cycle (with promotional offers,
/// repeated and not, and app account tokens on some transactions), for one with no subscription row, and for one
/// nothing is stored about; with and without the request's reservation.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct RetentionFactsTests {
    let logger: Logger = {
        var logger = Logger(label: "retention-facts-test")
        logger.logLevel = .error
        return logger
    }()

    @Test func theOnePassSubjectIsWhatTheSubSelectsRead() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            try await storeLifeCycles(40, client: client, logger: logger)
            // Offers and tokens on some transactions, so every column has something to find.
            try await client.query(
                """
                UPDATE transactions SET offer_type = 2, offer_identifier = 'OFFER_' || (length(transaction_id) % 2)
                WHERE abs(hashtext(transaction_id)) % 3 = 0
                """, logger: logger)
            // A subscription's transactions carry one token (either statement takes any of them).
            try await client.query(
                """
                UPDATE transactions SET app_account_token = md5(original_transaction_id)
                WHERE right(original_transaction_id, 1) IN ('2', '5')
                """, logger: logger)
            try await client.query(
                "DELETE FROM subscriptions WHERE original_transaction_id = 's-3'", logger: logger)
            let offered = try await Self.count("SELECT count(*) FROM transactions WHERE offer_type = 2", client, logger)
            let tokens = try await Self.count(
                "SELECT count(*) FROM transactions WHERE app_account_token IS NOT NULL", client, logger)
            #expect(offered > 0 && tokens > 0, "the data has offers (\(offered)) and tokens (\(tokens))")

            let facts = RetentionFacts(client: client, logger: logger)
            var known = 0
            for id in (0..<40).map({ "s-\($0)" }) + ["nobody"] {
                let subject = try await facts.subject(
                    environment: "Sandbox", bundleId: "com.example.app", originalTransactionId: id)
                let reference = try await Self.subSelects(id, client, logger)
                #expect(subject == reference, "\(id)")
                let key = RealtimeAnswers.Key(
                    environment: "Sandbox", bundleId: "com.example.app", requestIdentifier: "request-\(id)")
                let (reserving, reservation) = try await facts.subject(
                    originalTransactionId: id, reserving: key, seenAt: Date())
                #expect(reserving == reference && reservation == .new, "\(id), reserving")
                if subject.known { known += 1 }
            }
            #expect(known == 40, "every stored life cycle is known, the unknown one is not")
        }
    }

    // MARK: The reference

    /// The subject as the statement read it before (2026-11-28): a CTE of the transactions and one sub-select a
    /// column.
    static func subSelects(_ original: String, _ client: PostgresClient, _ logger: Logger) async throws
        -> RetentionSubject
    {
        let rows = try await client.query(
            """
            WITH t AS (
                SELECT transaction_id, product_id, purchase_date, original_purchase_date, offer_type, offer_identifier,
                       app_account_token
                FROM transactions
                WHERE environment = 'Sandbox' AND bundle_id = 'com.example.app' AND original_transaction_id = \(original)
            ), s AS (
                SELECT product_id, status FROM subscriptions
                WHERE environment = 'Sandbox' AND bundle_id = 'com.example.app' AND original_transaction_id = \(original)
            )
            SELECT
                EXISTS (SELECT 1 FROM s) OR EXISTS (SELECT 1 FROM t),
                COALESCE((SELECT product_id FROM s),
                         (SELECT product_id FROM t ORDER BY purchase_date DESC NULLS LAST LIMIT 1)),
                (SELECT status FROM s),
                (SELECT min(COALESCE(original_purchase_date, purchase_date)) FROM t),
                COALESCE((SELECT json_agg(DISTINCT offer_identifier ORDER BY offer_identifier) FROM t
                          WHERE offer_type = 2 AND offer_identifier IS NOT NULL), '[]')::text,
                (SELECT transaction_id FROM t ORDER BY purchase_date DESC NULLS LAST, transaction_id DESC LIMIT 1),
                (SELECT app_account_token FROM t WHERE app_account_token IS NOT NULL LIMIT 1)
            """, logger: logger)
        for try await (known, product, status, first, offers, newest, token) in rows.decode(
            (Bool, String?, Int32?, Int64?, String, String?, String?).self)
        {
            return RetentionSubject(
                known: known, productId: product, status: status, firstPurchaseDate: first,
                redeemedPromotionalOffers: try JSONDecoder().decode([String].self, from: Data(offers.utf8)),
                newestTransactionId: newest, appAccountToken: token)
        }
        throw StorageError("the reference returned no row")
    }

    static func count(_ sql: String, _ client: PostgresClient, _ logger: Logger) async throws -> Int {
        for try await count in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int.self) {
            return count
        }
        return 0
    }
}
