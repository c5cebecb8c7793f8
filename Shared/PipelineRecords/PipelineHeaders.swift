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
}
