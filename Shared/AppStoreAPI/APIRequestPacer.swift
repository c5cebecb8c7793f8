public import AppStoreModels
public import Foundation
import RateAndRetry

/// Paces calls to the App Store Server API under Apple's rate limits, which are per app and per endpoint
/// ("Identifying rate limits": 50 a second for Get Transaction History and Get All Subscription Statuses in
/// Production; Sandbox gets a tenth). Every caller sharing one pacer shares each (app, environment, endpoint)'s
/// budget, so a tool running many calls at once stays under the limit instead of meeting 429s; a 429's
/// `Retry-After` pauses that endpoint for all of them.
///
/// An endpoint is the path's first three segments (`/inApps/v2/history`, `/inApps/v1/subscriptions`): calls
/// under one prefix share a budget, which is never looser than Apple's.
public actor APIRequestPacer {
    /// Calls a second per endpoint in Production.
    public nonisolated let productionRatePerSecond: Double
    private var buckets: [String: TokenBucket] = [:]

    /// A pacer allowing `productionRatePerSecond` calls a second per app and endpoint in Production, a tenth of
    /// that in Sandbox.
    public init(productionRatePerSecond: Double) {
        self.productionRatePerSecond = productionRatePerSecond
    }

    /// The calls a second allowed per endpoint in `environment`.
    public nonisolated func ratePerSecond(in environment: Environment) -> Double {
        environment == .sandbox ? self.productionRatePerSecond / 10 : self.productionRatePerSecond
    }

    /// The budget a call to `path` draws on.
    public static func endpoint(of path: String) -> String {
        "/" + path.split(separator: "/").prefix(3).joined(separator: "/")
    }

    // MARK: Pacing

    /// Waits until a call to `path` for the app in `environment` may go.
    public func admit(bundleID: String, environment: Environment, path: String) async {
        let wait = self.reserve(bundleID: bundleID, environment: environment, path: path, now: Self.now())
        if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64((wait * 1000).rounded(.up)))) }
    }

    /// Takes the next slot of the call's budget and returns how many seconds after `now` (UNIX seconds) it is.
    public func reserve(bundleID: String, environment: Environment, path: String, now: Double) -> Double {
        let key = Self.key(bundleID, environment, path)
        var bucket =
            self.buckets[key] ?? TokenBucket(ratePerSecond: self.ratePerSecond(in: environment), burst: 1, now: now)
        let wait = bucket.take(now: now, maximumWait: .infinity) ?? 0
        self.buckets[key] = bucket
        return wait
    }

    /// No call to `path` for the app in `environment` before `date` (Apple's `Retry-After` after a 429).
    public func pause(bundleID: String, environment: Environment, path: String, until date: Date) {
        let key = Self.key(bundleID, environment, path)
        let now = Self.now()
        var bucket =
            self.buckets[key] ?? TokenBucket(ratePerSecond: self.ratePerSecond(in: environment), burst: 1, now: now)
        bucket.pause(until: date.timeIntervalSince1970)
        self.buckets[key] = bucket
    }

    // MARK: Helpers

    private static func key(_ bundleID: String, _ environment: Environment, _ path: String) -> String {
        "\(bundleID) \(environment.rawValue) \(Self.endpoint(of: path))"
    }

    private static func now() -> Double { Date().timeIntervalSince1970 }
}
