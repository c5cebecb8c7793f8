import AppStoreModels
import JWSVerification
import TestSupport
import Testing

/// Arbitrary damage to a valid JWS never crashes the verifier, and nothing altered is ever accepted.
@Suite struct RobustnessTests {
    @Test func mutatedNotificationsAreRefusedOrUnchanged() async throws {
        let fixtures = try SignedFixtures()
        let verifier = try fixtures.verifier()
        let valid = try fixtures.signedNotification()
        let expected = try await verifier.verifyNotification(valid).payload
        let alphabet = Array("ABCxyz019-_.=+/{}\" \u{0}é")
        var random = SeededGenerator(seed: 42)
        var refused = 0
        for _ in 0..<600 {
            var characters = Array(valid)
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                characters[Int.random(in: 0..<characters.count, using: &random)] = alphabet.randomElement(
                    using: &random)!
            case 1:
                characters.removeSubrange(Int.random(in: 0..<characters.count, using: &random)...)
            case 2:
                characters.insert(
                    alphabet.randomElement(using: &random)!, at: Int.random(in: 0..<characters.count, using: &random))
            default:
                characters.remove(at: Int.random(in: 0..<characters.count, using: &random))
            }
            do {
                let verified = try await verifier.verifyNotification(String(characters))
                // Only a change the signature does not cover (trailing padding bits) may pass.
                #expect(verified.payload == expected)
            } catch {
                refused += 1
            }
        }
        #expect(refused > 500)
    }
}
