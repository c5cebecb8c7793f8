import SwiftASN1
import X509

/// The App Store rules on top of RFC 5280: a chain of exactly leaf → intermediate → root, where the leaf
/// carries Apple's receipt-signing marker and the intermediate Apple's WWDR intermediate marker; or one part of
/// such a chain whose other part was validated before (``Shape``).
struct AppleMarkerOIDPolicy: VerifierPolicy {
    /// Which part of an App Store chain is validated.
    enum Shape: Sendable {
        /// Leaf → intermediate → configured root.
        case full
        /// Leaf → an intermediate validated before (``KnownIssuers``), which anchors it.
        case leafUnderKnownIssuer
        /// Intermediate → configured root (warming ``KnownIssuers`` at start).
        case intermediate
    }

    var shape: Shape = .full

    /// 1.2.840.113635.100.6.11.1: Mac App Store and iTunes Store receipt signing (the leaf).
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// 1.2.840.113635.100.6.2.1: Apple Worldwide Developer Relations intermediate.
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// The markers are enforced here, so a chain that marks them critical is still understood.
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.leafMarker, Self.intermediateMarker]

    /// Accepts only chains of the shape's length with its markers in place.
    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let (count, leaf, intermediate): (Int, Int?, Int?) =
            switch self.shape {
            case .full: (3, 0, 1)
            case .leafUnderKnownIssuer: (2, 0, 1)
            case .intermediate: (2, nil, 0)
            }
        guard chain.count == count else {
            return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, App Store chains have 3")
        }
        if let leaf, chain[leaf].extensions[oid: Self.leafMarker] == nil {
            return .failsToMeetPolicy(
                reason: "the leaf lacks Apple's receipt-signing marker OID 1.2.840.113635.100.6.11.1")
        }
        if let intermediate, chain[intermediate].extensions[oid: Self.intermediateMarker] == nil {
            return .failsToMeetPolicy(reason: "the intermediate lacks Apple's marker OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}
