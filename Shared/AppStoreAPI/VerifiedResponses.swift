public import AppStoreModels
public import JWSVerification

// MARK: - Answers after verification: every signed item decoded only once its JWS verified

/// A subscription's status with its verified newest transaction and renewal info.
public struct VerifiedSubscriptionStatus: Codable, Hashable, Sendable {
    public var subscriptionGroupIdentifier: String?
    /// The raw status (see ``AppStoreModels/Status``).
    public var status: Int32
    public var originalTransactionId: String
    public var transaction: JWSTransactionDecodedPayload
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    /// The signed strings exactly as Apple sent them, for audit.
    public var signedTransactionInfo: String
    public var signedRenewalInfo: String?

    public init(
        subscriptionGroupIdentifier: String?, status: Int32, originalTransactionId: String,
        transaction: JWSTransactionDecodedPayload,
        renewalInfo: JWSRenewalInfoDecodedPayload?, signedTransactionInfo: String, signedRenewalInfo: String?
    ) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

/// Get All Subscription Statuses, verified.
public struct VerifiedStatuses: Hashable, Sendable {
    /// The environment the answer came from (after any sandbox fallback).
    public var environment: Environment
    public var subscriptions: [VerifiedSubscriptionStatus]
}

/// A transaction from Get Transaction Info or History, verified.
public struct VerifiedTransaction: Hashable, Sendable {
    public var signed: String
    public var transaction: JWSTransactionDecodedPayload

    /// A transaction whose `signed` JWS was verified into `transaction`.
    public init(signed: String, transaction: JWSTransactionDecodedPayload) {
        self.signed = signed
        self.transaction = transaction
    }
}

/// A notification from Get Notification History, verified, with its delivery attempts.
public struct VerifiedHistoryNotification: Sendable {
    public var signedPayload: String
    public var notification: VerifiedNotification
    public var sendAttempts: [SendAttemptItem]
}
