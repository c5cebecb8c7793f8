import AppStoreModels
import Foundation

/// Who a subscription belongs to in downstream events.
public enum CustomerKey {
    /// The `appAccountToken` when it is a valid UUID other than all zeros (apps send null, junk and
    /// `00000000-…`), lowercased, else the `originalTransactionId`.
    public static func of(transaction: JWSTransactionDecodedPayload, renewalInfo: JWSRenewalInfoDecodedPayload?)
        -> String
    {
        for token in [transaction.appAccountToken, renewalInfo?.appAccountToken] {
            if let valid = Self.validToken(token) { return valid }
        }
        return transaction.originalTransactionId ?? "unknown"
    }

    /// A token as the customer key names it: a valid UUID other than all zeros, lowercased; nil otherwise.
    public static func validToken(_ token: String?) -> String? {
        guard let token, let uuid = UUID(uuidString: token),
            uuid != UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        else { return nil }
        return uuid.uuidString.lowercased()
    }
}
