import AppStoreAPI
import AppStoreModels
import AsyncHTTPClient
import Foundation
import JWSVerification
import NIOCore
import NIOHTTP1

// MARK: - The app buying with offers its server signs

/// What the app's offer purchases came to.
@_spi(Testing) public struct OfferPurchaseReport: Codable, Sendable, Equatable {
    /// Signatures customer-api answered (by version).
    @_spi(Testing) public var signed: [String: Int] = [:]
    /// Purchases StoreKit made with them.
    @_spi(Testing) public var bought = 0
    /// Altered signatures StoreKit refused (one per run, tried before the real one).
    @_spi(Testing) public var forgedRefused = 0
    /// Answers that were not what the flow expects, with the reason.
    @_spi(Testing) public var failures: [String] = []
}

extension Simulator {
    /// The app's side of each ``OfferPurchase``: asks customer-api (`POST …/offers`) for the promotional offer's
    /// signature in the planned version, then buys through StoreKit (`storeURL`, the sim's `/sim/storekit/purchases`).
    /// The first purchase is tried once with an altered signature first, which StoreKit must refuse.
    @_spi(Testing) public func buyWithOffers(http: HTTPClient, customerAPI: String, key: String, storeURL: String) async
        -> OfferPurchaseReport
    {
        var report = OfferPurchaseReport()
        for (number, offer) in self.scenario.offerPurchases.enumerated() {
            let asked: [String: Any] = [
                "offer": "promotional", "productId": offer.productId, "offerIdentifier": offer.offerIdentifier,
                "signatureVersion": offer.signatureVersion, "environment": offer.environment.rawValue,
            ]
            let (status, answer) = await Self.postJSON(
                http, "\(customerAPI)/v1/apps/\(self.configuration.bundleId)/customers/\(offer.appUserId)/offers",
                asked, key: key)
            guard status == 200 else {
                report.failures.append("customer-api answered \(status) for \(offer.appUserId): \(answer)")
                continue
            }
            report.signed[offer.signatureVersion, default: 0] += 1
            var promotional: [String: Any] = [:]
            if offer.signatureVersion == "V1" {
                promotional["signatureV1"] = answer["signatureV1"] ?? [:]
            } else {
                promotional["signature"] = answer["signature"] ?? ""
            }
            let purchase: [String: Any] = [
                "environment": offer.environment.rawValue, "appUserId": offer.appUserId,
                "productId": offer.productId, "promotionalOffer": promotional,
            ]
            if number == 0 {
                var forged = purchase
                forged["promotionalOffer"] = Self.altered(promotional)
                let (forgedStatus, _) = await Self.postJSON(http, storeURL, forged, key: nil)
                if forgedStatus == 400 {
                    report.forgedRefused += 1
                } else {
                    report.failures.append("StoreKit answered \(forgedStatus) to an altered signature")
                }
            }
            let (bought, receipt) = await Self.postJSON(http, storeURL, purchase, key: nil)
            if bought == 200, receipt["signedTransaction"] is String {
                report.bought += 1
            } else {
                report.failures.append("StoreKit answered \(bought) for \(offer.appUserId): \(receipt)")
            }
        }
        return report
    }

    /// The signature with one field changed after signing: V2's offer claim, or V1's offer identifier.
    static func altered(_ promotional: [String: Any]) -> [String: Any] {
        var promotional = promotional
        if var v1 = promotional["signatureV1"] as? [String: Any] {
            v1["offerIdentifier"] = "FREE_FOREVER"
            promotional["signatureV1"] = v1
        } else if let jws = promotional["signature"] as? String {
            var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 3, let claims = Base64URL.decode(parts[1]).map({ Data($0) }),
                var object = (try? JSONSerialization.jsonObject(with: claims)) as? [String: Any]
            {
                object["offerIdentifier"] = "FREE_FOREVER"
                parts[1] = Base64URL.encode((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
            }
            promotional["signature"] = parts.joined(separator: ".")
        }
        return promotional
    }

    /// POSTs a JSON object (with a bearer key when given); the status (0: no answer) and the JSON answer.
    @_spi(Testing) public static func postJSON(_ http: HTTPClient, _ url: String, _ body: [String: Any], key: String?)
        async -> (
            Int, [String: Any]
        )
    {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: (try? JSONSerialization.data(withJSONObject: body)) ?? Data()))
        guard let response = try? await http.execute(request, timeout: .seconds(30)) else { return (0, [:]) }
        let bytes = (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer()
        let json = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
        return (Int(response.status.code), json)
    }
}
