/// Names of the Kafka headers the pipeline writes.
public enum PipelineHeaders {
    /// When ingest received the notification (epoch milliseconds).
    public static let receivedAt = "received-at"
    /// The environment of the notification (Production, Sandbox).
    public static let environment = "environment"
    /// The app (bundle id) the record belongs to.
    public static let bundleId = "bundle-id"
    /// The ingest request that carried it, for tracing across topics.
    public static let requestID = "request-id"
    /// When the chain verifier verified it (epoch milliseconds); outside the value so repeats are exact.
    public static let verifiedAt = "verified-at"
    /// The schema of the value.
    public static let schema = "schema"
    /// Who signed a verified-topic record (`chain-verifier`, `customer-api`, `refund-resolver`, `iapctl`).
    public static let recordProducer = "record-producer"
    /// When its producer signed it (epoch milliseconds).
    public static let recordSignedAt = "record-signed-at"
    /// `keyId:base64(HMAC-SHA256)` by the producer's key over the producer, time, schema, key and value.
    public static let recordSignature = "record-signature"
    /// On a verified notification: Apple's `signedPayload`, byte for byte, so the entitlement-updater can check
    /// Apple's signature itself and no key of ours can invent a notification (the value leaves it out).
    public static let appleSignedPayload = "apple-signed-payload"
}
