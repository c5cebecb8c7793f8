public import Crypto
public import Foundation
import SwiftASN1
public import X509

// MARK: - TestPKI + files

extension TestPKI {
    /// The file names a hierarchy is stored under.
    enum FileName {
        static let root = "root.der", intermediate = "intermediate.der", leaf = "leaf.der"
        static let rootKey = "root-key.pem", intermediateKey = "intermediate-key.pem", leafKey = "leaf-key.pem"
    }

    /// A hierarchy from its parts.
    public init(
        root: Certificate, rootKey: P256.Signing.PrivateKey, intermediate: Certificate,
        intermediateKey: P256.Signing.PrivateKey, leaf: Certificate, leafKey: P256.Signing.PrivateKey
    ) {
        self.root = root
        self.rootKey = rootKey
        self.intermediate = intermediate
        self.intermediateKey = intermediateKey
        self.leaf = leaf
        self.leafKey = leafKey
    }

    /// Writes the certificates (DER) and keys (PKCS#8 PEM) into `directory`; `root.der` is what the
    /// pipeline trusts (`APPSTORE_ROOT_CERTIFICATES`).
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, certificate) in [
            (FileName.root, self.root), (FileName.intermediate, self.intermediate), (FileName.leaf, self.leaf),
        ] {
            try Data(Self.der(certificate)).write(to: directory.appendingPathComponent(name))
        }
        for (name, key) in [
            (FileName.rootKey, self.rootKey), (FileName.intermediateKey, self.intermediateKey),
            (FileName.leafKey, self.leafKey),
        ] {
            try Data(key.pemRepresentation.utf8).write(to: directory.appendingPathComponent(name))
        }
    }

    /// Reads a hierarchy written by ``write(to:)``.
    public init(contentsOf directory: URL) throws {
        func certificate(_ name: String) throws -> Certificate {
            try Certificate(derEncoded: Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        }
        func key(_ name: String) throws -> P256.Signing.PrivateKey {
            try P256.Signing.PrivateKey(
                pemRepresentation: String(
                    decoding: try Data(contentsOf: directory.appendingPathComponent(name)), as: UTF8.self))
        }
        self.init(
            root: try certificate(FileName.root), rootKey: try key(FileName.rootKey),
            intermediate: try certificate(FileName.intermediate), intermediateKey: try key(FileName.intermediateKey),
            leaf: try certificate(FileName.leaf), leafKey: try key(FileName.leafKey))
    }

    /// The hierarchy stored in `directory`, created there first when there is none.
    public static func loadOrCreate(in directory: URL, options: Options = Options()) throws -> TestPKI {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent(FileName.leafKey).path) {
            return try TestPKI(contentsOf: directory)
        }
        let pki = try TestPKI(options)
        try pki.write(to: directory)
        return pki
    }
}
