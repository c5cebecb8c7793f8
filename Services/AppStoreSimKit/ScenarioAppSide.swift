import AppStoreModels
import Foundation

// MARK: - The app's side of a scenario, and what the App Store loses

extension Scenario {
    /// The notifications whose loss the renewal-time sweep must make up for.
    static let losableTypes: Set<String> = ["DID_RENEW", "EXPIRED"]

    /// Makes a share of the customers without an appAccountToken (and not family members) post their purchase
    /// from the app, as app user `app-user-<originalTransactionId>`: their expected entitlements belong to that
    /// user, and for half of them the purchase notification is lost (the app's post stands instead of it).
    /// Then loses a share of the DID_RENEW and EXPIRED notifications for good. Seeded: a seed reproduces it.
    mutating func applyAppSide(appPostShare: Double, lostShare: Double, seed: UInt64) {
        guard appPostShare > 0 || lostShare > 0 else { return }
        var random = SimRandom(seed: seed ^ 0xA995_EED0)
        var lost: Set<String> = []
        for original in self.purchases.keys.sorted() {
            guard var purchase = self.purchases[original], purchase.customer == original, purchase.migratedTo == nil,
                purchase.productType != .consumable,
                let first = purchase.transactions.first, first.inAppOwnershipType != .familyShared,
                first.appAccountToken == nil,
                Double.random(in: 0..<1, using: &random) < appPostShare
            else { continue }
            let user = "app-user-" + original
            purchase.customer = user
            self.purchases[original] = purchase
            for index in self.expected.indices where self.expected[index].originalTransactionId == original {
                self.expected[index].customer = user
            }
            // The app posts right after buying: nothing is refunded yet.
            var posted = first
            posted.revocationDate = nil
            posted.rawRevocationReason = nil
            posted.rawRevocationType = nil
            posted.revocationPercentage = nil
            self.appPosts.append(
                AppPost(
                    appUserId: user, environment: purchase.environment, transaction: posted,
                    deviceVerificationId: ScenarioGenerator.uuid("device-" + original, 0).uppercased(),
                    signedAt: first.purchaseDate?.millisecondsSince1970 ?? 0))
            if Bool.random(using: &random),
                let purchaseNotification = self.notifications.first(where: {
                    $0.transaction?.transactionId == first.transactionId
                        && ["SUBSCRIBED", "ONE_TIME_CHARGE"].contains($0.type)
                })
            {
                lost.insert(purchaseNotification.uuid)
            }
        }
        for notification in self.notifications
        where Self.losableTypes.contains(notification.type) && Double.random(in: 0..<1, using: &random) < lostShare {
            lost.insert(notification.uuid)
        }
        self.lost = self.notifications.filter { lost.contains($0.uuid) }
        self.notifications.removeAll { lost.contains($0.uuid) }
        self.expected.sort()
    }
}
