// MARK: - Retention Messaging API bodies (`/inApps/v1/messaging/…`)

/// Upload Message's body: the text (header ≤ 66, body ≤ 144 characters) and an optional approved image.
///
/// [UploadMessageRequestBody](https://developer.apple.com/documentation/retentionmessaging/uploadmessagerequestbody)
public struct UploadMessageRequestBody: Codable, Hashable, Sendable {
    /// The image shown with a message, with its alternative text (≤ 150 characters).
    public struct Image: Codable, Hashable, Sendable {
        public var imageIdentifier: String
        public var altText: String
        public init(imageIdentifier: String, altText: String) {
            self.imageIdentifier = imageIdentifier
            self.altText = altText
        }
    }
    public var header: String
    public var body: String
    public var image: Image?

    public init(header: String, body: String, image: Image? = nil) {
        self.header = header
        self.body = body
        self.image = image
    }
}

/// One message and its review state (`PENDING`, `APPROVED`, `REJECTED`).
public struct MessageListItem: Codable, Hashable, Sendable {
    public var messageIdentifier: String?
    public var messageState: String?
    public init(messageIdentifier: String?, messageState: String?) {
        self.messageIdentifier = messageIdentifier
        self.messageState = messageState
    }
}

/// Get Message List's answer.
public struct GetMessageListResponse: Codable, Hashable, Sendable {
    public var messageIdentifiers: [MessageListItem]?
    public init(messageIdentifiers: [MessageListItem]?) { self.messageIdentifiers = messageIdentifiers }
}

/// One image and its review state.
public struct ImageListItem: Codable, Hashable, Sendable {
    public var imageIdentifier: String?
    public var imageState: String?
    public init(imageIdentifier: String?, imageState: String?) {
        self.imageIdentifier = imageIdentifier
        self.imageState = imageState
    }
}

/// Get Image List's answer.
public struct GetImageListResponse: Codable, Hashable, Sendable {
    public var imageIdentifiers: [ImageListItem]?
    public init(imageIdentifiers: [ImageListItem]?) { self.imageIdentifiers = imageIdentifiers }
}

/// Configure Default Message's body and Get Default Message's answer.
public struct DefaultConfigurationRequest: Codable, Hashable, Sendable {
    public var messageIdentifier: String?
    public init(messageIdentifier: String?) { self.messageIdentifier = messageIdentifier }
}

/// Configure Realtime URL's body and Get Realtime URL's answer (≤ 256 characters, HTTPS at Apple).
public struct RealtimeUrlRequest: Codable, Hashable, Sendable {
    public var realtimeURL: String?
    public init(realtimeURL: String?) { self.realtimeURL = realtimeURL }
}

/// Initiate Performance Test's body: a subscription of the environment the requests will name.
public struct PerformanceTestRequest: Codable, Hashable, Sendable {
    public var originalTransactionId: String
    public init(originalTransactionId: String) { self.originalTransactionId = originalTransactionId }
}

/// How a performance test runs and what it takes to pass.
///
/// [PerformanceTestConfig](https://developer.apple.com/documentation/retentionmessaging/performancetestconfig)
public struct PerformanceTestConfig: Codable, Hashable, Sendable {
    public var maxConcurrentRequests: Int?
    public var totalRequests: Int?
    /// Milliseconds.
    public var totalDuration: Int?
    /// Milliseconds within which an answer counts.
    public var responseTimeThreshold: Int?
    /// Percent of requests that must succeed.
    public var successRateThreshold: Int?

    public init(
        maxConcurrentRequests: Int?, totalRequests: Int?, totalDuration: Int?, responseTimeThreshold: Int?,
        successRateThreshold: Int?
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }
}

/// Initiate Performance Test's answer.
public struct PerformanceTestResponse: Codable, Hashable, Sendable {
    public var config: PerformanceTestConfig?
    public var requestId: String?
    public init(config: PerformanceTestConfig?, requestId: String?) {
        self.config = config
        self.requestId = requestId
    }
}

/// Response-time percentiles of a performance test, in milliseconds.
public struct PerformanceTestResponseTimes: Codable, Hashable, Sendable {
    public var average: Int?
    public var p50: Int?
    public var p90: Int?
    public var p95: Int?
    public var p99: Int?
    public init(average: Int?, p50: Int?, p90: Int?, p95: Int?, p99: Int?) {
        self.average = average
        self.p50 = p50
        self.p90 = p90
        self.p95 = p95
        self.p99 = p99
    }
}

/// Get Performance Test Results' answer: `result` `PENDING`, `PASS` or `FAIL`; failures by send-attempt result
/// (`TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `INVALID_RESPONSE`, …).
public struct PerformanceTestResultResponse: Codable, Hashable, Sendable {
    public var config: PerformanceTestConfig?
    public var target: String?
    public var result: String?
    public var successRate: Int?
    public var numPending: Int?
    public var responseTimes: PerformanceTestResponseTimes?
    public var failures: [String: Int]?

    public init(
        config: PerformanceTestConfig?, target: String?, result: String?, successRate: Int?, numPending: Int?,
        responseTimes: PerformanceTestResponseTimes?, failures: [String: Int]?
    ) {
        self.config = config
        self.target = target
        self.result = result
        self.successRate = successRate
        self.numPending = numPending
        self.responseTimes = responseTimes
        self.failures = failures
    }
}
