import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP client socket on loopback: what a slow or stalling client does to a server (a head sent in
/// pieces, a body announced and never sent), which an HTTP client library will not do.
public final class LoopbackSocket {
    private let descriptor: Int32

    /// Connects to 127.0.0.1:`port`.
    public init(port: Int) {
        self.descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(self.descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// Sends `text` (nothing when it is empty).
    public func send(_ text: String) {
        guard !text.isEmpty else { return }
        _ = text.utf8CString.withUnsafeBufferPointer {
            Glibc.send(self.descriptor, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL))
        }
    }

    /// What arrives until the peer closes, `until` has arrived, or `bound` seconds pass without a byte.
    public func receive(within bound: TimeInterval, until: String? = nil) -> String {
        var timeout = timeval(tv_sec: Int(bound), tv_usec: 0)
        setsockopt(self.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(self.descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
            if let until, String(decoding: received, as: UTF8.self).contains(until) { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    public func close() { Glibc.close(self.descriptor) }

    /// Connects to 127.0.0.1:`port`, sends `first`, waits `pause`, sends `then`, and returns what the server wrote
    /// (empty when it closed without answering) within `bound`, read until `until` when given. The blocking socket
    /// work runs on a thread of its own, never on Swift's cooperative pool (which may serve the server's handlers).
    public static func exchange(
        port: Int, first: String, pause: Duration = .zero, then: String = "", bound: TimeInterval,
        until: String? = nil
    ) async -> String {
        await withCheckedContinuation { (answered: CheckedContinuation<String, Never>) in
            Thread.detachNewThread {
                let socket = LoopbackSocket(port: port)
                defer { socket.close() }
                socket.send(first)
                Thread.sleep(
                    forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18)
                socket.send(then)
                answered.resume(returning: socket.receive(within: bound, until: until))
            }
        }
    }
}
