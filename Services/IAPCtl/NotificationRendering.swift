import AppStoreModels
import JWSVerification

/// Shows a verified notification as its payload with every nested JWS decoded beside its signed string:
/// `data.transactionInfo` beside `data.signedTransactionInfo`, `data.renewalInfo` beside
/// `data.signedRenewalInfo`, `appData.appTransactionInfo` beside `appData.signedAppTransactionInfo`.
enum NotificationRendering {
    /// The JSON shown for a verified notification.
    static func json(for notification: VerifiedNotification) -> JSONValue {
        // Decoded payloads are plain data; converting them cannot fail.
        var json = try! JSONValue(encoding: notification.payload)
        if let transaction = notification.transaction {
            json = json.setting(try! JSONValue(encoding: transaction), forKey: "transactionInfo", in: "data")
        }
        if let renewalInfo = notification.renewalInfo {
            json = json.setting(try! JSONValue(encoding: renewalInfo), forKey: "renewalInfo", in: "data")
        }
        if let appTransaction = notification.appTransaction {
            json = json.setting(try! JSONValue(encoding: appTransaction), forKey: "appTransactionInfo", in: "appData")
        }
        return json
    }
}
