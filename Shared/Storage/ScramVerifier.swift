import Crypto
import Foundation

/// A PostgreSQL SCRAM-SHA-256 password verifier (RFC 5802/7677, the form `pg_authid` stores), made here so a role's
/// password never reaches the server, its statements or its log: `CREATE ROLE … PASSWORD 'SCRAM-SHA-256$…'` stores
/// the verifier as it is, and the role logs in with the password.
enum ScramVerifier {
    /// PostgreSQL's default iteration count.
    static let iterations = 4096

    /// The verifier of `password` with `salt` (16 random bytes unless given). Only printable ASCII is taken: the
    /// server SASLprep-normalizes other passwords, which this does not reproduce.
    static func make(password: String, salt: [UInt8] = Self.randomSalt()) throws(StorageError) -> String {
        guard !password.isEmpty, password.utf8.allSatisfy({ (0x20..<0x7f).contains($0) }) else {
            throw StorageError("a role password must be printable ASCII (it is turned into a SCRAM verifier here)")
        }
        let salted = SymmetricKey(data: Self.pbkdf2(password: Array(password.utf8), salt: salt))
        let clientKey = HMAC<SHA256>.authenticationCode(for: Array("Client Key".utf8), using: salted)
        let storedKey = SHA256.hash(data: Array(clientKey))
        let serverKey = HMAC<SHA256>.authenticationCode(for: Array("Server Key".utf8), using: salted)
        return "SCRAM-SHA-256$\(Self.iterations):\(Data(salt).base64EncodedString())$"
            + "\(Data(storedKey).base64EncodedString()):\(Data(serverKey).base64EncodedString())"
    }

    /// The salt and iteration count of a stored verifier (to recompute it), or nil.
    static func parameters(of verifier: String) -> (iterations: Int, salt: [UInt8])? {
        let parts = verifier.split(separator: "$")
        guard parts.count == 3, parts[0] == "SCRAM-SHA-256" else { return nil }
        let head = parts[1].split(separator: ":")
        guard head.count == 2, let iterations = Int(head[0]), let salt = Data(base64Encoded: String(head[1])) else {
            return nil
        }
        return (iterations, Array(salt))
    }

    // MARK: PBKDF2

    /// PBKDF2-HMAC-SHA256 with one 32-byte block (SCRAM's SaltedPassword).
    static func pbkdf2(password: [UInt8], salt: [UInt8]) -> [UInt8] {
        let key = SymmetricKey(data: password)
        var block = Array(HMAC<SHA256>.authenticationCode(for: salt + [0, 0, 0, 1], using: key))
        var result = block
        for _ in 1..<Self.iterations {
            block = Array(HMAC<SHA256>.authenticationCode(for: block, using: key))
            for index in result.indices { result[index] ^= block[index] }
        }
        return result
    }

    /// 16 random bytes.
    static func randomSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
