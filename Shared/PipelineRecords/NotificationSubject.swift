public import AppStoreModels

/// The Kafka key that keeps one subscription's notifications in order: the `originalTransactionId`, or,
/// for notifications without a transaction, the bundle id plus the identifier of what they are about.
public enum NotificationSubject {
    /// The subject of a notification whose nested transaction (if any) is already decoded.
    ///
    /// - `data` with a transaction: `originalTransactionId` (from the nested transaction payload).
    /// - `summary`: `bundleId:requestIdentifier`; `externalPurchaseToken`: `bundleId:externalPurchaseId`;
    ///   `appData` and anything else (a TEST notification): `bundleId:notificationUUID`.
    public static func of(_ payload: ResponseBodyV2DecodedPayload, transaction: JWSTransactionDecodedPayload?) -> String
    {
        if let original = transaction?.originalTransactionId, !original.isEmpty { return original }
        let bundle = payload.bundleId ?? "unknown-app"
        if let request = payload.summary?.requestIdentifier { return "\(bundle):\(request)" }
        if let token = payload.externalPurchaseToken?.externalPurchaseId { return "\(bundle):\(token)" }
        return "\(bundle):\(payload.notificationUUID ?? "unknown")"
    }
}
