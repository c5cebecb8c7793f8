import SwiftASN1
import X509

/// The App Store rules on top of RFC 5280: a chain of exactly leaf → intermediate → root, where the leaf
/// carries Apple's receipt-signing marker and the intermediate Apple's WWDR intermediate marker.
struct AppleMarkerOIDPolicy: VerifierPolicy {
    /// 1.2.840.113635.100.6.11.1: Mac App Store and iTunes Store receipt signing (the leaf).
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// 1.2.840.113635.100.6.2.1: Apple Worldwide Developer Relations intermediate.
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// The markers are enforced here, so a chain that marks them critical is still understood.
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.leafMarker, Self.intermediateMarker]

    /// Accepts only three-certificate chains with both markers in place.
    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, App Store chains have 3")
        }
        guard chain[0].extensions[oid: Self.leafMarker] != nil else {
            return .failsToMeetPolicy(
                reason: "the leaf lacks Apple's receipt-signing marker OID 1.2.840.113635.100.6.11.1")
        }
        guard chain[1].extensions[oid: Self.intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "the intermediate lacks Apple's marker OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}
