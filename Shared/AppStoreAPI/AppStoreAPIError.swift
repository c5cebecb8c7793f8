public import Foundation
public import JWSVerification

/// Why an App Store Server API call failed, with Apple's error code when the answer carried one and whether
/// trying again later can help.
public struct AppStoreAPIError: Error, Sendable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Sendable, Equatable {
        /// Apple answered with an HTTP error status (and, except for 401, a JSON `errorCode`).
        case http(status: Int, errorCode: Int?, message: String?)
        /// No answer: connection refused or reset, DNS, TLS.
        case transport(String)
        /// No answer within the request timeout.
        case timeout
        /// An answer that is not what the endpoint documents (bad JSON, missing field).
        case invalidResponse(String)
        /// A signed item in the answer failed verification: the answer must not be trusted.
        case verification(VerificationError)
    }

    public var kind: Kind
    /// For 429: the instant Apple's `Retry-After` header names (it holds UNIX milliseconds).
    public var retryAfter: Date?

    public init(_ kind: Kind, retryAfter: Date? = nil) {
        self.kind = kind
        self.retryAfter = retryAfter
    }

    /// Apple's numeric error code, when the answer had one.
    public var errorCode: Int? {
        if case .http(_, let code, _) = self.kind { return code }
        return nil
    }

    /// The HTTP status, when there was an answer.
    public var status: Int? {
        if case .http(let status, _, _) = self.kind { return status }
        return nil
    }

    /// Whether the same call may succeed later: 429, 5xx, timeouts, transport failures and the codes Apple
    /// documents as retryable. Everything else (4xx, bad answers, failed verification) is permanent.
    public var isRetryable: Bool {
        switch self.kind {
        case .transport, .timeout: return true
        case .invalidResponse, .verification: return false
        case .http(let status, let code, _):
            if let code, APIErrorCode.retryable.contains(code) { return true }
            return status == 429 || status >= 500
        }
    }

    public var description: String {
        switch self.kind {
        case .http(let status, let code, let message):
            let codeText = code.map { " errorCode \($0)" } ?? ""
            return "App Store Server API answered HTTP \(status)\(codeText)\(message.map { ": \($0)" } ?? "")"
        case .transport(let detail): return "App Store Server API unreachable: \(detail)"
        case .timeout: return "App Store Server API did not answer in time"
        case .invalidResponse(let detail): return "App Store Server API answer not understood: \(detail)"
        case .verification(let error): return "App Store Server API answer failed verification: \(error)"
        }
    }
}

/// Apple's error codes this product acts on (appstore-facts §3.4).
public enum APIErrorCode {
    public static let generalBadRequest = 4_000_000
    public static let invalidTransactionId = 4_000_006
    public static let paginationTokenExpired = 4_000_017
    public static let multipleFilters = 4_000_019
    public static let invalidTestNotificationToken = 4_000_020
    public static let invalidAppAccountToken = 4_000_183
    public static let familyTransactionNotSupported = 4_000_185
    /// API 1.22: consumption information cannot be sent for an assigned transaction.
    public static let assignedTransactionNotSupported = 4_000_227
    /// API 1.22: an assigned subscription's renewal date cannot be extended.
    public static let assignedExtensionIneligible = 4_030_028
    public static let accountNotFound = 4_040_001
    public static let accountNotFoundRetryable = 4_040_002
    public static let appNotFoundRetryable = 4_040_004
    public static let originalTransactionIdNotFound = 4_040_005
    public static let originalTransactionIdNotFoundRetryable = 4_040_006
    public static let testNotificationNotFound = 4_040_008
    public static let transactionIdNotFound = 4_040_010
    public static let rateLimitExceeded = 4_290_000
    public static let generalInternal = 5_000_000
    public static let generalInternalRetryable = 5_000_001

    /// The codes Apple marks as worth retrying.
    public static let retryable: Set<Int> = [
        accountNotFoundRetryable, appNotFoundRetryable, originalTransactionIdNotFoundRetryable, rateLimitExceeded,
        generalInternalRetryable,
    ]
}
