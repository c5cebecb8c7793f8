import AppStoreModels
import Foundation

/// Generates whole life cycles for many customers, every event in the past relative to `epoch`, with the
/// App Store's final state and each customer's expected entitlement (computed from the sim's own model,
/// never from the pipeline's rules).
///
/// Auto-renewables end active, expired voluntarily, expired after billing retry, in grace now, out of grace,
/// recovered from grace, with an old period refunded, with the latest period refunded, refunded and
/// reversed, or (family members) revoked; side events (price increase, downgrade, offer, consumption request,
/// refund declined, Advanced Commerce updates) change no access. One in twenty is migrated to the Advanced Commerce
/// API (a new subscription continues it; half of them then have an item refunded). One-time purchases are kept, refunded, or
/// refunded and reversed; consumables grant nothing lasting. App-level notifications (TEST, RENEWAL_EXTENSION
/// SUMMARY, EXTERNAL_PURCHASE_TOKEN, RESCIND_CONSENT) complete every type of §1.1.
@_spi(Testing) public struct ScenarioGenerator {
    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    static let period: Int64 = 7 * day
    @_spi(Testing) public static let subscriptionProduct = "com.example.pro.weekly"
    static let lifetimeProduct = "com.example.lifetime"
    static let consumableProduct = "com.example.coins"
    /// The product of subscriptions migrated to the Advanced Commerce API (its SKUs are the developer's own).
    static let advancedCommerceProduct = "com.example.pro.advanced"
    /// The subscription group of the subscription products.
    static let subscriptionGroup = "21000001"

    var bundleId: String
    var appAppleId: Int64
    @_spi(Testing) public var environment: Environment
    /// Now, as the scenario sees it; every event is signed before it.
    var epoch: Int64
    /// Whether REFUND notifications of subscriptions carry `data.status`, as Apple's do (off: the pipeline must ask
    /// refund-resolver about every one).
    var refundCarriesStatus = true

    /// Added to every original transaction id, so Sandbox and Production purchases never share one (as at
    /// Apple), while their customers may share an appAccountToken.
    var idOffset: Int64 { self.environment == .production ? 0 : 10_000_000_000_000 }

    /// A run of `customers` customers from `seed`.
    func generate(customers: Int, seed: UInt64) -> Scenario {
        var random = SimRandom(seed: seed)
        var scenario = Scenario(notifications: [], purchases: [:], expected: [], lifeCycles: [:])
        for index in 0..<customers {
            var builder = LifeCycleBuilder(generator: self, index: index, random: SimRandom(seed: random.next()))
            let name = builder.build()
            scenario.lifeCycles[name, default: 0] += 1
            scenario.notifications += builder.notifications
            for var purchase in builder.purchases {
                purchase.environment = self.environment
                scenario.purchases[purchase.originalTransactionId] = purchase
            }
            if var expected = builder.expected {
                expected.environment = self.environment.rawValue
                scenario.expected.append(expected)
            }
        }
        scenario.notifications += self.appLevelNotifications()
        for index in scenario.notifications.indices { scenario.notifications[index].environment = self.environment }
        scenario.notifications.sort { ($0.signedDate, $0.uuid) < ($1.signedDate, $1.uuid) }
        scenario.expected.sort()
        return scenario
    }

    /// Notifications about the app rather than a customer.
    func appLevelNotifications() -> [SimNotification] {
        let at = self.epoch - 2 * Self.hour
        let app = "app-" + self.environment.rawValue
        return [
            SimNotification(uuid: Self.uuid(app, 1), type: "TEST", subtype: nil, signedDate: at),
            SimNotification(
                uuid: Self.uuid(app, 2), type: "RENEWAL_EXTENSION", subtype: "SUMMARY", signedDate: at + 1,
                container: .summary),
            SimNotification(
                uuid: Self.uuid(app, 3), type: "EXTERNAL_PURCHASE_TOKEN", subtype: "UNREPORTED", signedDate: at + 2,
                container: .externalPurchaseToken),
            SimNotification(
                uuid: Self.uuid(app, 4), type: "RESCIND_CONSENT", subtype: nil, signedDate: at + 3, container: .appData),
        ]
    }

    /// A UUID derived from a name and a number (stable per seed).
    @_spi(Testing) public static func uuid(_ name: String, _ number: Int) -> String {
        var hasher = StableHash()
        hasher.add(name)
        let high = hasher.value
        let low = UInt64(truncatingIfNeeded: number) &* 0x9E37_79B9_7F4A_7C15 ^ high.rotateLeft(17)
        let b = withUnsafeBytes(of: high.bigEndian) { Array($0) } + withUnsafeBytes(of: low.bigEndian) { Array($0) }
        var bytes = b
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        ).uuidString.lowercased()
    }
}

/// FNV-1a over UTF-8, stable across processes (unlike `Hasher`).
struct StableHash {
    var value: UInt64 = 0xCBF2_9CE4_8422_2325
    mutating func add(_ text: String) {
        for byte in text.utf8 {
            self.value ^= UInt64(byte)
            self.value = self.value &* 0x0000_0100_0000_01B3
        }
    }
}

extension UInt64 {
    /// Rotates the bits left.
    func rotateLeft(_ count: Int) -> UInt64 { (self << UInt64(count)) | (self >> UInt64(64 - count)) }
}
