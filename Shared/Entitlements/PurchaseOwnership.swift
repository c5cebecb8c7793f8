public import AppStoreModels
import Crypto
import Foundation
public import PipelineRecords

/// Who may claim a purchase for an app user. Possession of a transaction id, a receipt or an old signed
/// transaction proves that a purchase exists, never that it belongs to the caller; a purchase belongs to:
///
/// 1. the app user it is bound to (`customer_bindings`), else
/// 2. the appAccountToken Apple signed into it; the app user the app team declared for that token may claim it,
///    nobody else, else
/// 3. nobody yet: only a claim with fresh proof from the buyer's device (or an operator's word) binds it, since
///    transaction ids and receipts are not secret.
///
/// Moving a purchase that belongs to another customer needs a ``TransferProof`` and the `transfer` policy.
/// customer-api decides with this before it publishes (409 `owned-by-another-customer`), and the
/// entitlement-updater decides again under the subject's lock (two posts racing), so both agree by construction.
public enum PurchaseOwnership {
    /// What the stored facts say about a purchase's owner.
    public struct Owner: Hashable, Sendable {
        /// The app user the purchase is bound to.
        public var boundTo: String?
        /// The appAccountToken of the purchase (lowercased), from the claimed transaction or any stored one.
        public var accountToken: String?
        /// The app user the app team declared for ``accountToken``.
        public var tokenDeclaredTo: String?

        public init(boundTo: String? = nil, accountToken: String? = nil, tokenDeclaredTo: String? = nil) {
            self.boundTo = boundTo
            self.accountToken = accountToken
            self.tokenDeclaredTo = tokenDeclaredTo
        }

        /// The customer the purchase belongs to now, if anyone: its app user, else its token's declared app user,
        /// else its token.
        public var current: String? { self.boundTo ?? self.tokenDeclaredTo ?? self.accountToken }
    }

    /// What a claim does.
    public enum Decision: Hashable, Sendable {
        /// It is the claimant's already (bound to it): nothing changes.
        case alreadyOwned
        /// Bind it to the claimant: nobody owned it, or the claimant owns its token.
        case bind
        /// Move it from `from` to the claimant, on the strength of `proof`.
        case transfer(from: String, proof: TransferProof)
        /// Refused: it belongs to `owner`.
        case refuse(owner: String)
        /// Refused: nobody owns it yet and nothing tokens it, so only proof from the buyer's device binds it (a
        /// transaction id, a receipt or an old signed transaction is possession, not ownership).
        case needsProof
    }

    /// Decides a claim of `claimant` on a purchase whose owner is `owner`; `proof` counts only when it holds for the
    /// claimed transaction (the caller checks that, and its freshness where it can).
    public static func decide(
        claimant: String, owner: Owner, policy: AppPurchaseRecord.ConflictPolicy, proof: TransferProof?
    ) -> Decision {
        if owner.boundTo == claimant { return .alreadyOwned }
        if owner.boundTo == nil {
            if owner.accountToken == nil { return proof == nil ? .needsProof : .bind }
            if owner.tokenDeclaredTo == claimant { return .bind }
        }
        let current = owner.current ?? ""
        if policy == .transfer, let proof { return .transfer(from: current, proof: proof) }
        return .refuse(owner: current)
    }

    /// The appAccountToken a transaction carries, lowercased, when it is a valid UUID other than all zeros.
    public static func accountToken(of transaction: JWSTransactionDecodedPayload) -> String? {
        CustomerKey.validToken(transaction.appAccountToken)
    }
}

// MARK: - Proofs

extension TransferProof {
    /// Whether `verificationId` (the device's `AppStore.deviceVerificationID`) proves that `transaction` was
    /// handed to that device: base64 SHA-384 of the lowercased nonce followed by the lowercased id equals the
    /// transaction's `deviceVerification`.
    public static func deviceVerifies(_ transaction: JWSTransactionDecodedPayload, verificationId: String) -> Bool {
        guard let expected = transaction.deviceVerification.flatMap({ Data(base64Encoded: $0) }),
            let nonce = transaction.deviceVerificationNonce.flatMap(UUID.init(uuidString:)),
            let device = UUID(uuidString: verificationId)
        else { return false }
        let digest = SHA384.hash(data: Data((nonce.uuidString.lowercased() + device.uuidString.lowercased()).utf8))
        return Data(digest) == expected
    }

    /// Whether the proof holds for the transaction it came with: a device proof is checked again; an app
    /// transaction's must name the transaction's own `appTransactionId` (customer-api checked its signature, hash and
    /// age); an admin proof names its operator.
    public func holds(for transaction: JWSTransactionDecodedPayload) -> Bool {
        switch self {
        case .device(let id): Self.deviceVerifies(transaction, verificationId: id)
        case .appTransaction(_, let appTransactionId):
            !appTransactionId.isEmpty && transaction.appTransactionId == appTransactionId
        case .admin(let name): !name.isEmpty
        }
    }
}
