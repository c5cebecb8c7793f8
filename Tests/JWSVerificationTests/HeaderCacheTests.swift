import AppStoreSigning
import Foundation
import TestSupport
import Testing

@testable import JWSVerification

/// The header cache: a header seen before gives the facts its decoding gave, a different header is decoded
/// for itself, what does not decode is never remembered, and the cache stays bounded.
@Suite struct HeaderCacheTests {
    let fixtures: SignedFixtures

    init() throws {
        self.fixtures = try SignedFixtures()
    }

    /// A JWS over `{}` with this header.
    func jws(_ header: AppStoreSigner.Header) throws -> String {
        try self.fixtures.signer.sign(payloadJSON: Array("{}".utf8), header: header)
    }

    @Test func aHeaderSeenBeforeGivesTheFactsItsDecodingGave() throws {
        let headers = HeaderCache<JWSHeaderFacts>(capacity: 8)
        let notification = try self.fixtures.signedNotification()
        let uncached = try UnverifiedJWS(notification)
        for _ in 0..<3 {
            let cached = try UnverifiedJWS(bytes: notification.utf8, headers: headers)
            #expect(cached.algorithm == "ES256" && cached.algorithm == uncached.algorithm)
            #expect(cached.certificateCount == 3 && cached.certificateCount == uncached.certificateCount)
            #expect(cached.payload == uncached.payload)
        }
        #expect(headers.count == 1, "decoded once, then found")
    }

    @Test func aDifferentHeaderIsDecodedForItselfInEitherOrder() throws {
        let headers = HeaderCache<JWSHeaderFacts>(capacity: 8)
        let x5c = self.fixtures.pki.x5c
        let cases: [(String, String?, Int?)] = [
            (try self.jws(.init(x5c: x5c)), "ES256", 3),
            (try self.jws(.init(alg: "HS256", x5c: x5c)), "HS256", 3),
            (try self.jws(.init(x5c: Array(x5c.prefix(2)))), "ES256", 2),
            (try self.jws(.init(alg: nil, x5c: nil)), nil, nil),
        ]
        for (text, algorithm, count) in cases + cases.reversed() {
            let jws = try UnverifiedJWS(bytes: text.utf8, headers: headers)
            #expect(jws.algorithm == algorithm)
            #expect(jws.certificateCount == count)
        }
        #expect(headers.count == 4)
    }

    @Test func aHeaderThatDoesNotDecodeIsRefusedEveryTimeAndNotRemembered() throws {
        let headers = HeaderCache<JWSHeaderFacts>(capacity: 8)
        let parts = try self.fixtures.signedNotification().split(separator: ".")
        let notJSON = [AppStoreSigner.base64URL(Array("[1,2]".utf8)), String(parts[1]), String(parts[2])].joined(
            separator: ".")
        for _ in 0..<2 {
            #expect(throws: VerificationError.self) { try UnverifiedJWS(bytes: notJSON.utf8, headers: headers) }
        }
        #expect(headers.count == 0)
    }

    @Test func theCacheIsBoundedAndForgetsTheOldestFirst() throws {
        let headers = HeaderCache<Int>(capacity: 2)
        let keys = (0..<3).map { Array("header-\($0)".utf8)[...] }
        for (index, key) in keys.enumerated() { headers.insert(index, forHeader: key) }
        #expect(headers.count == 2)
        #expect(headers.value(forHeader: keys[0]) == nil)
        #expect(headers.value(forHeader: keys[1]) == 1)
        #expect(headers.value(forHeader: keys[2]) == 2)
    }
}
