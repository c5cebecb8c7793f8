import CRdKafka

/// A Kafka failure, with librdkafka's own classification kept: fatal errors end the client, retriable
/// ones may succeed when tried again.
public struct KafkaError: Error, CustomStringConvertible, Sendable {
    /// What kind of operation failed.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// A configuration property was rejected.
        public static let configuration = Code(description: "configuration")
        /// The client could not be created.
        public static let client = Code(description: "client")
        /// A message could not be enqueued.
        public static let produce = Code(description: "produce")
        /// The broker did not acknowledge a message.
        public static let delivery = Code(description: "delivery")
        /// Consuming or storing offsets failed.
        public static let consume = Code(description: "consume")
        /// An administrative request failed.
        public static let admin = Code(description: "admin")
        /// An operation did not finish in time.
        public static let timeout = Code(description: "timeout")
        /// The client is shutting down.
        public static let shutdown = Code(description: "shutdown")
    }

    /// What kind of operation failed.
    public var code: Code
    /// librdkafka's error code (`rd_kafka_resp_err_t`), when it gave one.
    public var rdKafkaCode: Int32?
    /// Whether the client is unusable after this error.
    public var isFatal: Bool
    /// Whether the same operation may succeed later.
    public var isRetriable: Bool
    /// What happened.
    public var reason: String

    /// Creates an error.
    public init(
        _ code: Code, _ reason: String, rdKafkaCode: Int32? = nil, isFatal: Bool = false, isRetriable: Bool = false
    ) {
        self.code = code
        self.reason = reason
        self.rdKafkaCode = rdKafkaCode
        self.isFatal = isFatal
        self.isRetriable = isRetriable
    }

    /// An error from a librdkafka response code, with its name and retriability.
    init(_ code: Code, _ context: String, responseError: rd_kafka_resp_err_t) {
        let name = String(cString: rd_kafka_err2name(responseError))
        let text = String(cString: rd_kafka_err2str(responseError))
        self.init(
            code, "\(context): \(name): \(text)", rdKafkaCode: responseError.rawValue,
            isFatal: responseError == RD_KAFKA_RESP_ERR__FATAL, isRetriable: Self.isTransient(responseError))
    }

    /// An error from an `rd_kafka_error_t`, which it destroys.
    init(_ code: Code, _ context: String, consuming error: OpaquePointer) {
        defer { rd_kafka_error_destroy(error) }
        self.init(
            code,
            "\(context): \(String(cString: rd_kafka_error_name(error))): \(String(cString: rd_kafka_error_string(error)))",
            rdKafkaCode: rd_kafka_error_code(error).rawValue,
            isFatal: rd_kafka_error_is_fatal(error) != 0, isRetriable: rd_kafka_error_is_retriable(error) != 0)
    }

    /// Local errors that describe a passing condition (broker down, timeout, full queue).
    private static func isTransient(_ error: rd_kafka_resp_err_t) -> Bool {
        [
            RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__TIMED_OUT,
            RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, RD_KAFKA_RESP_ERR__QUEUE_FULL, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
            RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE,
            RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        ].contains(error)
    }

    public var description: String { "KafkaError.\(self.code): \(self.reason)" }
}
