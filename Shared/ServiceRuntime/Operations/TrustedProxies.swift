import Foundation
public import HTTPTypes
public import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Who sent a request, for budgets kept per source: the peer address, or behind proxies the operator names
/// (`HTTP_TRUSTED_PROXIES`), the first hop of `X-Forwarded-For` from the right that is not one of them. A client
/// can write anything to the left of what its proxy appends, never to the right, so walking from the right stops at
/// the address the proxy saw. An IPv6 source counts per /64 (one host has a whole /64 to choose from).
public struct TrustedProxies: Sendable, Hashable {
    /// One network: its address bytes (4 or 16) and prefix length.
    struct Network: Sendable, Hashable {
        var bytes: [UInt8]
        var prefix: Int

        /// Whether `address` (of the same family) lies in the network.
        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == self.bytes.count else { return false }
            var remaining = self.prefix
            for (mine, theirs) in zip(self.bytes, address) where remaining > 0 {
                let bits = min(remaining, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                guard mine & mask == theirs & mask else { return false }
                remaining -= bits
            }
            return true
        }
    }

    let networks: [Network]

    /// No proxies: the peer is the source.
    public static let none = TrustedProxies(networks: [])

    init(networks: [Network]) {
        self.networks = networks
    }

    /// Parses addresses and CIDR networks (`10.0.0.0/8`, `127.0.0.1`, `fd00::/8`); throws naming a bad entry.
    public init(parsing entries: [String]) throws(SettingsError) {
        var networks: [Network] = []
        for entry in entries {
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = Self.addressBytes(parts[0]) else {
                throw SettingsError("HTTP_TRUSTED_PROXIES: \(entry) is not an IP address or CIDR network")
            }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...bytes.count * 8).contains(prefix) else {
                throw SettingsError("HTTP_TRUSTED_PROXIES: \(entry) has a bad prefix length")
            }
            networks.append(Network(bytes: bytes, prefix: prefix))
        }
        self.networks = networks
    }

    // MARK: The source

    /// The source of a request from `peer` carrying `forwardedFor` (every `X-Forwarded-For` value, in order).
    public func source(peer: SocketAddress?, forwardedFor: [String]) -> String {
        let peerText = peer?.ipAddress ?? "unknown"
        guard let peerBytes = Self.addressBytes(peerText), self.isTrusted(peerBytes) else {
            return Self.key(peerText)
        }
        var nearest = peerText
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map(Self.bareAddress)
        for hop in hops.reversed() {
            guard let bytes = Self.addressBytes(hop) else { break }
            guard self.isTrusted(bytes) else { return Self.key(hop) }
            nearest = hop
        }
        return Self.key(nearest)
    }

    /// Whether an address is one of the trusted proxies.
    func isTrusted(_ address: [UInt8]) -> Bool {
        self.networks.contains { $0.contains(address) }
    }

    /// The budget key of an address: itself (IPv4, also when written IPv4-mapped), its /64 (IPv6), or the text when
    /// it is none.
    static func key(_ address: String) -> String {
        guard let bytes = Self.addressBytes(address) else { return address }
        guard bytes.count == 16 else { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 8, by: 2).map { String(format: "%02x%02x", bytes[$0], bytes[$0 + 1]) }
            .joined(separator: ":") + "::/64"
    }

    // MARK: Parsing

    /// An `X-Forwarded-For` entry without spaces, brackets or port (`[2001:db8::1]:443`, `192.0.2.1:8080`).
    static func bareAddress(_ entry: Substring) -> String {
        var text = entry.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("["), let end = text.firstIndex(of: "]") {
            text = String(text[text.index(after: text.startIndex)..<end])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = String(text[..<colon])
        }
        return text
    }

    /// The bytes of an IPv4 (4) or IPv6 (16) address; an IPv4-mapped IPv6 address gives its IPv4 bytes.
    static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &v4) == 1 { return v4 }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, text, &bytes) == 1 else { return nil }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return Array(bytes[12...])
        }
        return bytes
    }
}

extension HTTPField.Name {
    /// `X-Forwarded-For`: the addresses a request passed through, client first (``TrustedProxies``).
    public static let xForwardedFor = HTTPField.Name("x-forwarded-for")!
}
