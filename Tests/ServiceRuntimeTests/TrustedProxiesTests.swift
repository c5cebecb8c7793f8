import NIOCore
import ServiceRuntime
import Testing

@testable import ServiceRuntime

/// Who a request came from, behind the proxies an operator names and without them.
@Suite struct TrustedProxiesTests {
    static let proxies = try! TrustedProxies(parsing: ["10.0.0.0/8", "127.0.0.1", "fd00::/8"])

    static func peer(_ address: String) -> SocketAddress { try! SocketAddress(ipAddress: address, port: 50_000) }

    @Test func withoutTrustedProxiesThePeerIsTheSourceWhateverTheHeaderSays() {
        #expect(TrustedProxies.none.source(peer: Self.peer("192.0.2.7"), forwardedFor: ["17.58.0.1"]) == "192.0.2.7")
        #expect(
            Self.proxies.source(peer: Self.peer("192.0.2.7"), forwardedFor: ["17.58.0.1"]) == "192.0.2.7",
            "a peer that is no trusted proxy cannot name another source")
    }

    @Test func behindProxiesTheFirstUntrustedHopFromTheRightIsTheSource() {
        let cases: [([String], String)] = [
            (["198.51.100.7"], "198.51.100.7"),
            // The client wrote Apple's address itself; its proxy appended the address it saw.
            (["17.58.0.1, 198.51.100.7"], "198.51.100.7"),
            (["17.58.0.1", "198.51.100.7, 10.1.2.3"], "198.51.100.7"),
            (["198.51.100.7:4711, 10.1.2.3"], "198.51.100.7"),
            (["[2001:db8:1:2:3:4:5:6]:443"], "2001:0db8:0001:0002::/64"),
            (["2001:db8:1:2:ffff::9"], "2001:0db8:0001:0002::/64"),
            (["::ffff:198.51.100.7"], "198.51.100.7"),
            ([], "127.0.0.1"),
            // Nothing but proxies, or a hop that is no address: the nearest proxy stands for the source.
            (["10.9.9.9"], "10.9.9.9"),
            (["garbage, 10.9.9.9"], "10.9.9.9"),
        ]
        for (header, expected) in cases {
            #expect(Self.proxies.source(peer: Self.peer("127.0.0.1"), forwardedFor: header) == expected, "\(header)")
        }
    }

    @Test func badEntriesAreSettingErrors() {
        for entry in ["10.0.0.0/33", "example.com", "10.0.0.0/x", "fd00::/129"] {
            #expect(throws: SettingsError.self, "\(entry)") { try TrustedProxies(parsing: [entry]) }
        }
    }

    @Test func theKeyedLimiterForgetsFullBucketsAndStaysBounded() {
        let limiter = KeyedRateLimiter(maximumKeys: 3)
        let start = ContinuousClock.now
        for key in ["a", "b", "c"] { #expect(limiter.take(keyId: key, ratePerSecond: 1, now: start) == nil) }
        #expect(limiter.take(keyId: "d", ratePerSecond: 1, now: start) == nil, "a fourth shares the overflow bucket")
        #expect(limiter.take(keyId: "e", ratePerSecond: 1, now: start) != nil, "which is then empty")
        #expect(limiter.trackedKeys == 4)
        #expect(
            limiter.take(keyId: "e", ratePerSecond: 1, now: start + .seconds(2)) == nil,
            "once the others refilled they are forgotten and a new key gets its own bucket")
        #expect(limiter.trackedKeys == 1)
    }
}
