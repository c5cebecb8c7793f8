import SwiftASN1

/// Reads only the status of a DER OCSP response (RFC 6960 §4.2.1), to tell a responder in trouble from a verdict:
/// swift-certificates' parsed response types are internal.
enum OCSPResponseStatusPeek {
    /// Why the response is no verdict (`tryLater`, `internalError`, not DER), or nil for a `successful`,
    /// `malformedRequest`, `sigRequired` or `unauthorized` response (the policy judges those).
    static func trouble(in response: [UInt8]) -> String? {
        guard let root = try? DER.parse(response), case .constructed(let children) = root.content,
            let status = children.first(where: { _ in true }), status.identifier == .enumerated,
            case .primitive(let bytes) = status.content, bytes.count == 1
        else { return "an answer that is not a DER OCSP response" }
        switch bytes.first {
        case 2: return "the responder answered internalError"
        case 3: return "the responder answered tryLater"
        default: return nil
        }
    }
}
