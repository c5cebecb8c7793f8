import AppStoreModels
import ArgumentParser
import Foundation
import JWSVerification

/// `iapctl verify`: decode and fully verify one signed App Store payload.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a signed notification, transaction, renewal info or app transaction.",
        discussion: """
            Valid: exit 0 and the decoded payload as JSON on stdout; every nested JWS is verified and shown \
            decoded beside its signed string. Invalid: exit 1 and one line 'invalid: <kind>: <detail>' on \
            stderr. Usage errors: exit 2. The input may be the bare JWS or Apple's POST body \
            {"signedPayload": "..."}. With Xcode or LocalTesting, --root names the StoreKit test certificate.
            """)

    /// The kinds of signed data `--type` selects.
    enum PayloadType: String, ExpressibleByArgument, CaseIterable {
        case notification
        case transaction
        case renewalInfo = "renewal-info"
        case appTransaction = "app-transaction"
    }

    @Option(
        name: .customLong("root"),
        help: "A trusted root certificate, DER or PEM (repeatable; default: Apple Root CA G3).")
    var roots: [String] = []

    @Option(name: .customLong("bundle-id"), help: "The app's bundle identifier.")
    var bundleId: String

    @Option(name: .customLong("app-apple-id"), help: "The app's App Store identifier (required for Production).")
    var appAppleId: Int64?

    @Option(help: "Production, Sandbox, Xcode or LocalTesting.")
    var environment: Environment

    @Option(name: .customLong("type"), help: "What the input is.")
    var payloadType: PayloadType = .notification

    @Option(
        name: .customLong("at"),
        help: "Validate certificates at this time (epoch milliseconds or ISO 8601) instead of the signedDate.")
    var at: String?

    @Argument(help: "The file holding the signed data, or - for standard input.")
    var input: String = "-"

    /// Runs the verification, writes its outcome and exits with its code.
    mutating func run() async throws {
        let outcome = await self.execute(readInput: { try Self.read(self.input) })
        if !outcome.standardOutput.isEmpty { StandardStreams.writeOutput(outcome.standardOutput) }
        if !outcome.standardError.isEmpty { StandardStreams.writeError(outcome.standardError) }
        if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
    }

    /// Verifies the input and returns what to print and the exit code, without touching the process.
    func execute(readInput: () throws -> [UInt8]) async -> CommandOutcome {
        let verifier: SignedDataVerifier
        let bytes: [UInt8]
        do {
            verifier = SignedDataVerifier(configuration: try self.makeConfiguration())
            bytes = try readInput()
        } catch {
            return .usage(String(describing: error))
        }
        do throws(VerificationError) {
            let signed = try SignedInput.extractJWS(from: bytes)
            return .success(try await self.verify(signed, with: verifier))
        } catch {
            return .invalid("invalid: " + error.description.replacingOccurrences(of: "\n", with: " "))
        }
    }

    // MARK: Verification

    /// Verifies one JWS of the selected type and renders it as pretty JSON.
    private func verify(_ signed: String, with verifier: SignedDataVerifier) async throws(VerificationError) -> String {
        switch self.payloadType {
        case .notification:
            return Self.render(NotificationRendering.json(for: try await verifier.verifyNotification(signed)))
        case .transaction: return Self.render(try await verifier.verifyTransaction(signed))
        case .renewalInfo: return Self.render(try await verifier.verifyRenewalInfo(signed))
        case .appTransaction: return Self.render(try await verifier.verifyAppTransaction(signed))
        }
    }

    /// Pretty, key-sorted JSON of a decoded value.
    private static func render(_ value: some Encodable) -> String {
        // Decoded payloads are plain data; encoding them cannot fail.
        String(decoding: try! AppStoreJSON.makePrettyEncoder().encode(value), as: UTF8.self)
    }

    // MARK: Configuration

    /// Builds the verifier configuration from the options.
    func makeConfiguration() throws -> VerifierConfiguration {
        let certificates = try self.roots.map { path in
            try CertificateLoading.certificate(from: Self.read(path), source: path)
        }
        let storeKit = self.environment == .xcode || self.environment == .localTesting
        var validationTime = ValidationTime.signedDate
        if let at {
            guard let date = TimeArgument.parse(at) else {
                throw ConfigurationError("--at takes epoch milliseconds or an ISO 8601 time, not \(at)")
            }
            validationTime = .fixed(date)
        }
        return try VerifierConfiguration(
            environment: self.environment,
            apps: [AppIdentity(bundleId: self.bundleId, appAppleId: self.appAppleId)],
            trustedRoots: storeKit || certificates.isEmpty ? [AppleRootCertificates.rootCAG3] : certificates,
            storeKitTestCertificates: storeKit ? certificates : [],
            validationTime: validationTime)
    }

    /// Reads a file, or standard input for "-".
    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("cannot read \(path)")
        }
        return Array(data)
    }
}

extension Environment: ExpressibleByArgument {}
