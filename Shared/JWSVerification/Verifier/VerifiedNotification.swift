public import AppStoreModels

/// A notification whose outer JWS and every nested JWS passed verification, decoded.
public struct VerifiedNotification: Codable, Hashable, Sendable {
    /// The original signed payload, exactly as received.
    public var signedPayload: String
    /// The decoded outer payload (nested JWS still present as signed strings).
    public var payload: ResponseBodyV2DecodedPayload
    /// `data.signedTransactionInfo`, verified and decoded.
    public var transaction: JWSTransactionDecodedPayload?
    /// `data.signedRenewalInfo`, verified and decoded.
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    /// `appData.signedAppTransactionInfo`, verified and decoded.
    public var appTransaction: AppTransaction?

    /// Creates a verified notification from its verified parts.
    public init(
        signedPayload: String,
        payload: ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload? = nil,
        renewalInfo: JWSRenewalInfoDecodedPayload? = nil,
        appTransaction: AppTransaction? = nil
    ) {
        self.signedPayload = signedPayload
        self.payload = payload
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
    }
}
