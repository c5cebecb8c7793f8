import AppStoreModels
import Foundation
import Storage

/// The per-app rules that choose what a customer about to cancel sees (`RETENTION_RULES_FILE`, JSON; docs/retention.md):
/// for each app, rules in order, each with conditions on the subscription and the request and one answer (a message,
/// an alternate product, or a promotional offer the offer key signs), and the default message answered when no rule
/// holds. Checked at start: a bad file stops the service.
struct RetentionRules: Codable, Sendable {
    /// The rules of one app.
    struct AppRules: Codable, Sendable {
        /// The message answered when no rule holds (a message id approved at Apple); nil: an empty answer, so the App
        /// Store shows the default configured there.
        var defaultMessage: String?
        var rules: [Rule]
    }

    /// One rule: when its conditions hold, its answer is given.
    struct Rule: Codable, Sendable {
        var name: String
        var when: Conditions?
        var answer: Answer
    }

    /// Conditions; every one given must hold (none given: always). Unknown subscriptions hold only conditions on the
    /// request itself (product, locale, environment).
    struct Conditions: Codable, Sendable {
        /// The product the customer is looking at (the request's).
        var productIds: [String]?
        /// Apple's status as last stored: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
        var statuses: [Int32]?
        /// Days since the subscription's first purchase, at least / at most.
        var minTenureDays: Int?
        var maxTenureDays: Int?
        /// Whether the subscription has redeemed any promotional offer before.
        var redeemedPromotionalOffer: Bool?
        /// Locales: `en-US` matches exactly, `en` any English locale.
        var locales: [String]?
        /// `Production`, `Sandbox`.
        var environments: [String]?
    }

    /// Exactly one of the three.
    struct Answer: Codable, Sendable {
        var message: String?
        var alternateProduct: AlternateProduct?
        var promotionalOffer: PromotionalOffer?
    }

    /// Another product of the group, with its message.
    struct AlternateProduct: Codable, Sendable {
        var productId: String
        var messageIdentifier: String
        var billingPlanType: String?
    }

    /// A promotional offer (of `productId`, default the request's product), with its message.
    struct PromotionalOffer: Codable, Sendable {
        var offerIdentifier: String
        var productId: String?
        var messageIdentifier: String
        /// `V2` (default) or `V1`.
        var signatureVersion: String?
    }

    /// Rules by bundle id.
    var apps: [String: AppRules]

    // MARK: Checking the file

    /// Reads and checks a rules file: every app configured in `bundleIds`, message ids UUIDs, one answer per rule, a
    /// known signature version, tenure bounds in order; offers need `canSignOffers`.
    static func load(path: String, bundleIds: Set<String>, canSignOffers: Bool) throws -> RetentionRules {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RetentionRulesError("RETENTION_RULES_FILE: cannot read \(path)")
        }
        let rules: RetentionRules
        do {
            rules = try JSONDecoder().decode(RetentionRules.self, from: data)
        } catch {
            throw RetentionRulesError("RETENTION_RULES_FILE: \(path) is not a rules file (\(error))")
        }
        try rules.check(bundleIds: bundleIds, canSignOffers: canSignOffers)
        return rules
    }

    /// The checks of ``load(path:bundleIds:canSignOffers:)``.
    func check(bundleIds: Set<String>, canSignOffers: Bool) throws {
        for (bundleId, app) in self.apps {
            guard bundleIds.contains(bundleId) else {
                throw RetentionRulesError("rules for \(bundleId), which APPSTORE_APPS does not accept")
            }
            if let message = app.defaultMessage { try Self.requireUUID(message, "\(bundleId) defaultMessage") }
            for rule in app.rules {
                let place = "\(bundleId) rule \(rule.name)"
                let answers = [
                    rule.answer.message != nil, rule.answer.alternateProduct != nil,
                    rule.answer.promotionalOffer != nil,
                ].filter { $0 }.count
                guard answers == 1 else {
                    throw RetentionRulesError(
                        "\(place): give exactly one of message, alternateProduct, promotionalOffer")
                }
                if let message = rule.answer.message { try Self.requireUUID(message, place) }
                if let product = rule.answer.alternateProduct {
                    try Self.requireUUID(product.messageIdentifier, place)
                }
                if let offer = rule.answer.promotionalOffer {
                    try Self.requireUUID(offer.messageIdentifier, place)
                    guard ["V1", "V2"].contains(offer.signatureVersion ?? "V2") else {
                        throw RetentionRulesError("\(place): signatureVersion must be V1 or V2")
                    }
                    guard canSignOffers else {
                        throw RetentionRulesError("\(place) answers an offer: set APPSTORE_OFFER_KEY_FILE")
                    }
                }
                if let low = rule.when?.minTenureDays, let high = rule.when?.maxTenureDays, low > high {
                    throw RetentionRulesError("\(place): minTenureDays \(low) is above maxTenureDays \(high)")
                }
            }
        }
    }

    /// Refuses a message id that is not a UUID (Apple's message identifiers are).
    private static func requireUUID(_ text: String, _ place: String) throws {
        guard UUID(uuidString: text) != nil else {
            throw RetentionRulesError("\(place): \(text) is not a message identifier (a UUID)")
        }
    }

    // MARK: Choosing

    /// The first rule of `bundleId` whose conditions hold, nil when none does.
    func choose(
        bundleId: String, request: DecodedRealtimeRequestBody, subject: RetentionSubject, now: Date
    ) -> Rule? {
        self.apps[bundleId]?.rules.first { $0.when?.hold(request: request, subject: subject, now: now) ?? true }
    }
}

extension RetentionRules.Conditions {
    /// Whether every condition given holds for this request and subscription.
    func hold(request: DecodedRealtimeRequestBody, subject: RetentionSubject, now: Date) -> Bool {
        if let products = self.productIds, !products.contains(request.productId ?? "") { return false }
        if let environments = self.environments, !environments.contains(request.rawEnvironment ?? "") { return false }
        if let locales = self.locales, !Self.matches(locales, request.userLocale) { return false }
        if let statuses = self.statuses {
            guard let status = subject.status, statuses.contains(status) else { return false }
        }
        if self.minTenureDays != nil || self.maxTenureDays != nil {
            guard let first = subject.firstPurchaseDate else { return false }
            let days = Int((now.timeIntervalSince1970 * 1000 - Double(first)) / 86_400_000)
            if let low = self.minTenureDays, days < low { return false }
            if let high = self.maxTenureDays, days > high { return false }
        }
        if let redeemed = self.redeemedPromotionalOffer {
            guard subject.known, redeemed == !subject.redeemedPromotionalOffers.isEmpty else { return false }
        }
        return true
    }

    /// `en-US` matches exactly (any case, `_` or `-`); `en` matches any locale of that language.
    static func matches(_ locales: [String], _ locale: String?) -> Bool {
        guard let locale = locale?.replacingOccurrences(of: "_", with: "-").lowercased() else { return false }
        return locales.contains { wanted in
            let wanted = wanted.replacingOccurrences(of: "_", with: "-").lowercased()
            return wanted == locale || (!wanted.contains("-") && locale.hasPrefix(wanted + "-"))
        }
    }
}

/// A rules file that cannot be used, with the reason (stops the service at start).
struct RetentionRulesError: Error, CustomStringConvertible, Equatable {
    var description: String
    init(_ description: String) { self.description = description }
}
