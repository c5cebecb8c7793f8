import AppStoreModels
import Foundation

// MARK: - The support side of a scenario: open refund requests and order ids

extension Scenario {
    /// Refund requests customers have just made: for a `share` of the purchases whose newest transaction is not
    /// revoked, a CONSUMPTION_REQUEST about it signed minutes before `epoch` (so its 12-hour answer window is open
    /// while the run delivers it), with no refund decision yet. Seeded apart from the rest of the scenario, so
    /// turning it on changes nothing else.
    mutating func addOpenRefundRequests(share: Double, epoch: Int64, seed: UInt64) {
        guard share > 0 else { return }
        var random = SimRandom(seed: seed ^ 0xC0_45_0E_57)
        for original in self.purchases.keys.sorted() {
            let purchase = self.purchases[original]!
            // A subscription migrated to another is the new one's customer's too: one open request per customer.
            guard Double.random(in: 0..<1, using: &random) < share, var transaction = purchase.transactions.last,
                transaction.revocationDate == nil, purchase.migratedTo == nil
            else { continue }
            let at = epoch - Int64.random(in: 1...50, using: &random) * 60_000
            transaction.signedDate = Timestamp(millisecondsSince1970: at)
            var renewal = purchase.renewal
            renewal?.signedDate = Timestamp(millisecondsSince1970: at)
            self.notifications.append(
                SimNotification(
                    uuid: ScenarioGenerator.uuid("open-refund-request-\(original)", Int(at % 1_000_000)),
                    type: "CONSUMPTION_REQUEST", subtype: nil,
                    signedDate: at, transaction: transaction, renewal: renewal, status: purchase.status,
                    customer: purchase.customer,
                    environment: purchase.environment))
            self.openRefundRequests.append(transaction.transactionId!)
        }
        self.notifications.sort { ($0.signedDate, $0.uuid) < ($1.signedDate, $1.uuid) }
    }
}

/// Order ids as the customer's emailed receipt shows them: one per transaction (each purchase and each renewal
/// is billed, and mailed, on its own), ten characters starting with `M`, stable for a transaction id.
@_spi(Testing) public enum SimOrders {
    private static let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")

    /// The order id of a transaction.
    @_spi(Testing) public static func orderId(for transactionId: String) -> String {
        var hash = StableHash()
        hash.add("order-" + transactionId)
        var value = hash.value
        var id = "M"
        for _ in 0..<9 {
            id.append(Self.alphabet[Int(value % UInt64(Self.alphabet.count))])
            value /= UInt64(Self.alphabet.count)
        }
        return id
    }
}
