public import Crypto
public import Foundation
import SwiftASN1
public import X509

/// A certificate hierarchy shaped like Apple's App Store signing PKI: root CA → intermediate CA carrying
/// Apple's WWDR marker → leaf carrying Apple's receipt-signing marker, all P-256.
///
/// Tests, the App Store stand-in and local runs trust its root instead of Apple Root CA G3. Options make the
/// broken variants a verifier must refuse (missing markers, expired certificates, impostor names).
public struct TestPKI: Sendable {
    /// What to put in the generated certificates.
    public struct Options: Sendable {
        /// A prefix for every common name, so that two PKIs can share names (an impostor) or differ.
        public var name: String = "Test App Store"
        /// When every certificate becomes valid. Default: 2020-01-01.
        public var notValidBefore: Date = Date(timeIntervalSince1970: 1_577_836_800)
        /// When every certificate stops being valid. Default: 2100-01-01.
        public var notValidAfter: Date = Date(timeIntervalSince1970: 4_102_444_800)
        /// When the leaf stops being valid; defaults to ``notValidAfter``.
        public var leafNotValidAfter: Date?
        /// The marker OID put on the leaf; nil leaves it out. Default: Apple's 1.2.840.113635.100.6.11.1.
        public var leafMarker: ASN1ObjectIdentifier? = [1, 2, 840, 113635, 100, 6, 11, 1]
        /// The marker OID put on the intermediate; nil leaves it out. Default: Apple's 1.2.840.113635.100.6.2.1.
        public var intermediateMarker: ASN1ObjectIdentifier? = [1, 2, 840, 113635, 100, 6, 2, 1]
        /// The OCSP responder the leaf and the intermediate name (authority information access), as Apple's do;
        /// nil leaves it out (online checks then have nothing to ask).
        public var ocspURL: String?

        /// Options for a valid, long-lived hierarchy.
        public init() {}
    }

    /// The self-signed root certificate and its key.
    public let root: Certificate
    public let rootKey: P256.Signing.PrivateKey
    /// The intermediate certificate, issued by the root, and its key.
    public let intermediate: Certificate
    public let intermediateKey: P256.Signing.PrivateKey
    /// The leaf certificate, issued by the intermediate, and the key that signs JWS.
    public let leaf: Certificate
    public let leafKey: P256.Signing.PrivateKey

    /// Generates a new hierarchy with fresh keys.
    public init(_ options: Options = Options()) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CommonName("\(options.name) Root CA")
            OrganizationName(options.name)
        }
        let intermediateName = try DistinguishedName {
            CommonName("\(options.name) Intermediate CA")
            OrganizationName(options.name)
        }
        let leafName = try DistinguishedName {
            CommonName("\(options.name) Signing")
            OrganizationName(options.name)
        }

        self.root = try Self.issue(
            subject: rootName, key: rootKey.publicKey, issuer: rootName, issuerKey: rootKey, isCA: true,
            marker: nil, from: options.notValidBefore, until: options.notValidAfter)
        self.intermediate = try Self.issue(
            subject: intermediateName, key: intermediateKey.publicKey, issuer: rootName, issuerKey: rootKey, isCA: true,
            marker: options.intermediateMarker, ocspURL: options.ocspURL, from: options.notValidBefore,
            until: options.notValidAfter)
        self.leaf = try Self.issue(
            subject: leafName, key: leafKey.publicKey, issuer: intermediateName, issuerKey: intermediateKey,
            isCA: false,
            marker: options.leafMarker, ocspURL: options.ocspURL, from: options.notValidBefore,
            until: options.leafNotValidAfter ?? options.notValidAfter)
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
        self.leafKey = leafKey
    }

    /// The same root and intermediate with a new leaf (Apple rotating its signing leaf): a new key, a new serial.
    public func rotatingLeaf(_ options: Options = Options()) throws -> TestPKI {
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try Self.issue(
            subject: self.leaf.subject, key: leafKey.publicKey, issuer: self.intermediate.subject,
            issuerKey: self.intermediateKey, isCA: false, marker: options.leafMarker, ocspURL: options.ocspURL,
            from: options.notValidBefore, until: options.leafNotValidAfter ?? options.notValidAfter)
        return TestPKI(
            root: self.root, rootKey: self.rootKey, intermediate: self.intermediate,
            intermediateKey: self.intermediateKey, leaf: leaf, leafKey: leafKey)
    }

    // MARK: Encodings

    /// The chain as it goes into a JWS `x5c`: standard base64 of DER, leaf first, root last.
    public var x5c: [String] {
        [self.leaf, self.intermediate, self.root].map { Self.base64DER($0) }
    }

    /// The root certificate as DER, to configure as a trusted root.
    public var rootDER: [UInt8] { Self.der(self.root) }

    /// DER encoding of a certificate.
    public static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        // Serializing a certificate this type built cannot fail.
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// Standard base64 of a certificate's DER, as `x5c` entries are written.
    public static func base64DER(_ certificate: Certificate) -> String {
        Data(Self.der(certificate)).base64EncodedString()
    }

    // MARK: Issuing

    /// Issues one certificate shaped like Apple's: basic constraints (the intermediate may sign leaves only, as
    /// Apple's `pathlen:0`), key usage, a subject key identifier on every certificate, an authority key
    /// identifier naming the issuer's on all but the root, and the OCSP responder when one is given. OpenSSL's strict chain building, which Apple's own
    /// libraries use, refuses a chain without the authority key identifiers.
    private static func issue(
        subject: DistinguishedName, key: P256.Signing.PublicKey, issuer: DistinguishedName,
        issuerKey: P256.Signing.PrivateKey, isCA: Bool, marker: ASN1ObjectIdentifier?, ocspURL: String? = nil,
        from: Date, until: Date
    ) throws -> Certificate {
        let selfSigned = subject == issuer
        var extensions = Certificate.Extensions()
        try extensions.append(
            Certificate.Extension(
                isCA
                    ? BasicConstraints.isCertificateAuthority(maxPathLength: selfSigned ? nil : 0)
                    : .notCertificateAuthority,
                critical: true))
        try extensions.append(
            Certificate.Extension(SubjectKeyIdentifier(hash: Certificate.PublicKey(key)), critical: false))
        if !selfSigned {
            let issuerIdentifier = SubjectKeyIdentifier(hash: Certificate.PublicKey(issuerKey.publicKey))
            try extensions.append(
                Certificate.Extension(
                    AuthorityKeyIdentifier(keyIdentifier: issuerIdentifier.keyIdentifier), critical: false))
        }
        try extensions.append(
            Certificate.Extension(
                isCA ? KeyUsage(keyCertSign: true, cRLSign: true) : KeyUsage(digitalSignature: true), critical: true))
        if let ocspURL {
            try extensions.append(
                Certificate.Extension(
                    AuthorityInformationAccess([
                        .init(method: .ocspServer, location: .uniformResourceIdentifier(ocspURL))
                    ]),
                    critical: false))
        }
        if let marker {
            // Apple's marker extensions hold an ASN.1 NULL.
            try extensions.append(Certificate.Extension(oid: marker, critical: false, value: [0x05, 0x00]))
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key),
            notValidBefore: from, notValidAfter: until, issuer: issuer, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(issuerKey))
    }
}
