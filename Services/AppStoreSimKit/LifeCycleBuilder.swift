import AppStoreModels
import Foundation

/// Builds one customer's life cycle: its notifications, the purchases' final state and the expected entitlement
/// (two purchases for a subscription migrated to the Advanced Commerce API, one otherwise).
struct LifeCycleBuilder {
    let generator: ScenarioGenerator
    let index: Int
    var random: SimRandom

    @_spi(Testing) public private(set) var notifications: [SimNotification] = []
    @_spi(Testing) public private(set) var purchases: [SimPurchase] = []
    @_spi(Testing) public private(set) var expected: ExpectedEntitlement?

    private var day: Int64 { ScenarioGenerator.day }
    private var hour: Int64 { ScenarioGenerator.hour }
    private var period: Int64 { ScenarioGenerator.period }
    private var epoch: Int64 { self.generator.epoch }

    init(generator: ScenarioGenerator, index: Int, random: SimRandom) {
        self.generator = generator
        self.index = index
        self.random = random
    }

    /// Builds the life cycle; returns its name.
    mutating func build() -> String {
        let roll = Int.random(in: 0..<100, using: &self.random)
        switch roll {
        case 0..<60: return self.autoRenewable(family: false)
        case 60..<65: return self.migratedToAdvancedCommerce()
        case 65..<75: return self.autoRenewable(family: true)
        case 75..<90: return self.nonConsumable()
        default: return self.consumable()
        }
    }

    // MARK: Auto-renewable subscriptions

    /// How an auto-renewable subscription's story ends.
    enum Ending: String, CaseIterable {
        case active
        case voluntaryExpiry = "voluntary-expiry"
        case billingRetryExpiry = "billing-retry-expiry"
        case inGrace = "in-grace"
        case
            graceExpired = "grace-expired"
        case recoveredFromGrace = "recovered-from-grace"
        case refundOfOldPeriod = "refund-of-old-period"
        case
            refundOfLatestPeriod = "refund-of-latest-period"
        case refundReversed = "refund-reversed"
        case familyRevoked = "revoked"

        /// Whether the last period still runs now (otherwise it ended shortly before now).
        var lastPeriodRunsNow: Bool {
            ![.voluntaryExpiry, .billingRetryExpiry, .inGrace, .graceExpired].contains(self)
        }
    }

    private mutating func autoRenewable(family: Bool) -> String {
        let endings: [Ending] =
            family
            ? [.active, .familyRevoked, .voluntaryExpiry]
            : Ending.allCases.filter { $0 != .familyRevoked }
        var ending = endings.randomElement(using: &self.random)!
        let renewals = Int64.random(in: 1...4, using: &self.random)
        if ending == .refundOfOldPeriod && renewals < 1 { ending = .active }
        let original = String(2_000_000_000_000 + self.generator.idOffset + Int64(self.index) * 100)
        let token: String? =
            !family && Bool.random(using: &self.random) ? ScenarioGenerator.uuid("account", self.index) : nil
        let customer = token ?? original
        let offset =
            ending.lastPeriodRunsNow
            ? Int64.random(in: 2 * day...5 * day, using: &self.random)
            : Int64.random(in: 3 * day...5 * day, using: &self.random)
        let start =
            ending.lastPeriodRunsNow
            ? self.epoch - renewals * self.period - offset : self.epoch - (renewals + 1) * self.period - offset
        var subscription = SubscriptionState(
            original: original, customer: customer, token: token, family: family, start: start,
            generator: self.generator)

        subscription.transactions.append(subscription.transaction(number: 0, from: start, until: start + self.period))
        self.send(&subscription, "SUBSCRIBED", "INITIAL_BUY", at: start + 60_000, status: .active)
        for n in 1...renewals {
            let from = start + n * self.period
            if n == renewals && ending == .recoveredFromGrace {
                subscription.renewal.isInBillingRetryPeriod = true
                subscription.renewal.gracePeriodExpiresDate = Timestamp(millisecondsSince1970: from + 6 * self.day)
                self.send(&subscription, "DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: from, status: .billingGracePeriod)
                subscription.renewal.isInBillingRetryPeriod = false
                subscription.renewal.gracePeriodExpiresDate = nil
                subscription.transactions.append(
                    subscription.transaction(number: n, from: from + self.day, until: from + self.day + self.period))
                self.send(&subscription, "DID_RENEW", "BILLING_RECOVERY", at: from + self.day + 60_000, status: .active)
            } else {
                subscription.transactions.append(
                    subscription.transaction(number: n, from: from, until: from + self.period))
                self.send(&subscription, "DID_RENEW", nil, at: from + 60_000, status: .active)
            }
        }
        let lastStart = subscription.transactions.last!.purchaseDate!.millisecondsSince1970
        let lastEnd = subscription.transactions.last!.expiresDate!.millisecondsSince1970
        self.sideEvents(&subscription, from: lastStart + self.hour)
        var status = Status.active
        switch ending {
        case .active, .recoveredFromGrace:
            break
        case .voluntaryExpiry:
            subscription.renewal.rawAutoRenewStatus = 0
            self.send(
                &subscription, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: lastStart + self.day,
                status: .active)
            subscription.renewal.rawExpirationIntent = 1
            status = .expired
            self.send(&subscription, "EXPIRED", "VOLUNTARY", at: lastEnd, status: status)
        case .billingRetryExpiry:
            subscription.renewal.isInBillingRetryPeriod = true
            self.send(&subscription, "DID_FAIL_TO_RENEW", nil, at: lastEnd, status: .billingRetry)
            subscription.renewal.isInBillingRetryPeriod = false
            subscription.renewal.rawExpirationIntent = 2
            status = .expired
            self.send(&subscription, "EXPIRED", "BILLING_RETRY", at: lastEnd + self.day, status: status)
        case .inGrace:
            subscription.renewal.isInBillingRetryPeriod = true
            subscription.renewal.gracePeriodExpiresDate = Timestamp(millisecondsSince1970: lastEnd + 6 * self.day)
            status = .billingGracePeriod
            self.send(&subscription, "DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: lastEnd, status: status)
        case .graceExpired:
            subscription.renewal.isInBillingRetryPeriod = true
            subscription.renewal.gracePeriodExpiresDate = Timestamp(millisecondsSince1970: lastEnd + self.day)
            self.send(&subscription, "DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: lastEnd, status: .billingGracePeriod)
            status = .billingRetry
            self.send(&subscription, "GRACE_PERIOD_EXPIRED", nil, at: lastEnd + self.day, status: status)
        case .refundOfOldPeriod:
            let refunded = Int.random(in: 0..<(subscription.transactions.count - 1), using: &self.random)
            self.refund(&subscription, transaction: refunded, at: lastStart + 3 * self.hour, status: .active)
        case .refundOfLatestPeriod:
            status = .revoked
            self.refund(
                &subscription, transaction: subscription.transactions.count - 1, at: lastStart + 3 * self.hour,
                status: status)
        case .refundReversed:
            let latest = subscription.transactions.count - 1
            self.refund(&subscription, transaction: latest, at: lastStart + 3 * self.hour, status: .revoked)
            subscription.transactions[latest].revocationDate = nil
            subscription.transactions[latest].rawRevocationReason = nil
            subscription.transactions[latest].rawRevocationType = nil
            self.send(
                &subscription, "REFUND_REVERSED", nil, at: lastStart + 6 * self.hour, status: .active,
                transaction: latest)
        case .familyRevoked:
            let latest = subscription.transactions.count - 1
            subscription.transactions[latest].revocationDate = Timestamp(
                millisecondsSince1970: lastStart + 3 * self.hour)
            subscription.transactions[latest].rawRevocationReason = 0
            subscription.transactions[latest].revocationType = .familyRevoke
            status = .revoked
            self.send(&subscription, "REVOKE", nil, at: lastStart + 3 * self.hour, status: status, transaction: latest)
        }
        self.purchases.append(
            SimPurchase(
                originalTransactionId: original, customer: customer, productId: ScenarioGenerator.subscriptionProduct,
                productType: .autoRenewableSubscription, transactions: subscription.transactions,
                renewal: subscription.renewal, status: status))
        self.expected = ExpectedEntitlement(
            customer: customer, productId: ScenarioGenerator.subscriptionProduct, originalTransactionId: original,
            active: status == .active || status == .billingGracePeriod, revoked: status == .revoked)
        return (family ? "family " : "") + ending.rawValue
    }

    /// A subscription the developer migrated to the Advanced Commerce API during its last period: the App Store
    /// ends it (nothing more is sent about it) and starts a new subscription of the Advanced Commerce product, its own
    /// originalTransactionId, the SKUs sold in `advancedCommerceInfo` and `previousOriginalTransactionId` naming the
    /// old one, announced by MIGRATION. In one case of two the customer is then refunded the add-on item alone: a
    /// REFUND whose transaction stands (`data.status` active), the item's refund and revocation inside it.
    private mutating func migratedToAdvancedCommerce() -> String {
        let renewals = Int64.random(in: 1...3, using: &self.random)
        let original = String(2_000_000_000_000 + self.generator.idOffset + Int64(self.index) * 100)
        let token: String? = Bool.random(using: &self.random) ? ScenarioGenerator.uuid("account", self.index) : nil
        let customer = token ?? original
        let start = self.epoch - renewals * self.period - Int64.random(in: 2 * day...5 * day, using: &self.random)
        var old = SubscriptionState(
            original: original, customer: customer, token: token, family: false, start: start,
            generator: self.generator)
        old.transactions.append(old.transaction(number: 0, from: start, until: start + self.period))
        self.send(&old, "SUBSCRIBED", "INITIAL_BUY", at: start + 60_000, status: .active)
        for n in 1...renewals {
            let from = start + n * self.period
            old.transactions.append(old.transaction(number: n, from: from, until: from + self.period))
            self.send(&old, "DID_RENEW", nil, at: from + 60_000, status: .active)
        }
        // Migrated a day into the last period (at least a day before now): the old subscription ends there.
        let migratedAt = start + renewals * self.period + self.day
        old.renewal.rawAutoRenewStatus = 0
        self.purchases.append(
            SimPurchase(
                originalTransactionId: original, customer: customer, productId: ScenarioGenerator.subscriptionProduct,
                productType: .autoRenewableSubscription, transactions: old.transactions, renewal: old.renewal,
                status: .expired, migratedTo: String(Int64(original)! + 50)))

        var new = SubscriptionState(
            original: String(Int64(original)! + 50), customer: customer, token: token, family: false,
            start: migratedAt, generator: self.generator, productId: ScenarioGenerator.advancedCommerceProduct)
        var transaction = new.transaction(number: 0, from: migratedAt, until: migratedAt + self.period)
        transaction.previousOriginalTransactionId = original
        var info = Self.advancedCommerceInfo()
        transaction.price = (info.items ?? []).compactMap(\.price).reduce(0, +)
        transaction.advancedCommerceInfo = try? JSONValue(encoding: info)
        new.transactions.append(transaction)
        self.send(&new, "MIGRATION", nil, at: migratedAt + 60_000, status: .active)
        let refunded = Bool.random(using: &self.random)
        if refunded {
            let at = migratedAt + 3 * self.hour
            var refund = AdvancedCommerceRefund()
            refund.refundAmount = info.items?[1].price
            refund.refundDate = Timestamp(millisecondsSince1970: at)
            refund.refundReason = "UNSATISFIED_WITH_PURCHASE"
            refund.refundType = "FULL"
            info.items?[1].refunds = [refund]
            info.items?[1].revocationDate = refund.refundDate
            new.transactions[0].advancedCommerceInfo = try? JSONValue(encoding: info)
            self.send(&new, "REFUND", nil, at: at, status: .active)
        }
        self.purchases.append(
            SimPurchase(
                originalTransactionId: new.original, customer: customer,
                productId: ScenarioGenerator.advancedCommerceProduct, productType: .autoRenewableSubscription,
                transactions: new.transactions, renewal: new.renewal, status: .active))
        self.expected = ExpectedEntitlement(
            customer: customer, productId: ScenarioGenerator.advancedCommerceProduct,
            originalTransactionId: new.original, active: true, revoked: false)
        return refunded ? "migrated, item refunded" : "migrated"
    }

    /// The SKUs an Advanced Commerce subscription sells: the plan and an add-on.
    static func advancedCommerceInfo() -> AdvancedCommerceTransactionInfo {
        var plan = AdvancedCommerceTransactionItem()
        plan.sku = "pro-weekly-plan"
        plan.displayName = "Pro"
        plan.description = "Pro features, billed weekly"
        plan.price = 4_990
        var addOn = AdvancedCommerceTransactionItem()
        addOn.sku = "extra-storage"
        addOn.displayName = "Extra storage"
        addOn.description = "100 GB more"
        addOn.price = 990
        var info = AdvancedCommerceTransactionInfo()
        info.items = [plan, addOn]
        info.period = "P1W"
        info.taxCode = "C003-00-2"
        info.requestReferenceId = "migrate-" + String(plan.price ?? 0)
        return info
    }

    /// Notifications that change no access, early in the last period.
    private mutating func sideEvents(_ s: inout SubscriptionState, from: Int64) {
        var at = from
        let choices: [(String, String?)] = [
            ("PRICE_INCREASE", "PENDING"), ("PRICE_INCREASE", "ACCEPTED"), ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"),
            ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"), ("OFFER_REDEEMED", nil), ("CONSUMPTION_REQUEST", nil),
            ("REFUND_DECLINED", nil), ("METADATA_UPDATE", nil), ("PRICE_CHANGE", nil),
            ("RENEWAL_EXTENSION", "FAILURE"),
        ]
        for (type, subtype) in choices where Int.random(in: 0..<100, using: &self.random) < 12 {
            at += 60_000
            self.send(&s, type, subtype, at: at, status: .active)
        }
    }

    /// Refunds one transaction of the subscription (REFUND, with or without `data.status`).
    private mutating func refund(_ s: inout SubscriptionState, transaction index: Int, at: Int64, status: Status) {
        s.transactions[index].revocationDate = Timestamp(millisecondsSince1970: at)
        s.transactions[index].rawRevocationReason = 0
        s.transactions[index].revocationType = .refundFull
        s.transactions[index].revocationPercentage = 100_000
        self.send(&s, "CONSUMPTION_REQUEST", nil, at: at - 60 * 60_000, status: .active, transaction: index)
        self.send(
            &s, "REFUND", nil, at: at, status: self.generator.refundCarriesStatus ? status : nil, transaction: index)
    }

    /// Records a notification about a subscription transaction (default: the newest).
    private mutating func send(
        _ s: inout SubscriptionState, _ type: String, _ subtype: String?, at: Int64, status: Status?,
        transaction index: Int? = nil
    ) {
        var transaction = s.transactions[index ?? s.transactions.count - 1]
        transaction.signedDate = Timestamp(millisecondsSince1970: at)
        var renewal = s.renewal
        renewal.signedDate = Timestamp(millisecondsSince1970: at)
        self.notifications.append(
            SimNotification(
                uuid: ScenarioGenerator.uuid("\(s.original)-\(self.notifications.count)", self.index), type: type,
                subtype: subtype, signedDate: at,
                transaction: transaction, renewal: renewal, status: status, customer: s.customer))
    }

    // MARK: One-time purchases

    private mutating func nonConsumable() -> String {
        let outcome = ["kept", "refunded", "refund-reversed"].randomElement(using: &self.random)!
        let original = String(3_000_000_000_000 + self.generator.idOffset + Int64(self.index) * 100)
        let at = self.epoch - Int64.random(in: 2 * day...20 * day, using: &self.random)
        var transaction = self.oneTime(
            original: original, product: ScenarioGenerator.lifetimeProduct, type: .nonConsumable, at: at)
        self.notifyOneTime("ONE_TIME_CHARGE", transaction, at: at + 60_000)
        if Bool.random(using: &self.random) { self.notifyOneTime("REFUND_DECLINED", transaction, at: at + self.hour) }
        if outcome != "kept" {
            transaction.revocationDate = Timestamp(millisecondsSince1970: at + self.day)
            transaction.rawRevocationReason = 1
            transaction.revocationType = .refundFull
            self.notifyOneTime("REFUND", transaction, at: at + self.day)
        }
        if outcome == "refund-reversed" {
            transaction.revocationDate = nil
            transaction.rawRevocationReason = nil
            transaction.rawRevocationType = nil
            self.notifyOneTime("REFUND_REVERSED", transaction, at: at + 2 * self.day)
        }
        self.purchases.append(
            SimPurchase(
                originalTransactionId: original, customer: original, productId: ScenarioGenerator.lifetimeProduct,
                productType: .nonConsumable, transactions: [transaction]))
        self.expected = ExpectedEntitlement(
            customer: original, productId: ScenarioGenerator.lifetimeProduct, originalTransactionId: original,
            active: outcome != "refunded", revoked: outcome == "refunded")
        return "lifetime " + outcome
    }

    private mutating func consumable() -> String {
        let original = String(4_000_000_000_000 + self.generator.idOffset + Int64(self.index) * 100)
        let at = self.epoch - Int64.random(in: 2 * day...20 * day, using: &self.random)
        var transaction = self.oneTime(
            original: original, product: ScenarioGenerator.consumableProduct, type: .consumable, at: at)
        self.notifyOneTime("ONE_TIME_CHARGE", transaction, at: at + 60_000)
        let refunded = Bool.random(using: &self.random)
        if refunded {
            self.notifyOneTime("CONSUMPTION_REQUEST", transaction, at: at + self.hour)
            transaction.revocationDate = Timestamp(millisecondsSince1970: at + self.day)
            transaction.rawRevocationReason = 0
            self.notifyOneTime("REFUND", transaction, at: at + self.day)
        }
        self.purchases.append(
            SimPurchase(
                originalTransactionId: original, customer: original, productId: ScenarioGenerator.consumableProduct,
                productType: .consumable, transactions: [transaction]))
        return refunded ? "consumable refunded" : "consumable"
    }

    /// A one-time purchase's transaction.
    private func oneTime(original: String, product: String, type: ProductType, at: Int64)
        -> JWSTransactionDecodedPayload
    {
        var t = JWSTransactionDecodedPayload()
        t.originalTransactionId = original
        t.transactionId = original
        t.bundleId = self.generator.bundleId
        t.productId = product
        t.purchaseDate = Timestamp(millisecondsSince1970: at)
        t.originalPurchaseDate = t.purchaseDate
        t.quantity = 1
        t.type = type
        t.inAppOwnershipType = .purchased
        t.environment = self.generator.environment
        t.transactionReason = .purchase
        t.appTransactionId = SimAppTransactionIds.appTransactionId(forOriginal: original)
        t.storefront = "USA"
        t.storefrontId = "143441"
        t.currency = "USD"
        t.price = 9990
        return t
    }

    /// Records a notification about a one-time purchase.
    private mutating func notifyOneTime(_ type: String, _ transaction: JWSTransactionDecodedPayload, at: Int64) {
        var signed = transaction
        signed.signedDate = Timestamp(millisecondsSince1970: at)
        self.notifications.append(
            SimNotification(
                uuid: ScenarioGenerator.uuid(
                    "\(transaction.originalTransactionId!)-\(self.notifications.count)", self.index), type: type,
                subtype: nil, signedDate: at, transaction: signed, customer: transaction.originalTransactionId))
    }
}

/// A subscription while its life cycle is being built.
struct SubscriptionState {
    let original: String
    @_spi(Testing) public let customer: String
    let token: String?
    let family: Bool
    /// Assigned to the customer by an organization (API 1.22: `ASSIGNED`): one subscription in sixteen that is not
    /// family-shared, chosen by a hash of its id so the seeded random stream stays as it was.
    let assigned: Bool
    let start: Int64
    let generator: ScenarioGenerator
    /// The product subscribed to (an Advanced Commerce subscription has a product of its own).
    @_spi(Testing) public let productId: String
    @_spi(Testing) public var transactions: [JWSTransactionDecodedPayload] = []
    var renewal: JWSRenewalInfoDecodedPayload

    init(
        original: String, customer: String, token: String?, family: Bool, start: Int64, generator: ScenarioGenerator,
        productId: String = ScenarioGenerator.subscriptionProduct
    ) {
        self.original = original
        self.customer = customer
        self.token = token
        self.family = family
        var hash = StableHash()
        hash.add("assigned-" + original)
        self.assigned = !family && hash.value % 16 == 0
        self.start = start
        self.generator = generator
        self.productId = productId
        var renewal = JWSRenewalInfoDecodedPayload()
        renewal.originalTransactionId = original
        renewal.productId = productId
        renewal.autoRenewProductId = productId
        renewal.rawAutoRenewStatus = 1
        renewal.isInBillingRetryPeriod = false
        renewal.environment = generator.environment
        renewal.recentSubscriptionStartDate = Timestamp(millisecondsSince1970: start)
        renewal.appAccountToken = token
        // What renewal info carries since API 1.22 (renewalPrice since 2024): the next renewal's price and plan.
        renewal.renewalPrice = 4990
        renewal.currency = "USD"
        renewal.renewalBillingPlanType = .billedUpfront
        self.renewal = renewal
    }

    /// The `number`-th transaction (0: the purchase) for the period `[from, until)`.
    @_spi(Testing) public func transaction(number: Int64, from: Int64, until: Int64) -> JWSTransactionDecodedPayload {
        var t = JWSTransactionDecodedPayload()
        t.originalTransactionId = self.original
        t.transactionId = number == 0 ? self.original : String(Int64(self.original)! + number)
        t.webOrderLineItemId = String(Int64(self.original)! * 10 + number)
        t.bundleId = self.generator.bundleId
        t.productId = self.productId
        t.subscriptionGroupIdentifier = ScenarioGenerator.subscriptionGroup
        t.purchaseDate = Timestamp(millisecondsSince1970: from)
        t.originalPurchaseDate = Timestamp(millisecondsSince1970: self.start)
        t.expiresDate = Timestamp(millisecondsSince1970: until)
        t.quantity = 1
        t.type = .autoRenewableSubscription
        t.appAccountToken = self.token
        t.inAppOwnershipType = self.family ? .familyShared : self.assigned ? .assigned : .purchased
        t.environment = self.generator.environment
        t.transactionReason = number == 0 ? .purchase : .renewal
        t.appTransactionId = SimAppTransactionIds.appTransactionId(forOriginal: self.original)
        t.storefront = "USA"
        t.storefrontId = "143441"
        t.currency = "USD"
        t.price = 4990
        t.billingPlanType = .billedUpfront
        return t
    }
}
