public import AppStoreModels
import Foundation

// MARK: - How the operator wants consumption requests answered

/// The operator's policy for CONSUMPTION_REQUEST (`CONSUMPTION_POLICY`, e.g.
/// `refundPreference=DECLINE,sampleContentProvided=false,api=v2`): without one, requests are recorded and
/// published but never answered. Apple requires the customer's consent: no consent, no answer.
public struct ConsumptionPolicy: Codable, Hashable, Sendable {
    /// `DECLINE`, `GRANT_FULL`, `GRANT_PRORATED` or nil (no preference).
    public var refundPreference: String?
    /// Whether the app offers a free sample or trial of what was bought.
    public var sampleContentProvided: Bool
    /// Which Send Consumption Information the answer uses: `v2` (Apple's current one) or `v1` (coded buckets,
    /// with tenure, lifetime amounts and play time).
    public var apiVersion: String

    public init(refundPreference: String? = nil, sampleContentProvided: Bool = false, apiVersion: String = "v2") {
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
        self.apiVersion = apiVersion
    }

    /// Parses `key=value` pairs separated by commas; an empty text is no policy (nil).
    public init?(parsing text: String) throws(ConsumptionPolicyError) {
        let pairs = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !pairs.isEmpty else { return nil }
        self.init()
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ConsumptionPolicyError("\(pair) is not key=value") }
            switch (parts[0], parts[1]) {
            case ("refundPreference", "none"): self.refundPreference = nil
            case ("refundPreference", let value) where ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"].contains(value):
                self.refundPreference = value
            case ("sampleContentProvided", let value) where ["true", "false"].contains(value):
                self.sampleContentProvided = value == "true"
            case ("api", let value) where ["v1", "v2"].contains(value): self.apiVersion = value
            default:
                throw ConsumptionPolicyError(
                    "unknown setting \(pair) (refundPreference=DECLINE|GRANT_FULL|GRANT_PRORATED|none, sampleContentProvided=true|false, api=v1|v2)"
                )
            }
        }
    }
}

/// A malformed `CONSUMPTION_POLICY`.
public struct ConsumptionPolicyError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - What the database knows about the customer and the purchase

/// The facts an answer is computed from: the pipeline's own records (tenure, lifetime amounts, the purchase's
/// state) and the optional `consumption_facts` row the app team fills (consent, play time, delivery, consumption).
public struct ConsumptionFacts: Codable, Hashable, Sendable {
    /// The app team's row: nil when the team recorded nothing for this customer (then: no consent).
    public var customerConsented: Bool?
    public var playTimeMinutes: Int64?
    /// One of Apple's v2 delivery statuses; nil: `DELIVERED` when the purchase is stored and not revoked.
    public var deliveryStatus: String?
    /// Milliunits consumed (0…100000), consumables only.
    public var consumptionPercentage: Int32?
    /// Apple's user status code (1 active, 2 suspended, 3 terminated, 4 limited access).
    public var userStatus: Int32?
    /// The first purchase of the customer in this app and environment (epoch ms).
    public var firstPurchaseAt: Int64?
    /// Prices in USD milliunits; nil when the customer also paid in another currency (not convertible here).
    public var lifetimePurchasedUSDMilli: Int64?
    public var lifetimeRefundedUSDMilli: Int64?
    public var productType: String?
    public var appAccountToken: String?

    public init() {}

    /// Whether the customer consented (Apple: "if the customer did not consent, don't respond").
    public var consented: Bool { self.customerConsented == true }

    /// The v2 body under `policy`.
    public func answerV2(_ policy: ConsumptionPolicy) -> ConsumptionRequest {
        let isSubscription = self.productType == "Auto-Renewable Subscription"
        var percentage = isSubscription ? nil : self.consumptionPercentage
        var preference = policy.refundPreference
        // GRANT_PRORATED needs a percentage strictly between 0 and 100000; without one, no preference is stated.
        if preference == "GRANT_PRORATED", !(percentage.map { $0 > 0 && $0 < 100_000 } ?? false) { preference = nil }
        if let value = percentage, !(0...100_000).contains(value) { percentage = nil }
        return ConsumptionRequest(
            customerConsented: true, consumptionPercentage: percentage,
            deliveryStatus: self.deliveryStatus ?? "DELIVERED",
            refundPreference: preference, sampleContentProvided: policy.sampleContentProvided)
    }

    /// The v1 body under `policy`, as of `now` (epoch ms).
    public func answerV1(_ policy: ConsumptionPolicy, now: Int64) -> ConsumptionRequestV1 {
        let delivery: Int32 =
            switch self.deliveryStatus ?? "DELIVERED" {
            case "UNDELIVERED_QUALITY_ISSUE": 1
            case "UNDELIVERED_WRONG_ITEM": 2
            case "UNDELIVERED_SERVER_OUTAGE": 3
            case "UNDELIVERED_OTHER": 5
            default: 0
            }
        let consumption: Int32 =
            switch self.consumptionPercentage {
            case nil: 0
            case 0?: 1
            case 100_000?: 3
            default: 2
            }
        let preference: Int32 =
            switch policy.refundPreference {
            case "GRANT_FULL"?, "GRANT_PRORATED"?: 1
            case "DECLINE"?: 2
            default: 3
            }
        return ConsumptionRequestV1(
            accountTenure: Self.tenureBucket(days: self.firstPurchaseAt.map { Double(now - $0) / 86_400_000 }),
            appAccountToken: self.appAccountToken ?? "", consumptionStatus: consumption, customerConsented: true,
            deliveryStatus: delivery,
            lifetimeDollarsPurchased: Self.dollarBucket(self.lifetimePurchasedUSDMilli),
            lifetimeDollarsRefunded: Self.dollarBucket(self.lifetimeRefundedUSDMilli),
            platform: 1, playTime: Self.playTimeBucket(minutes: self.playTimeMinutes), refundPreference: preference,
            sampleContentProvided: policy.sampleContentProvided, userStatus: self.userStatus ?? 0)
    }

    // MARK: Apple's buckets

    /// accountTenure: 0 undeclared, 1 0–3 days, 2 3–10, 3 10–30, 4 30–90, 5 90–180, 6 180–365, 7 over 365.
    public static func tenureBucket(days: Double?) -> Int32 {
        guard let days, days >= 0 else { return 0 }
        let limits: [Double] = [3, 10, 30, 90, 180, 365]
        return Int32((limits.firstIndex { days < $0 } ?? limits.count) + 1)
    }

    /// lifetimeDollars…: 0 undeclared, 1 $0, 2 $0.01–49.99, 3 $50–99.99, 4 $100–499.99, 5 $500–999.99,
    /// 6 $1000–1999.99, 7 over $2000.
    public static func dollarBucket(_ milliunits: Int64?) -> Int32 {
        guard let milliunits, milliunits >= 0 else { return 0 }
        if milliunits == 0 { return 1 }
        let limits: [Int64] = [50_000, 100_000, 500_000, 1_000_000, 2_000_000]
        return Int32((limits.firstIndex { milliunits < $0 } ?? limits.count) + 2)
    }

    /// playTime: 0 undeclared, 1 0–5 minutes, 2 5–60 minutes, 3 1–6 hours, 4 6–24 hours, 5 1–4 days,
    /// 6 4–16 days, 7 over 16 days.
    public static func playTimeBucket(minutes: Int64?) -> Int32 {
        guard let minutes, minutes >= 0 else { return 0 }
        let limits: [Int64] = [5, 60, 360, 1_440, 5_760, 23_040]
        return Int32((limits.firstIndex { minutes < $0 } ?? limits.count) + 1)
    }
}
