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

/// The decoded JSON of each JWS nested in a verified notification, byte for byte as Apple signed it (the
/// base64url payload segment, decoded). Each is the JSON the matching value of ``VerifiedNotification`` was
/// decoded from, so decoding it again gives that value; nil where the notification has no such part.
public struct VerifiedNestedJSON: Hashable, Sendable {
    /// The JSON of `data.signedTransactionInfo`.
    public var transaction: [UInt8]?
    /// The JSON of `data.signedRenewalInfo`.
    public var renewalInfo: [UInt8]?
    /// The JSON of `appData.signedAppTransactionInfo`.
    public var appTransaction: [UInt8]?

    /// Creates a set of nested JSON texts.
    public init(transaction: [UInt8]? = nil, renewalInfo: [UInt8]? = nil, appTransaction: [UInt8]? = nil) {
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
    }
}
