import AppStoreModels
import Foundation
import Mustache
import Storage

/// The support console's customer fragment as a Mustache template: every value is escaped by the template engine
/// (`{{…}}` escapes `& < > " '`), the markup is the template's own, and no value is ever written unescaped.
enum SupportFragment {
    /// The parsed template (parsed once; a parse error is a programming error caught by the tests).
    static let template: MustacheTemplate = {
        do { return try MustacheTemplate(string: Self.text) } catch {
            fatalError("the support fragment's template does not parse: \(error)")
        }
    }()

    // MARK: The values, all text

    /// What the template renders: the view with every instant as UTC text and every flag as a boolean.
    struct Model {
        struct Entitlement {
            var environment, entitlementId, productId: String, active: Bool, validUntil, revokedAt, purchase,
                ownership: String
        }
        struct Subscription {
            var environment, purchase, productId, status, expires, graceUntil, billingRetry, autoRenew,
                nextProduct: String
        }
        struct Purchase { var environment, transactionId, purchase, productId, type, bought, refunded: String }
        struct Step {
            var signed, notification, environment, purchase, outcome: String, duplicates: String?, detail: String
        }
        struct Rejection { var recorded, position, reason, detail, notification: String, replayed: Bool }
        struct Consumption {
            var requested, transactionId, reason, deadline, status, attempts, answered, detail: String
        }
        struct Refund { var transactionId, productId, refunded, reason: String }

        var customer, bundleId, query, asOf: String
        var notes: [String]
        var entitlements: [Entitlement]
        var subscriptions: [Subscription]
        var purchases: [Purchase]
        var timeline: [Step]
        var deadLetters: [Rejection]
        var consumptionRequests: [Consumption]
        var refunds: [Refund]
        var hasEntitlements, hasSubscriptions, hasPurchases, hasTimeline, hasDeadLetters, hasConsumptionRequests,
            refundsAsked, hasRefunds: Bool

        init(_ view: SupportView, bundleId: String) {
            self.customer = view.customer
            self.bundleId = bundleId
            self.query = view.query
            self.asOf = Self.time(view.asOf)
            self.notes = view.notes
            self.entitlements = view.entitlements.map {
                Entitlement(
                    environment: $0.environment, entitlementId: $0.entitlementId, productId: $0.productId,
                    active: $0.active,
                    validUntil: Self.time($0.validUntil), revokedAt: Self.time($0.revokedAt),
                    purchase: $0.originalTransactionId,
                    ownership: $0.ownershipType)
            }
            self.subscriptions = view.subscriptions.map {
                Subscription(
                    environment: $0.environment, purchase: $0.originalTransactionId, productId: $0.productId,
                    status: Self.statusName($0.status), expires: Self.time($0.expiresDate),
                    graceUntil: Self.time($0.gracePeriodExpiresDate),
                    billingRetry: $0.isInBillingRetry.map { $0 ? "yes" : "no" } ?? "",
                    autoRenew: $0.autoRenewStatus.map { $0 == 1 ? "on" : "off" } ?? "",
                    nextProduct: $0.autoRenewProductId ?? "")
            }
            self.purchases = view.purchases.map {
                Purchase(
                    environment: $0.environment, transactionId: $0.transactionId, purchase: $0.originalTransactionId,
                    productId: $0.productId,
                    type: $0.productType ?? "", bought: Self.time($0.purchaseDate),
                    refunded: Self.time($0.revocationDate))
            }
            self.timeline = view.timeline.map {
                Step(
                    signed: Self.time($0.signedDate), notification: $0.type + ($0.subtype.map { " / " + $0 } ?? ""),
                    environment: $0.environment,
                    purchase: $0.subject, outcome: $0.outcome,
                    duplicates: $0.duplicates > 0 ? "\($0.duplicates) duplicate\($0.duplicates == 1 ? "" : "s")" : nil,
                    detail: $0.detail ?? "")
            }
            self.deadLetters = view.deadLetters.map {
                Rejection(
                    recorded: ISO8601DateFormatter().string(from: $0.recordedAt), position: $0.position,
                    reason: $0.reason,
                    detail: $0.detail ?? "", notification: $0.notificationUUID ?? "", replayed: $0.replayedAt != nil)
            }
            self.consumptionRequests = view.consumptionRequests.map {
                Consumption(
                    requested: Self.time($0.requestedAt), transactionId: $0.transactionId, reason: $0.reason ?? "",
                    deadline: Self.time($0.deadline), status: $0.status, attempts: String($0.attempts),
                    answered: Self.time($0.answeredAt),
                    detail: $0.detail ?? "")
            }
            self.refunds = (view.refunds ?? []).map {
                Refund(
                    transactionId: $0.transactionId ?? "", productId: $0.productId ?? "",
                    refunded: Self.time($0.revocationDate?.millisecondsSince1970),
                    reason: $0.rawRevocationReason.map(String.init) ?? "")
            }
            self.hasEntitlements = !self.entitlements.isEmpty
            self.hasSubscriptions = !self.subscriptions.isEmpty
            self.hasPurchases = !self.purchases.isEmpty
            self.hasTimeline = !self.timeline.isEmpty
            self.hasDeadLetters = !self.deadLetters.isEmpty
            self.hasConsumptionRequests = !self.consumptionRequests.isEmpty
            self.refundsAsked = view.refunds != nil
            self.hasRefunds = !self.refunds.isEmpty
        }

        /// An epoch-ms instant as UTC text (empty when absent).
        static func time(_ millis: Int64?) -> String {
            guard let millis else { return "" }
            return ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
        }

        /// Apple's subscription status name.
        static func statusName(_ status: Int32?) -> String {
            switch status {
            case 1?: "active"
            case 2?: "expired"
            case 3?: "billing retry"
            case 4?: "grace period"
            case 5?: "revoked"
            default: ""
            }
        }
    }

    // MARK: The template

    static let text = """
        <section id="customer" data-customer="{{customer}}">
        <h2>Customer <code>{{customer}}</code></h2>
        <p class="meta">App {{bundleId}} · searched for <code>{{query}}</code> · as of {{asOf}}</p>
        {{#notes}}<p class="note">{{.}}</p>{{/notes}}
        <p><button data-action="resync" data-customer="{{customer}}">Resync this customer from Apple</button></p>
        <h3>Entitlements now</h3>
        {{#hasEntitlements}}<table id="entitlements"><thead><tr><th>Environment</th><th>Entitlement</th><th>Product</th><th>Access</th><th>Valid until</th><th>Revoked</th><th>Purchase</th><th>Ownership</th></tr></thead><tbody>
        {{#entitlements}}<tr><td>{{environment}}</td><td>{{entitlementId}}</td><td>{{productId}}</td><td>{{#active}}<b class="yes">active</b>{{/active}}{{^active}}<b class="no">no access</b>{{/active}}</td><td>{{validUntil}}</td><td>{{revokedAt}}</td><td><code>{{purchase}}</code></td><td>{{ownership}}</td></tr>
        {{/entitlements}}</tbody></table>{{/hasEntitlements}}{{^hasEntitlements}}<p class="empty" id="entitlements">none</p>{{/hasEntitlements}}
        <h3>Subscriptions</h3>
        {{#hasSubscriptions}}<table id="subscriptions"><thead><tr><th>Environment</th><th>Purchase</th><th>Product</th><th>Status</th><th>Expires</th><th>Grace until</th><th>Billing retry</th><th>Auto-renew</th><th>Next product</th><th></th></tr></thead><tbody>
        {{#subscriptions}}<tr><td>{{environment}}</td><td><code>{{purchase}}</code></td><td>{{productId}}</td><td>{{status}}</td><td>{{expires}}</td><td>{{graceUntil}}</td><td>{{billingRetry}}</td><td>{{autoRenew}}</td><td>{{nextProduct}}</td><td><button data-action="extend" data-original="{{purchase}}" data-environment="{{environment}}">Extend…</button></td></tr>
        {{/subscriptions}}</tbody></table>{{/hasSubscriptions}}{{^hasSubscriptions}}<p class="empty" id="subscriptions">none</p>{{/hasSubscriptions}}
        <h3>Other purchases</h3>
        {{#hasPurchases}}<table id="purchases"><thead><tr><th>Environment</th><th>Transaction</th><th>Purchase</th><th>Product</th><th>Type</th><th>Bought</th><th>Refunded</th></tr></thead><tbody>
        {{#purchases}}<tr><td>{{environment}}</td><td>{{transactionId}}</td><td>{{purchase}}</td><td>{{productId}}</td><td>{{type}}</td><td>{{bought}}</td><td>{{refunded}}</td></tr>
        {{/purchases}}</tbody></table>{{/hasPurchases}}{{^hasPurchases}}<p class="empty" id="purchases">none</p>{{/hasPurchases}}
        <h3>Timeline</h3>
        {{#hasTimeline}}<table id="timeline"><thead><tr><th>Signed</th><th>Notification</th><th>Environment</th><th>Purchase</th><th>Outcome</th><th>Duplicates</th><th>Detail</th></tr></thead><tbody>
        {{#timeline}}<tr><td>{{signed}}</td><td>{{notification}}</td><td>{{environment}}</td><td>{{purchase}}</td><td><span class="outcome {{outcome}}">{{outcome}}</span></td><td>{{#duplicates}}<span class="outcome duplicate">{{duplicates}}</span>{{/duplicates}}</td><td>{{detail}}</td></tr>
        {{/timeline}}</tbody></table>{{/hasTimeline}}{{^hasTimeline}}<p class="empty" id="timeline">none</p>{{/hasTimeline}}
        <h3>Rejected (DLQ)</h3>
        {{#hasDeadLetters}}<table id="dead-letters"><thead><tr><th>Recorded</th><th>Position</th><th>Reason</th><th>Detail</th><th>Notification</th><th></th></tr></thead><tbody>
        {{#deadLetters}}<tr><td>{{recorded}}</td><td>{{position}}</td><td><b>{{reason}}</b></td><td>{{detail}}</td><td>{{notification}}</td><td>{{#replayed}}replayed{{/replayed}}{{^replayed}}<button data-action="replay" data-position="{{position}}">Replay</button>{{/replayed}}</td></tr>
        {{/deadLetters}}</tbody></table>{{/hasDeadLetters}}{{^hasDeadLetters}}<p class="empty" id="dead-letters">none</p>{{/hasDeadLetters}}
        <h3>Consumption requests</h3>
        {{#hasConsumptionRequests}}<table id="consumption"><thead><tr><th>Requested</th><th>Transaction</th><th>Reason</th><th>Deadline</th><th>Status</th><th>Attempts</th><th>Answered</th><th>Detail</th></tr></thead><tbody>
        {{#consumptionRequests}}<tr><td>{{requested}}</td><td>{{transactionId}}</td><td>{{reason}}</td><td>{{deadline}}</td><td><b>{{status}}</b></td><td>{{attempts}}</td><td>{{answered}}</td><td>{{detail}}</td></tr>
        {{/consumptionRequests}}</tbody></table>{{/hasConsumptionRequests}}{{^hasConsumptionRequests}}<p class="empty" id="consumption">none</p>{{/hasConsumptionRequests}}
        {{#refundsAsked}}<h3>Refund history (Apple)</h3>
        {{#hasRefunds}}<table id="refunds"><thead><tr><th>Transaction</th><th>Product</th><th>Refunded</th><th>Reason</th></tr></thead><tbody>
        {{#refunds}}<tr><td>{{transactionId}}</td><td>{{productId}}</td><td>{{refunded}}</td><td>{{reason}}</td></tr>
        {{/refunds}}</tbody></table>{{/hasRefunds}}{{^hasRefunds}}<p class="empty" id="refunds">none</p>{{/hasRefunds}}{{/refundsAsked}}
        </section>
        """
}
