public import Crypto
public import Foundation
import SwiftASN1
public import X509

/// Answers OCSP requests (RFC 6960) about a ``TestPKI``'s leaf and intermediate, as Apple's responders answer for
/// its PKI: each status signed by the certificate's issuer (the intermediate for the leaf, the root for the
/// intermediate), which it names by its key hash, valid for an hour. swift-certificates parses OCSP but builds none,
/// so requests are read and responses written here with SwiftASN1.
public struct TestOCSPResponder: Sendable {
    /// What the responder says.
    public enum Answer: Sendable {
        /// Statuses of the certificates asked about: good, or revoked for those in `revoked`.
        case statuses(revoked: Set<Certificate.SerialNumber>)
        /// The `tryLater` status, no verdict.
        case tryLater
    }

    /// A request the responder cannot read.
    struct MalformedRequest: Error, CustomStringConvertible {
        var description: String
    }

    /// The hierarchy whose statuses it gives.
    public let pki: TestPKI

    public init(pki: TestPKI) {
        self.pki = pki
    }

    /// The DER response to a DER request, at `now`.
    /// A request that cannot be read gets `malformedRequest`, as RFC 6960 §2.3 says.
    public func respond(to request: [UInt8], answer: Answer, now: Date = Date()) throws -> [UInt8] {
        guard case .statuses(let revoked) = answer else { return Self.unsuccessful(status: 3) }
        guard let certIDs = try? Self.certIDs(in: request) else { return Self.unsuccessful(status: 1) }
        guard let first = certIDs.first, let issuer = self.issuer(matching: first.issuerKeyHash) else {
            return Self.unsuccessful(status: 6)  // unauthorized: not a certificate of this PKI
        }
        var data = DER.Serializer()
        try data.appendConstructedNode(identifier: .sequence) { data in
            // responderID byKey [2]: the SHA-1 of the issuer's public key (it signs its own statuses), as Apple's
            // responders name themselves; Apple's Python library reads no other form.
            try data.serialize(explicitlyTaggedWithTagNumber: 2, tagClass: .contextSpecific) {
                try $0.serialize(
                    ASN1OctetString(
                        contentBytes: Array(
                            Insecure.SHA1.hash(data: issuer.certificate.publicKey.subjectPublicKeyInfoBytes))[...]))
            }
            try data.serialize(try Self.time(now))
            try data.appendConstructedNode(identifier: .sequence) { responses in
                for certID in certIDs {
                    try responses.appendConstructedNode(identifier: .sequence) { single in
                        single.serialize(certID.node)
                        let known = [self.pki.leaf.serialNumber, self.pki.intermediate.serialNumber]
                        if self.issuer(matching: certID.issuerKeyHash)?.certificate != issuer.certificate
                            || !known.contains(where: { Self.sameSerial($0, certID.serial) })
                        {
                            single.appendPrimitiveNode(identifier: .init(tagWithNumber: 2, tagClass: .contextSpecific))
                            {
                                _ in
                            }
                        } else if revoked.contains(where: { Self.sameSerial($0, certID.serial) }) {
                            try single.appendConstructedNode(
                                identifier: .init(tagWithNumber: 1, tagClass: .contextSpecific)
                            ) {
                                try $0.serialize(try Self.time(now.addingTimeInterval(-60)))
                            }
                        } else {
                            single.appendPrimitiveNode(identifier: .init(tagWithNumber: 0, tagClass: .contextSpecific))
                            {
                                _ in
                            }
                        }
                        try single.serialize(try Self.time(now.addingTimeInterval(-60)))
                        try single.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) {
                            try $0.serialize(try Self.time(now.addingTimeInterval(3_600)))
                        }
                    }
                }
            }
        }
        let responseData = data.serializedBytes
        let signature = try issuer.key.signature(for: responseData).derRepresentation
        var basic = DER.Serializer()
        try basic.appendConstructedNode(identifier: .sequence) { basic in
            basic.serializeRawBytes(responseData)
            try basic.appendConstructedNode(identifier: .sequence) { try $0.serialize(Self.ecdsaWithSHA256) }
            try basic.serialize(ASN1BitString(bytes: Array(signature)[...]))
        }
        var response = DER.Serializer()
        try response.appendConstructedNode(identifier: .sequence) { response in
            response.appendPrimitiveNode(identifier: .enumerated) { $0.append(0) }
            try response.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) {
                try $0.appendConstructedNode(identifier: .sequence) { bytes in
                    try bytes.serialize(Self.basicResponseType)
                    try bytes.serialize(ASN1OctetString(contentBytes: basic.serializedBytes[...]))
                }
            }
        }
        return response.serializedBytes
    }

    // MARK: Requests

    /// One CertID of a request: its exact DER (echoed in the response), the issuer key hash and the serial.
    struct CertID {
        var node: ASN1Node
        var issuerKeyHash: [UInt8]
        var serial: [UInt8]
    }

    /// The CertIDs of an OCSPRequest: SEQUENCE { tbsRequest SEQUENCE { [0] version?, [1] requestor?,
    /// requestList SEQUENCE OF Request { reqCert CertID, … }, [2] extensions? } }.
    static func certIDs(in request: [UInt8]) throws -> [CertID] {
        do {
            let root = try DER.parse(request)
            guard case .constructed(let outer) = root.content, let tbs = outer.first(where: { _ in true }),
                case .constructed(let tbsChildren) = tbs.content,
                let list = tbsChildren.first(where: { $0.identifier == .sequence }),
                case .constructed(let requests) = list.content
            else { throw MalformedRequest(description: "not an OCSPRequest") }
            return try requests.map { request in
                guard case .constructed(let fields) = request.content, let certID = fields.first(where: { _ in true }),
                    case .constructed(let parts) = certID.content
                else { throw MalformedRequest(description: "a Request without a CertID") }
                let items = Array(parts)
                guard items.count == 4 else { throw MalformedRequest(description: "a CertID of \(items.count) fields") }
                let keyHash = try ASN1OctetString(derEncoded: items[2])
                guard case .primitive(let serial) = items[3].content else {
                    throw MalformedRequest(description: "a CertID without a serial number")
                }
                return CertID(node: certID, issuerKeyHash: Array(keyHash.bytes), serial: Array(serial))
            }
        } catch let error as MalformedRequest {
            throw error
        } catch {
            throw MalformedRequest(description: "not DER: \(error)")
        }
    }

    /// The certificate (with its key) whose public key hashes (SHA-1 or SHA-256, as requests may use either) to
    /// `hash`: the intermediate issues the leaf, the root the intermediate.
    private func issuer(matching hash: [UInt8]) -> (certificate: Certificate, key: P256.Signing.PrivateKey)? {
        for (certificate, key) in [
            (self.pki.intermediate, self.pki.intermediateKey), (self.pki.root, self.pki.rootKey),
        ] {
            let bits = key.publicKey.x963Representation
            if Array(Insecure.SHA1.hash(data: bits)) == hash || Array(SHA256.hash(data: bits)) == hash {
                return (certificate, key)
            }
        }
        return nil
    }

    /// Whether a serial number is the one a request's INTEGER carries (DER may put a 0x00 before a high first byte).
    static func sameSerial(_ serial: Certificate.SerialNumber, _ integer: [UInt8]) -> Bool {
        serial.bytes.drop(while: { $0 == 0 }).elementsEqual(integer.drop(while: { $0 == 0 }))
    }

    // MARK: Encoding

    /// id-pkix-ocsp-basic.
    static let basicResponseType: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 1]
    /// ecdsa-with-SHA256.
    static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]

    /// An OCSPResponse with an unsuccessful status and no body.
    static func unsuccessful(status: UInt8) -> [UInt8] {
        var serializer = DER.Serializer()
        serializer.appendConstructedNode(identifier: .sequence) { response in
            response.appendPrimitiveNode(identifier: .enumerated) { $0.append(status) }
        }
        return serializer.serializedBytes
    }

    /// A GeneralizedTime of a date, to the second, in UTC.
    static func time(_ date: Date) throws -> GeneralizedTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return try GeneralizedTime(
            year: c.year!, month: c.month!, day: c.day!, hours: c.hour!, minutes: c.minute!, seconds: c.second!,
            fractionalSeconds: 0)
    }
}
