import AppStoreSigning
import Foundation
import Hummingbird
import Synchronization
import X509

/// The OCSP responder the sim's certificates name (`POST /sim/ocsp`), as Apple's responders serve its PKI, and its
/// switches for tests and operators (`POST /sim/ocsp/state`): revoke the leaf or the intermediate, answer `tryLater`,
/// be unavailable (HTTP 503), or redirect (a 307 to `/sim/ocsp/elsewhere`, which answers good statuses: a client that
/// follows it gets a verdict from a responder the certificate never named).
@_spi(Testing) public final class SimOCSP: Sendable {
    /// How the responder behaves now.
    struct State: Codable, Sendable {
        /// `answering` (statuses), `tryLater` (the OCSP status, no verdict), `unavailable` (HTTP 503) or `redirect`.
        var mode: String = "answering"
        /// Which of `leaf` and `intermediate` are revoked.
        @_spi(Testing) public var revoked: [String] = []

        init() {}

        /// Either field may be left out (its default).
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.mode = try c.decodeIfPresent(String.self, forKey: .mode) ?? "answering"
            self.revoked = try c.decodeIfPresent([String].self, forKey: .revoked) ?? []
        }
    }

    let responder: TestOCSPResponder
    let state: Mutex<State>
    /// How many requests it answered, for tests that wait until the verifier asked.
    @_spi(Testing) public let asked: Mutex<Int>

    init(pki: TestPKI) {
        self.responder = TestOCSPResponder(pki: pki)
        self.state = Mutex(State())
        self.asked = Mutex(0)
    }

    /// Adds the responder and its switches.
    func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("sim/ocsp") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            self.asked.withLock { $0 += 1 }
            let state = self.state.withLock { $0 }
            let pki = self.responder.pki
            let answer: TestOCSPResponder.Answer
            switch state.mode {
            case "unavailable": return Response(status: .serviceUnavailable)
            case "redirect":
                return Response(status: .temporaryRedirect, headers: [.location: "/sim/ocsp/elsewhere"])
            case "tryLater": answer = .tryLater
            default:
                answer = .statuses(
                    revoked: Set(
                        state.revoked.compactMap {
                            $0 == "leaf"
                                ? pki.leaf.serialNumber : $0 == "intermediate" ? pki.intermediate.serialNumber : nil
                        }))
            }
            let der = try self.responder.respond(to: Array(body.readableBytesView), answer: answer)
            return Response(
                status: .ok, headers: [.contentType: "application/ocsp-response"],
                body: .init(byteBuffer: ByteBuffer(bytes: der)))
        }
        router.post("sim/ocsp/elsewhere") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            let der = try self.responder.respond(to: Array(body.readableBytesView), answer: .statuses(revoked: []))
            return Response(
                status: .ok, headers: [.contentType: "application/ocsp-response"],
                body: .init(byteBuffer: ByteBuffer(bytes: der)))
        }
        router.post("sim/ocsp/state") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            let state = try JSONDecoder().decode(State.self, from: Data(body.readableBytesView))
            guard ["answering", "tryLater", "unavailable", "redirect"].contains(state.mode),
                state.revoked.allSatisfy({ ["leaf", "intermediate"].contains($0) })
            else {
                return SimAPI.json(
                    ["error": "mode: answering|tryLater|unavailable|redirect; revoked: leaf|intermediate"],
                    status: .badRequest)
            }
            self.state.withLock { $0 = state }
            return SimAPI.json(state)
        }
        router.get("sim/ocsp/state") { _, _ in
            SimAPI.json(["mode": self.state.withLock { $0.mode }, "asked": String(self.asked.withLock { $0 })])
        }
    }
}
