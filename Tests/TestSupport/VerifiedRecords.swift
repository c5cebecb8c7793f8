public import AppStoreModels
public import JWSVerification
public import NotificationPipeline
import PipelineRecords

/// Verified-notification records for one subscription's life, as the chain verifier would publish them
/// (no signatures: they start after verification). Used by the entitlement tests and benchmark.
public enum VerifiedRecords {
    /// The start of every life cycle (2023-11-14T22:13:20Z).
    public static let start: Int64 = 1_700_000_000_000
    public static let day: Int64 = 86_400_000

    /// A notification about subscription (or purchase) `original`, signed on day `day` of its life.
    ///
    /// - Parameters:
    ///   - expiresDay: the transaction's expiry day (nil for products that do not expire).
    ///   - transactionDay: the day of the transaction it is about (a refund names an earlier one); default `day`.
    public static func step(
        _ type: String, _ subtype: String? = nil, original: String, day: Int64, expiresDay: Int64? = nil,
        product: ProductType = .autoRenewableSubscription, ownership: InAppOwnershipType = .purchased,
        status: Status? = nil,
        transactionDay: Int64? = nil
    ) -> VerifiedNotificationRecord {
        let signed = start + day * Self.day
        var payload = ResponseBodyV2DecodedPayload()
        payload.rawNotificationType = type
        payload.rawSubtype = subtype
        payload.notificationUUID = "\(original)-\(type)-\(subtype ?? "none")-\(day)"
        payload.signedDate = Timestamp(millisecondsSince1970: signed)
        var data = NotificationData()
        data.environment = .sandbox
        data.bundleId = "com.example.app"
        data.status = status
        payload.data = data
        let transactionDay = transactionDay ?? day
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "\(original)-t\(transactionDay)"
        transaction.originalTransactionId = original
        transaction.bundleId = "com.example.app"
        transaction.productId = "pro"
        transaction.type = product
        transaction.inAppOwnershipType = ownership
        transaction.environment = .sandbox
        transaction.signedDate = Timestamp(millisecondsSince1970: signed)
        transaction.purchaseDate = Timestamp(millisecondsSince1970: start + transactionDay * Self.day)
        if let expiresDay { transaction.expiresDate = Timestamp(millisecondsSince1970: start + expiresDay * Self.day) }
        if ["REFUND", "REVOKE"].contains(type) {
            transaction.revocationDate = payload.signedDate
            transaction.revocationReason = .refundedForOtherReason
        }
        var renewal = JWSRenewalInfoDecodedPayload()
        renewal.originalTransactionId = original
        renewal.gracePeriodExpiresDate = Timestamp(millisecondsSince1970: signed + 16 * Self.day)
        return VerifiedNotificationRecord(
            notification: VerifiedNotification(
                signedPayload: "jws-\(payload.notificationUUID!)", payload: payload, transaction: transaction,
                renewalInfo: renewal))
    }

    /// A subscription's life: purchase, five renewals, a grace period and recovery, then expiry (every
    /// third) or auto-renew turned off; a family-shared one (every seventh) is finally revoked.
    public static func lifeCycle(_ index: Int) -> [VerifiedNotificationRecord] {
        let original = "s-\(index)"
        let ownership: InAppOwnershipType = index % 7 == 0 ? .familyShared : .purchased
        var steps: [(String, String?, Int64, Int64)] = [("SUBSCRIBED", "INITIAL_BUY", 0, 30)]
        for month in 1...5 { steps.append(("DID_RENEW", nil, Int64(month) * 30, Int64(month + 1) * 30)) }
        steps.append(("DID_FAIL_TO_RENEW", "GRACE_PERIOD", 180, 180))
        steps.append(("DID_RENEW", "BILLING_RECOVERY", 185, 215))
        steps.append(
            index % 3 == 0
                ? ("EXPIRED", "VOLUNTARY", 215, 215) : ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", 200, 215))
        if ownership == .familyShared { steps.append(("REVOKE", nil, 220, 215)) }
        return steps.map { step($0.0, $0.1, original: original, day: $0.2, expiresDay: $0.3, ownership: ownership) }
    }
}
