import AppStoreModels
import AppStoreSigning
import Foundation
import JWSVerification
import Synchronization
import TestSupport
import Testing
import X509

/// Online revocation checks against the sim's OCSP responder (``TestOCSPResponder``, called without HTTP here; the
/// system test goes through the sim's HTTP route): a good chain verifies and is trusted for the cache's lifetime, a
/// revoked leaf or intermediate is a permanent `chain` failure, a responder that cannot answer is `retryable`, and
/// without online checks nothing is asked.
@Suite struct OnlineChecksTests {
    /// Answers as the sim's responder would, counting requests; `answer` and `reachable` can change between calls.
    final class Responder: OCSPFetcher {
        let responder: TestOCSPResponder
        let answer: Mutex<TestOCSPResponder.Answer> = Mutex(.statuses(revoked: []))
        let reachable = Mutex(true)
        let requests = Mutex<[String]>([])

        init(pki: TestPKI) { self.responder = TestOCSPResponder(pki: pki) }

        func fetch(request: [UInt8], from uri: String) async throws -> [UInt8] {
            self.requests.withLock { $0.append(uri) }
            guard self.reachable.withLock({ $0 }) else { throw URLError(.cannotConnectToHost) }
            return try self.responder.respond(to: request, answer: self.answer.withLock { $0 })
        }
    }

    static let responderURL = "http://ocsp.test.invalid/ocsp"

    /// Fixtures whose leaf and intermediate name the responder, and a responder for them.
    static func fixtures() throws -> (SignedFixtures, Responder) {
        var options = TestPKI.Options()
        options.ocspURL = Self.responderURL
        let fixtures = try SignedFixtures(options)
        return (fixtures, Responder(pki: fixtures.pki))
    }

    @Test func aGoodChainIsAskedOnceForLeafAndIntermediateAndThenCached() async throws {
        let (fixtures, responder) = try Self.fixtures()
        let verifier = try fixtures.verifier(onlineChecks: OnlineChecks(fetcher: responder))
        for _ in 0..<3 { _ = try await verifier.verifyNotification(fixtures.signedNotification()) }
        #expect(
            responder.requests.withLock { $0 } == [Self.responderURL, Self.responderURL], "leaf and intermediate, once")
    }

    @Test func aZeroLifetimeAsksForEveryChainValidation() async throws {
        let (fixtures, responder) = try Self.fixtures()
        let verifier = try fixtures.verifier(onlineChecks: OnlineChecks(fetcher: responder, cacheLifetime: .zero))
        for _ in 0..<3 { _ = try await verifier.verifyNotification(fixtures.signedNotification()) }
        #expect(
            responder.requests.withLock { $0.count } == 18, "3 notifications × 3 JWS (the nested two) × 2 certificates")
    }

    @Test(arguments: ["leaf", "intermediate"])
    func aRevokedCertificateIsAPermanentChainFailure(_ which: String) async throws {
        let (fixtures, responder) = try Self.fixtures()
        let serial = which == "leaf" ? fixtures.pki.leaf.serialNumber : fixtures.pki.intermediate.serialNumber
        responder.answer.withLock { $0 = .statuses(revoked: [serial]) }
        let verifier = try fixtures.verifier(onlineChecks: OnlineChecks(fetcher: responder))
        let error = try await #require(throws: VerificationError.self) {
            _ = try await verifier.verifyNotification(fixtures.signedNotification())
        }
        #expect(error.kind == .chain && !error.isRetryable)
        #expect(error.detail.contains("revoked"), "\(error)")
    }

    @Test func anUnreachableOrBusyResponderIsRetryableAndAnswersLaterVerify() async throws {
        let (fixtures, responder) = try Self.fixtures()
        let verifier = try fixtures.verifier(onlineChecks: OnlineChecks(fetcher: responder))
        responder.reachable.withLock { $0 = false }
        let unreachable = try await #require(throws: VerificationError.self) {
            _ = try await verifier.verifyNotification(fixtures.signedNotification())
        }
        #expect(unreachable.isRetryable, "\(unreachable)")
        responder.reachable.withLock { $0 = true }
        responder.answer.withLock { $0 = .tryLater }
        let busy = try await #require(throws: VerificationError.self) {
            _ = try await verifier.verifyNotification(fixtures.signedNotification())
        }
        #expect(busy.isRetryable && busy.detail.contains("tryLater"), "\(busy)")
        responder.answer.withLock { $0 = .statuses(revoked: []) }
        _ = try await verifier.verifyNotification(fixtures.signedNotification())
        #expect(verifier.cachedChainCount == 1, "only a cleared chain is cached")
    }

    @Test func aResponseSignedByAnotherKeyIsRefused() async throws {
        let (fixtures, _) = try Self.fixtures()
        // An impostor PKI's responder answers for certificates of the same names and serials it does not own.
        var options = TestPKI.Options()
        options.ocspURL = Self.responderURL
        let impostor = Responder(pki: try TestPKI(options))
        let verifier = try fixtures.verifier(onlineChecks: OnlineChecks(fetcher: impostor))
        let error = try await #require(throws: VerificationError.self) {
            _ = try await verifier.verifyNotification(fixtures.signedNotification())
        }
        #expect(!error.isRetryable, "a forged answer is no verdict to wait for: \(error)")
    }

    @Test func withoutOnlineChecksNothingIsAsked() async throws {
        let (fixtures, responder) = try Self.fixtures()
        _ = try await fixtures.verifier().verifyNotification(fixtures.signedNotification())
        #expect(responder.requests.withLock { $0.isEmpty })
    }
}
