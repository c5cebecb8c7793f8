import Foundation

/// Where a registered webhook URL may point, so that registering one is no way to make the dispatcher call inside the
/// cluster (server-side request forgery): `https` only, and never a loopback, link-local, private, shared (CGNAT),
/// unspecified, multicast or reserved address, unless the operator allows it (a local run, a test). The host's
/// addresses are checked as resolved when a delivery connects, so a name that resolves inside is refused too.
public struct EndpointAddressPolicy: Sendable, Hashable {
    /// Whether `http` and the addresses above are allowed (local runs and tests only).
    public var allowsPrivate: Bool

    public init(allowsPrivate: Bool = false) {
        self.allowsPrivate = allowsPrivate
    }

    /// Why a URL may not be registered (nil: it may): its scheme and, for a literal address, the address.
    public func refusal(of url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return "not an absolute URL" }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "https" || (scheme == "http" && self.allowsPrivate) else {
            return self.allowsPrivate ? "the URL must be http or https" : "the URL must be https"
        }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else { return "a URL with credentials is not accepted" }
        var host = Substring(authority)
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return "a malformed IPv6 address" }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        guard !host.isEmpty else { return "the URL names no host" }
        if host.lowercased() == "localhost" || host.lowercased().hasSuffix(".localhost") {
            return self.allowsPrivate ? nil : "localhost is not a public address"
        }
        if let bytes = Self.ipv4(host) ?? Self.ipv6(host) { return self.refusal(ofAddress: bytes) }
        return nil
    }

    /// Why a connection to this address (4 or 16 bytes, as resolved) is refused; nil: it is public.
    public func refusal(ofAddress bytes: [UInt8]) -> String? {
        guard !self.allowsPrivate, let kind = Self.nonPublicKind(bytes) else { return nil }
        return "\(kind) addresses are not reachable from the dispatcher"
    }

    /// What kind of non-public address `bytes` is, or nil for a public one.
    static func nonPublicKind(_ bytes: [UInt8]) -> String? {
        if bytes.count == 16 {
            // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms are judged as the IPv4 address they carry.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                return Self.nonPublicKind(Array(bytes[12..<16]))
            }
            if bytes.allSatisfy({ $0 == 0 }) { return "unspecified" }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return "loopback" }
            if bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 { return "link-local" }
            if bytes[0] & 0xfe == 0xfc { return "private" }
            if bytes[0] == 0xff { return "multicast" }
            return nil
        }
        guard bytes.count == 4 else { return "malformed" }
        switch (bytes[0], bytes[1]) {
        case (0, _): return "unspecified"
        case (127, _): return "loopback"
        case (10, _), (192, 168): return "private"
        case (172, 16...31): return "private"
        case (169, 254): return "link-local"
        case (100, 64...127): return "shared (CGNAT)"
        case (224...239, _): return "multicast"
        case (240...255, _): return "reserved"
        default: return nil
        }
    }

    /// The four bytes of a dotted IPv4 literal.
    static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let bytes = parts.compactMap { $0.count <= 3 ? UInt8($0) : nil }
        return bytes.count == 4 ? bytes : nil
    }

    /// The sixteen bytes of an IPv6 literal (with `::`, and a dotted IPv4 tail).
    static func ipv6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":") else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains("."), let tail = Self.ipv4(piece) {
                    bytes += tail
                } else {
                    guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                    bytes += [UInt8(value >> 8), UInt8(value & 0xff)]
                }
            }
            return bytes
        }
        guard let head = groups(halves[0]) else { return nil }
        let tail = halves.count == 2 ? groups(halves[1]) : []
        guard let tail else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}
