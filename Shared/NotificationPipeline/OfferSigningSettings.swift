public import AppStoreAPI
import Crypto
import Foundation
public import ServiceRuntime

/// The In-App Purchase key customer-api signs offers with (see docs/offers.md): `APPSTORE_OFFER_KEY_FILE` (the `.p8`),
/// `APPSTORE_OFFER_KEY_ID` and `APPSTORE_OFFER_ISSUER_ID` (default `APPSTORE_API_ISSUER_ID`). Never the API key by
/// accident: nothing falls back to `APPSTORE_API_KEY_FILE`, and the same key configured for both stops the service.
public struct OfferSigningSettings: Sendable {
    public var key: OfferSigningKey

    public init(key: OfferSigningKey) { self.key = key }

    /// Reads the variables; nil when `APPSTORE_OFFER_KEY_FILE` is unset (offers then answer 503 `not-configured`).
    /// `apiKey` is the API key configured beside it, which the offer key must not be.
    public init?(_ settings: EnvironmentSettings, apiKey: APICredentials?) throws {
        let path = settings.string("APPSTORE_OFFER_KEY_FILE", default: "")
        guard !path.isEmpty else { return nil }
        guard let pem = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw SettingsError("APPSTORE_OFFER_KEY_FILE: cannot read \(path)")
        }
        let keyID = try settings.requiredString("APPSTORE_OFFER_KEY_ID")
        let issuer = settings.string(
            "APPSTORE_OFFER_ISSUER_ID", default: settings.string("APPSTORE_API_ISSUER_ID", default: ""))
        guard !issuer.isEmpty else {
            throw SettingsError("APPSTORE_OFFER_ISSUER_ID (or APPSTORE_API_ISSUER_ID) is required to sign offers")
        }
        do {
            self.key = try OfferSigningKey(keyID: keyID, issuerID: issuer, pkcs8PEM: pem)
        } catch {
            throw SettingsError("APPSTORE_OFFER_KEY_FILE: \(path) is not a PKCS#8 P-256 key (\(error))")
        }
        if let apiKey,
            apiKey.keyID == keyID
                || apiKey.privateKey.publicKey.rawRepresentation == self.key.privateKey.publicKey.rawRepresentation
        {
            throw SettingsError(
                "APPSTORE_OFFER_KEY_FILE is the App Store Server API key: give offers their own In-App Purchase key")
        }
    }
}
