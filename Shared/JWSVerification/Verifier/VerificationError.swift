/// Why a signed App Store payload was refused.
///
/// Every kind but ``Kind/retryable`` is permanent: the same input will always be refused, so it belongs in
/// a dead-letter queue. A retryable failure says nothing about the input and must be tried again later.
public struct VerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// Not a compact JWS, an undecodable header or payload, a wrong `alg`, or an inconsistent payload.
        case format
        /// An `x5c` that does not hold the expected number of DER certificates with a usable key.
        case certificate
        /// The chain does not lead to a configured root under the App Store rules at the validation time.
        case chain
        /// The signature does not verify with the leaf certificate's key.
        case signature
        /// The bundle identifier or App Store app identifier is not a configured app's.
        case appIdentifier = "app identifier"
        /// The payload's environment is not the one this verifier serves.
        case environment
        /// A check that depends on something outside the input (an online revocation check) could not run.
        case retryable
    }

    /// The class of failure.
    public var kind: Kind
    /// What exactly was wrong, for logs, DLQ records and `iapctl`.
    public var detail: String

    /// Creates an error of a kind with a human-readable detail.
    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// Whether trying again later may succeed; false for every failure caused by the input itself.
    public var isRetryable: Bool { self.kind == .retryable }

    /// `<kind>: <detail>`, the form `iapctl verify` prints after `invalid: `.
    public var description: String { "\(self.kind.rawValue): \(self.detail)" }

    /// The same error with the location of a nested JWS put in front of the detail.
    func nested(in field: String) -> VerificationError {
        VerificationError(self.kind, "\(field): \(self.detail)")
    }
}
