import Foundation
import Testing
import Webhooks

/// The parts of a webhook delivery that are plain values: the secret's text form, the headers' shape, and which
/// endpoint URLs and addresses a delivery may go to.
@Suite struct WebhookPartsTests {
    @Test func aSecretReadsBackFromItsTextAndBadOnesAreRefused() {
        let secret = WebhookSecret.generate()
        #expect(secret.key.count == 32 && secret.description.hasPrefix("whsec_"))
        #expect(WebhookSecret(secret.description) == secret)
        #expect(WebhookSecret.generate() != secret, "each secret is new")
        let short = "whsec_" + Data(repeating: 1, count: 16).base64EncodedString()
        for text in [
            "", "whsec_", "whsec_not base64!", "sk_" + Data(repeating: 1, count: 32).base64EncodedString(), short,
        ] {
            #expect(WebhookSecret(text) == nil, "\(text)")
        }
    }

    @Test func theHeadersCarryTheIdTheTimestampAndOneSignaturePerSecret() {
        let secrets = [WebhookSecret.generate(), WebhookSecret.generate()]
        let headers = StandardWebhookSignature.headers(
            id: "msg_1", timestamp: Date(timeIntervalSince1970: 1_700_000_000.9), body: Array("{}".utf8),
            secrets: secrets)
        let named = Dictionary(uniqueKeysWithValues: headers.map { ($0.name, $0.value) })
        #expect(named["webhook-id"] == "msg_1" && named["webhook-timestamp"] == "1700000000")
        let signatures = named["webhook-signature"]?.split(separator: " ") ?? []
        #expect(signatures.count == 2 && signatures.allSatisfy { $0.hasPrefix("v1,") })
        #expect(Set(signatures).count == 2, "each secret signs differently")
    }

    @Test func onlyPublicHTTPSEndpointsUnlessTheOperatorAllowsPrivateOnes() {
        let policy = EndpointAddressPolicy()
        for url in ["https://hooks.example.com/iap", "https://93.184.216.34:8443/x", "https://[2606:4700::1111]/x"] {
            #expect(policy.refusal(of: url) == nil, "\(url)")
        }
        let refused = [
            "http://hooks.example.com/iap", "ftp://example.com", "hooks.example.com", "https://user:pw@example.com/",
            "https://localhost/x", "https://api.localhost/x", "https://127.0.0.1/x", "https://10.1.2.3/x",
            "https://172.20.0.1/x", "https://192.168.1.1/x", "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/x", "https://0.0.0.0/x", "https://[::1]:8080/x", "https://[fe80::1]/x",
            "https://[fd00::1]/x", "https://[::ffff:10.0.0.1]/x", "https://[::ffff:127.0.0.1]/x", "https://224.0.0.1/x",
        ]
        for url in refused {
            #expect(policy.refusal(of: url) != nil, "\(url)")
        }
        let local = EndpointAddressPolicy(allowsPrivate: true)
        #expect(local.refusal(of: "http://127.0.0.1:8080/hook") == nil)
        #expect(local.refusal(of: "ftp://127.0.0.1/") != nil, "still http or https")
        // A name is judged by what it resolves to when a delivery connects.
        #expect(policy.refusal(ofAddress: [10, 0, 0, 5]) != nil)
        #expect(policy.refusal(ofAddress: [8, 8, 8, 8]) == nil)
        #expect(policy.refusal(ofAddress: [UInt8](repeating: 0, count: 15) + [1]) != nil, "::1")
        #expect(policy.refusal(ofAddress: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]) == nil)
    }
}
