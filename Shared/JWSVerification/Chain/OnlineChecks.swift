import Foundation
import Synchronization
import X509

/// Fetches one OCSP response: the verifier's only network access, supplied by the service (an HTTP POST of
/// `application/ocsp-request` to the responder the certificate names), so the library itself stays offline.
public protocol OCSPFetcher: Sendable {
    /// POSTs the DER request to `uri` and returns the DER response body; throws when no response came (network
    /// failure, timeout, an HTTP status other than 200).
    func fetch(request: [UInt8], from uri: String) async throws -> [UInt8]
}

/// Online revocation checks (Apple's libraries call them `enableOnlineChecks`): every chain is also checked
/// with the OCSP responder each certificate names (leaf and intermediate, hard failure), and a verified chain is
/// trusted for `cacheLifetime` before it is checked again. A revoked certificate is a permanent `chain` failure; a
/// responder that cannot answer (unreachable, timeout, `tryLater`, `internalError`, an unparsable answer) is a
/// ``VerificationError/Kind/retryable`` failure, never a verdict on the input.
public struct OnlineChecks: Sendable {
    /// The HTTP side.
    public var fetcher: any OCSPFetcher
    /// How long a verified chain's revocation status is trusted (Apple's libraries: 15 minutes).
    public var cacheLifetime: Duration

    public init(fetcher: any OCSPFetcher, cacheLifetime: Duration = .seconds(900)) {
        self.fetcher = fetcher
        self.cacheLifetime = cacheLifetime
    }
}

/// The requester swift-certificates' OCSP policy calls for one chain validation, remembering whether the responder
/// failed to answer, so a failed validation can be told retryable (no answer) from permanent (revoked, forged).
final class TrackingOCSPRequester: OCSPRequester {
    private let fetcher: any OCSPFetcher
    private let troubles = Mutex<[String]>([])

    init(fetcher: any OCSPFetcher) {
        self.fetcher = fetcher
    }

    /// What went wrong reaching the responders during this validation (empty: every responder answered).
    var responderTroubles: [String] { self.troubles.withLock { $0 } }

    func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        do {
            let response = try await self.fetcher.fetch(request: request, from: uri)
            if let trouble = OCSPResponseStatusPeek.trouble(in: response) {
                self.troubles.withLock { $0.append("\(uri): \(trouble)") }
            }
            return .response(response)
        } catch {
            self.troubles.withLock { $0.append("\(uri): \(error)") }
            return .terminalError(error)
        }
    }
}
