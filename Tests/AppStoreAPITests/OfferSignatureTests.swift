import AppStoreAPI
import AppStoreModels
import Crypto
import Foundation
import JWSVerification
import TestSupport
import Testing

/// Offer signatures as StoreKit and the App Store check them: the key, every signed field, the nonce's form and the
/// time window; each alteration is refused with its reason.
@Suite struct OfferSignatureTests {
    static let key = OfferSigningKey(keyID: "OFFERKEY01", issuerID: "issuer-1", privateKey: .init())
    static let keys = [key.keyID: key.privateKey.publicKey]
    static let bundle = "com.example.app"

    // MARK: V1

    @Test func aV1SignatureVerifiesWithItsFieldsAndNothingElse() throws {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let signed = try PromotionalOfferSignatureV1.sign(
            bundleId: Self.bundle, productId: "pro.monthly", offerIdentifier: "COMEBACK",
            appAccountToken: "8E3A0D6C-1B1E-4C55-9C7A-2F1B0D4E5A61", key: Self.key, now: now)
        #expect(signed.appAccountToken == "8e3a0d6c-1b1e-4c55-9c7a-2f1b0d4e5a61")
        #expect(signed.nonce == signed.nonce.lowercased() && UUID(uuidString: signed.nonce) != nil)
        #expect(signed.timestamp == 1_790_000_000_000)
        let publicKey = Self.key.privateKey.publicKey
        try signed.verify(bundleId: Self.bundle, keyID: Self.key.keyID, publicKey: publicKey, now: now)
        try signed.verify(
            bundleId: Self.bundle, keyID: Self.key.keyID, publicKey: publicKey, now: now.addingTimeInterval(23 * 3600))

        var otherProduct = signed
        otherProduct.productId = "pro.yearly"
        var otherOffer = signed
        otherOffer.offerIdentifier = "OTHER"
        var otherToken = signed
        otherToken.appAccountToken = nil
        var otherNonce = signed
        otherNonce.nonce = UUID().uuidString.lowercased()
        for altered in [otherProduct, otherOffer, otherToken, otherNonce] {
            #expect(throws: OfferSignatureError("the signature does not verify")) {
                try altered.verify(bundleId: Self.bundle, keyID: Self.key.keyID, publicKey: publicKey, now: now)
            }
        }
        #expect(throws: OfferSignatureError("the signature does not verify")) {
            try signed.verify(bundleId: "com.other.app", keyID: Self.key.keyID, publicKey: publicKey, now: now)
        }
        #expect(throws: OfferSignatureError("the signature is older than 24 hours")) {
            try signed.verify(
                bundleId: Self.bundle, keyID: Self.key.keyID, publicKey: publicKey, now: now.addingTimeInterval(86_401))
        }
        #expect(throws: OfferSignatureError("unknown key OFFERKEY01")) {
            try signed.verify(bundleId: Self.bundle, keyID: "OTHERKEY", publicKey: publicKey, now: now)
        }
        #expect(throws: OfferSignatureError("the signature does not verify")) {
            try signed.verify(
                bundleId: Self.bundle, keyID: Self.key.keyID, publicKey: P256.Signing.PrivateKey().publicKey, now: now)
        }
    }

    // MARK: V2 and introductory eligibility

    @Test func aV2SignatureCarriesApplesClaimsAndIsRefusedWhenAltered() throws {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let jws = try OfferJWS.promotionalOffer(
            bundleId: Self.bundle, productId: "pro.monthly", offerIdentifier: "COMEBACK", transactionId: "2000000001",
            key: Self.key, now: now)
        let header = try #require(
            JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(jws.split(separator: ".")[0]))!))
                as? [String: String])
        #expect(header == ["alg": "ES256", "kid": "OFFERKEY01", "typ": "JWT"])
        let claims = try OfferJWS.verify(
            jws, audience: .promotionalOffer, bundleId: Self.bundle, issuerID: "issuer-1", keys: Self.keys, now: now)
        #expect(claims.productId == "pro.monthly" && claims.offerIdentifier == "COMEBACK")
        #expect(
            claims.transactionId == "2000000001" && claims.iat == 1_790_000_000 && claims.allowIntroductoryOffer == nil)

        #expect(throws: OfferSignatureError("aud must be introductory-offer-eligibility")) {
            try OfferJWS.verify(
                jws, audience: .introductoryOfferEligibility, bundleId: Self.bundle, issuerID: "issuer-1",
                keys: Self.keys, now: now)
        }
        #expect(throws: OfferSignatureError("signed for another app (com.example.app)")) {
            try OfferJWS.verify(
                jws, audience: .promotionalOffer, bundleId: "com.other.app", issuerID: "issuer-1", keys: Self.keys,
                now: now)
        }
        #expect(throws: OfferSignatureError("unknown issuer issuer-1")) {
            try OfferJWS.verify(
                jws, audience: .promotionalOffer, bundleId: Self.bundle, issuerID: "issuer-2", keys: Self.keys, now: now
            )
        }
        #expect(throws: OfferSignatureError("the signature is older than 24 hours")) {
            try OfferJWS.verify(
                jws, audience: .promotionalOffer, bundleId: Self.bundle, issuerID: "issuer-1", keys: Self.keys,
                now: now.addingTimeInterval(86_401))
        }
        let otherKey = ["OFFERKEY01": P256.Signing.PrivateKey().publicKey]
        #expect(throws: OfferSignatureError("the signature does not verify with key OFFERKEY01")) {
            try OfferJWS.verify(
                jws, audience: .promotionalOffer, bundleId: Self.bundle, issuerID: "issuer-1", keys: otherKey, now: now)
        }
        // A claim changed after signing (the product) no longer verifies.
        let parts = jws.split(separator: ".").map(String.init)
        var forged = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[1])!)) as! [String: Any]
        forged["productId"] = "pro.yearly"
        let forgedJWS =
            parts[0] + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: forged)) + "." + parts[2]
        #expect(throws: OfferSignatureError("the signature does not verify with key OFFERKEY01")) {
            try OfferJWS.verify(
                forgedJWS, audience: .promotionalOffer, bundleId: Self.bundle, issuerID: "issuer-1", keys: Self.keys,
                now: now)
        }
    }

    @Test func introductoryEligibilityNamesItsAnswerAndTransaction() throws {
        let jws = try OfferJWS.introductoryOfferEligibility(
            bundleId: Self.bundle, productId: "pro.monthly", allowIntroductoryOffer: false, transactionId: "2000000007",
            key: Self.key)
        let claims = try OfferJWS.verify(
            jws, audience: .introductoryOfferEligibility, bundleId: Self.bundle, issuerID: "issuer-1", keys: Self.keys)
        #expect(claims.allowIntroductoryOffer == false && claims.transactionId == "2000000007")
        #expect(claims.offerIdentifier == nil)
    }
}

/// Apple's own creators (app-store-server-library on PyPI) and ours make signatures each side accepts: ours verify as
/// Apple's format defines them (Python's `cryptography` and PyJWT), and Apple's verify with our checker.
@Suite(.tags(.integration), .notInUnitRuns) struct OfferSignatureConformanceTests {
    @Test func applesSignaturesAndOursVerifyEachOther() async throws {
        let directory = try LocalComponents.temporaryDirectory("offer-conformance")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = OfferSigningKey(keyID: "OFFERKEY01", issuerID: "issuer-1", privateKey: .init())
        let keyFile = directory.appending(path: "offer.p8")
        try Data(key.privateKey.pemRepresentation.utf8).write(to: keyFile)
        let bundle = "com.example.app", product = "pro.monthly", offer = "COMEBACK", transaction = "2000000001"
        let token = "8e3a0d6c-1b1e-4c55-9c7a-2f1b0d4e5a61"
        let now = Date()
        let ours: [String: Any] = [
            "v1": try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(
                    PromotionalOfferSignatureV1.sign(
                        bundleId: bundle, productId: product, offerIdentifier: offer, appAccountToken: token, key: key))
            ),
            "v2": try OfferJWS.promotionalOffer(
                bundleId: bundle, productId: product, offerIdentifier: offer, transactionId: transaction, key: key),
            "intro": try OfferJWS.introductoryOfferEligibility(
                bundleId: bundle, productId: product, allowIntroductoryOffer: true, transactionId: transaction, key: key
            ),
        ]
        let oursFile = directory.appending(path: "ours.json")
        try JSONSerialization.data(withJSONObject: ours).write(to: oursFile)
        let nonce = UUID()
        let timestamp = Int64(now.timeIntervalSince1970 * 1000)
        let result = try await Program.run(
            URL(fileURLWithPath: LocalComponents.toolsPython),
            [
                LocalComponents.repositoryRoot.appending(path: "Tests/Contract/apple_offer_signatures.py").path,
                "--key", keyFile.path, "--key-id", key.keyID, "--issuer-id", key.issuerID, "--bundle-id", bundle,
                "--product", product, "--offer", offer, "--transaction-id", transaction, "--app-account-token", token,
                "--nonce", nonce.uuidString, "--timestamp", String(timestamp), "--ours", oursFile.path,
            ])
        #expect(result.status == 0, "\(result.errors)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: [String: String]],
            "\(result.output)")
        #expect(report["checks"] == ["v1": "ok", "v2": "ok", "intro": "ok"])
        let apple = try #require(report["apple"])
        let keys = [key.keyID: key.privateKey.publicKey]
        let appleV1 = PromotionalOfferSignatureV1(
            encodedSignature: try #require(apple["v1"]), productId: product, nonce: nonce.uuidString.lowercased(),
            timestamp: timestamp, keyId: key.keyID, offerIdentifier: offer, appAccountToken: token)
        try appleV1.verify(bundleId: bundle, keyID: key.keyID, publicKey: key.privateKey.publicKey)
        let v2 = try OfferJWS.verify(
            try #require(apple["v2"]), audience: .promotionalOffer, bundleId: bundle, issuerID: key.issuerID,
            keys: keys)
        #expect(v2.productId == product && v2.offerIdentifier == offer && v2.transactionId == transaction)
        let intro = try OfferJWS.verify(
            try #require(apple["intro"]), audience: .introductoryOfferEligibility, bundleId: bundle,
            issuerID: key.issuerID, keys: keys)
        #expect(intro.allowIntroductoryOffer == true && intro.transactionId == transaction)
    }
}

/// The nonces signatures carry are fresh random version-4 UUIDs in lowercase (StoreKit and Apple's format).
@Suite struct OfferNonceTests {
    @Test func everyNonceIsAFreshLowercaseVersion4UUID() throws {
        let key = OfferSigningKey(keyID: "K", issuerID: "I", privateKey: .init())
        var seen = Set<String>()
        for _ in 0..<2000 {
            let signed = try PromotionalOfferSignatureV1.sign(
                bundleId: "b", productId: "p", offerIdentifier: "o", appAccountToken: nil, key: key)
            let nonce = signed.nonce
            let uuid = try #require(UUID(uuidString: nonce), "\(nonce) is a UUID")
            #expect(nonce == uuid.uuidString.lowercased() && nonce.count == 36)
            #expect(Array(nonce)[14] == "4", "version 4")
            #expect("89ab".contains(Array(nonce)[19]), "variant 10")
            seen.insert(nonce)
        }
        #expect(seen.count == 2000, "no nonce repeats")
    }

    @Test func base64URLIsTheStandardEncodingWithoutPadding() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let expected = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == expected, "\(length) bytes")
            #expect(Base64URL.decode(expected) == bytes)
        }
    }
}
