import AppStoreModels
import Foundation

/// Who a subscription belongs to in downstream events.
public enum CustomerKey {
    /// The `appAccountToken` when it is a valid UUID other than all zeros (apps send null, junk and
    /// `00000000-…`), else the `originalTransactionId`.
    public static func of(transaction: JWSTransactionDecodedPayload, renewalInfo: JWSRenewalInfoDecodedPayload?) -> String {
        for token in [transaction.appAccountToken, renewalInfo?.appAccountToken] {
            if let token, let uuid = UUID(uuidString: token), uuid != UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) {
                return uuid.uuidString.lowercased()
            }
        }
        return transaction.originalTransactionId ?? "unknown"
    }
}
