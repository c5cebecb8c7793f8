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

/// The JSON Apple signed, byte for byte, of each part of a verified notification (each JWS's base64url payload
/// segment, decoded). Each is the JSON the matching value of ``VerifiedNotification`` was decoded from, so
/// decoding it again gives that value; nil where the notification has no such part.
public struct VerifiedJSON: Hashable, Sendable {
    /// The JSON of the notification's own payload (`signedPayload`), nested JWS strings included.
    public var payload: [UInt8]?
    /// The JSON of `data.signedTransactionInfo`.
    public var transaction: [UInt8]?
    /// The JSON of `data.signedRenewalInfo`.
    public var renewalInfo: [UInt8]?
    /// The JSON of `appData.signedAppTransactionInfo`.
    public var appTransaction: [UInt8]?

    /// Creates a set of JSON texts.
    public init(
        payload: [UInt8]? = nil, transaction: [UInt8]? = nil, renewalInfo: [UInt8]? = nil,
        appTransaction: [UInt8]? = nil
    ) {
        self.payload = payload
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
    }
}
