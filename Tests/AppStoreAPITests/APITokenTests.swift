import AppStoreAPI
import Crypto
import Foundation
import JWSVerification
import TestSupport
import Testing

/// App Store Server API bearer tokens: made as Apple requires, and checked as the stand-in will check them.
@Suite struct APITokenTests {
    static func credentials() throws -> APICredentials {
        try APICredentials(
            keyID: "KEY123", issuerID: "issuer-uuid", bundleID: "com.example",
            pkcs8PEM: Fixtures.text("apple/certs/testSigningKey.p8"))
    }

    static func validator(_ credentials: APICredentials) -> APITokenValidator {
        APITokenValidator(keys: [credentials.keyID: credentials.privateKey.publicKey], issuerID: credentials.issuerID)
    }

    @Test func aTokenCarriesTheRequiredHeaderAndClaims() throws {
        let credentials = try Self.credentials()
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let token = try APITokenFactory(credentials: credentials).token(now: now)
        let parts = token.split(separator: ".").map(String.init)
        let header = try JSONDecoder().decode([String: String].self, from: Data(Base64URL.decode(parts[0])!))
        #expect(header == ["alg": "ES256", "kid": "KEY123", "typ": "JWT"])
        let claims = try Self.validator(credentials).validate(token, now: now.addingTimeInterval(10))
        #expect(
            claims
                == APITokenClaims(
                    iss: "issuer-uuid", iat: 1_700_000_000, exp: 1_700_000_300, aud: "appstoreconnect-v1",
                    bid: "com.example"))
    }

    @Test func lifetimesOverAnHourAreRefused() throws {
        #expect(throws: APITokenError.self) { try APITokenFactory(credentials: Self.credentials(), lifetime: 3601) }
        #expect(throws: Never.self) { try APITokenFactory(credentials: Self.credentials(), lifetime: 3600) }
    }

    @Test func theValidatorRefusesWhatAppleWould() throws {
        let credentials = try Self.credentials()
        let validator = Self.validator(credentials)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let token = try APITokenFactory(credentials: credentials).token(now: now)
        // expired
        #expect(throws: APITokenError.self) { try validator.validate(token, now: now.addingTimeInterval(301)) }
        var other = credentials
        other.privateKey = P256.Signing.PrivateKey()
        #expect(throws: APITokenError.self) {
            try validator.validate(try APITokenFactory(credentials: other).token(now: now), now: now)
        }
        var wrongIssuer = credentials
        wrongIssuer.issuerID = "someone-else"
        #expect(throws: APITokenError.self) {
            try validator.validate(try APITokenFactory(credentials: wrongIssuer).token(now: now), now: now)
        }
        var unknownKey = credentials
        unknownKey.keyID = "OTHER"
        #expect(throws: APITokenError.self) {
            try validator.validate(try APITokenFactory(credentials: unknownKey).token(now: now), now: now)
        }
        let parts = token.split(separator: ".").map(String.init)
        let tampered = [
            parts[0],
            Base64URL.encode(
                Data(
                    #"{"aud":"appstoreconnect-v1","bid":"com.evil","exp":1700000300,"iat":1700000000,"iss":"issuer-uuid"}"#
                        .utf8)), parts[2],
        ].joined(separator: ".")
        #expect(throws: APITokenError.self) { try validator.validate(tampered, now: now) }
        #expect(throws: APITokenError.self) { try validator.validate("a.b", now: now) }
    }

    /// A token shaped as Apple's own server libraries make it: no `typ`, no `iat`. Apple serves it, so the
    /// stand-in must too; its lifetime is then bounded from now.
    @Test func aTokenWithoutIssuedAtIsAcceptedWithinAnHour() throws {
        let credentials = try Self.credentials()
        let validator = Self.validator(credentials)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        func token(expiresIn seconds: Int64) throws -> String {
            let header = Base64URL.encode(Data(#"{"alg":"ES256","kid":"KEY123"}"#.utf8))
            let claims = Base64URL.encode(
                Data(
                    #"{"bid":"com.example","iss":"issuer-uuid","aud":"appstoreconnect-v1","exp":\#(1_700_000_000 + seconds)}"#
                        .utf8))
            let signature = try credentials.privateKey.signature(for: Data((header + "." + claims).utf8))
            return header + "." + claims + "." + Base64URL.encode(signature.rawRepresentation)
        }
        let claims = try validator.validate(try token(expiresIn: 300), now: now)
        #expect(claims.iat == nil && claims.exp == 1_700_000_300 && claims.bid == "com.example")
        #expect(throws: APITokenError.self) { try validator.validate(try token(expiresIn: 7200), now: now) }
        #expect(throws: APITokenError.self) { try validator.validate(try token(expiresIn: -1), now: now) }
    }
}
