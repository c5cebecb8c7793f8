public import AppStoreModels

/// A decoded App Store payload type that a ``SignedDataVerifier`` can verify.
public protocol SignedPayload: Decodable, Sendable {
    /// A short name for errors ("notification", "transaction", …).
    static var kindName: String { get }
    /// The instant the App Store signed the payload, used as the default validation time.
    var signingTime: Timestamp? { get }
}

extension ResponseBodyV2DecodedPayload: SignedPayload {
    public static var kindName: String { "notification" }
    public var signingTime: Timestamp? { self.signedDate }
}

extension JWSTransactionDecodedPayload: SignedPayload {
    public static var kindName: String { "transaction" }
    public var signingTime: Timestamp? { self.signedDate }
}

extension JWSRenewalInfoDecodedPayload: SignedPayload {
    public static var kindName: String { "renewal info" }
    public var signingTime: Timestamp? { self.signedDate }
}

extension AppTransaction: SignedPayload {
    public static var kindName: String { "app transaction" }
    /// App transactions carry no `signedDate`; Apple's libraries use `receiptCreationDate` instead.
    public var signingTime: Timestamp? { self.receiptCreationDate }
}
