import Crypto
import Foundation
import Testing

@testable import Entitlements

/// An event's id never changes between versions: the same parts give the same id the first implementation gave
/// (SHA-256 of the parts joined by U+001F, its first 16 bytes as a version 8 UUID, lower case), so a notification
/// redelivered after an upgrade publishes events consumers already deduplicate.
@Suite struct EventIDTests {
    @Test func aKnownIDIsTheSameAsEver() {
        let id = EntitlementEvent.stableID(
            "00000000-0000-4000-8000-000000000001", "entitlement.granted", "customer-1", "product.monthly")
        #expect(id == "dfb3cbe5-2e4f-8f27-9dbc-3a17e56674f1")
    }

    @Test func everyIDEqualsTheFirstImplementations() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcXYZ019-_./:é😀\u{1F}\u{0}")
        for round in 0..<2_000 {
            let parts = (0..<Int.random(in: 1...5, using: &generator)).map { _ in
                String((0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement()! })
            }
            let id: String
            switch parts.count {
            case 1: id = EntitlementEvent.stableID(parts[0])
            case 2: id = EntitlementEvent.stableID(parts[0], parts[1])
            case 3: id = EntitlementEvent.stableID(parts[0], parts[1], parts[2])
            case 4: id = EntitlementEvent.stableID(parts[0], parts[1], parts[2], parts[3])
            default: id = EntitlementEvent.stableID(parts[0], parts[1], parts[2], parts[3], parts[4])
            }
            #expect(id == Self.firstImplementation(parts), "round \(round): \(parts)")
        }
    }

    /// The id as the first implementation made it, through Foundation's `UUID`.
    static func firstImplementation(_ parts: [String]) -> String {
        var b = Array(SHA256.hash(data: Data(parts.joined(separator: "\u{1F}").utf8)).prefix(16))
        b[6] = (b[6] & 0x0F) | 0x80
        b[8] = (b[8] & 0x3F) | 0x80
        let uuid = UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
        return uuid.uuidString.lowercased()
    }
}
