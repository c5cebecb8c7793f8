import AppStoreModels
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

// MARK: - Simulator + the app posting its purchases

extension Simulator {
    /// The app's side: posts every ``AppPost`` (StoreKit 2's signed transaction, signed at the purchase, with
    /// the device's fresh AppTransaction and verification id as proof that it is the buyer's) to customer-api for
    /// its app user, `concurrency` at a time; returns the count of each HTTP status (0: no answer).
    @_spi(Testing) public func postAppPurchases(http: HTTPClient, to baseURL: String, key: String, concurrency: Int = 8)
        async -> [Int: Int]
    {
        let bundleId = self.configuration.bundleId
        let signer = self.signer
        let purchases = self.scenario.purchases
        return await withTaskGroup(of: Int.self) { group in
            var statuses: [Int: Int] = [:]
            var running = 0
            for post in self.scenario.appPosts {
                if running == concurrency, let status = await group.next() {
                    statuses[status, default: 0] += 1
                    running -= 1
                }
                running += 1
                group.addTask {
                    guard
                        let signed = try? signer.signTransaction(
                            post.transaction, now: Date(timeIntervalSince1970: Double(post.signedAt) / 1000)),
                        let purchase = post.transaction.originalTransactionId.flatMap({ purchases[$0] }),
                        let app = try? signer.signAppTransaction(
                            for: purchase, environment: post.environment, device: post.deviceVerificationId)
                    else { return 0 }
                    var request = HTTPClientRequest(
                        url: "\(baseURL)/v1/apps/\(bundleId)/customers/\(post.appUserId)/transactions")
                    request.method = .POST
                    request.headers.add(name: "Authorization", value: "Bearer \(key)")
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(
                        ByteBuffer(
                            string: #"{"signedTransaction":""# + signed + #"","signedAppTransaction":""# + app
                                + #"","deviceVerificationId":""# + post.deviceVerificationId + #""}"#))
                    guard let response = try? await http.execute(request, timeout: .seconds(30)) else { return 0 }
                    _ = try? await response.body.collect(upTo: 1 << 20)
                    return Int(response.status.code)
                }
            }
            for await status in group { statuses[status, default: 0] += 1 }
            return statuses
        }
    }
}

// MARK: - The app recording its customers' consent for consumption answers

extension Simulator {
    /// The customers (of the open refund requests) whose app recorded consent: a `consentShare` of them, chosen by
    /// a hash of the transaction, so tests and the summary know them.
    @_spi(Testing) public var consentingRefundRequests: [String] {
        self.scenario.openRefundRequests.filter { id in
            var hash = StableHash()
            hash.add("consent-\(id)")
            return Double(hash.value % 1000) / 1000 < self.configuration.consentShare
        }
    }

    /// The app's side: for each consenting customer, `PUT …/consumption-facts` with consent and some play time
    /// before any notification is delivered; returns the count of each HTTP status (0: no answer).
    @_spi(Testing) public func postConsents(http: HTTPClient, to baseURL: String, key: String) async -> [Int: Int] {
        let bundleId = self.configuration.bundleId
        var owners: [String: SimPurchase] = [:]
        for purchase in self.scenario.purchases.values {
            for transaction in purchase.transactions { owners[transaction.transactionId!] = purchase }
        }
        var statuses: [Int: Int] = [:]
        for id in self.consentingRefundRequests {
            guard let purchase = owners[id] else { continue }
            var request = HTTPClientRequest(
                url: "\(baseURL)/v1/apps/\(bundleId)/customers/\(purchase.customer)/consumption-facts?idType="
                    + purchase.customerKind)
            request.method = .PUT
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(
                ByteBuffer(
                    string:
                        #"{"environment":"\#(purchase.environment.rawValue)","customerConsented":true,"playTimeMinutes":90}"#
                ))
            let status = (try? await http.execute(request, timeout: .seconds(30))).map { Int($0.status.code) } ?? 0
            statuses[status, default: 0] += 1
        }
        return statuses
    }
}

extension SimPurchase {
    /// The kind of id ``customer`` is, as customer-api's `idType` names it: the purchase itself
    /// (`originalTransactionId`), its appAccountToken, or an app user the app posted it for.
    @_spi(Testing) public var customerKind: String {
        if self.customer == self.originalTransactionId { return "originalTransactionId" }
        return self.customer == self.transactions.first?.appAccountToken ? "appAccountToken" : "appUserId"
    }
}
