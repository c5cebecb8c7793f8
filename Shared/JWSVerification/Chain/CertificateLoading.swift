import SwiftASN1
public import X509

/// Reads certificates given by operators, in DER or PEM.
public enum CertificateLoading {
    /// Parses one certificate from DER bytes or PEM text (`-----BEGIN CERTIFICATE-----`).
    ///
    /// - Throws: ``ConfigurationError`` naming the source when the bytes are neither.
    public static func certificate(from bytes: [UInt8], source: String) throws(ConfigurationError) -> Certificate {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            if text.contains("-----BEGIN CERTIFICATE-----") {
                return try Certificate(pemEncoded: text)
            }
            return try Certificate(derEncoded: bytes)
        } catch {
            throw ConfigurationError("\(source) is not a DER or PEM certificate")
        }
    }
}
