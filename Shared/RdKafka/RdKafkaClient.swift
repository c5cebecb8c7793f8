import CRdKafka
import Logging
import Synchronization

/// Owns one `rd_kafka_t` and destroys it exactly once. The only place handles are created.
///
/// librdkafka logs go to swift-log through a C callback that finds this client's ``LogContext`` in the
/// handle's opaque slot; the context is released after the handle is destroyed.
final class RdKafkaClient: @unchecked Sendable {
    /// What the log callback needs; outlives the handle.
    final class LogContext: @unchecked Sendable {
        let logger: Logger
        /// The latest connection failure librdkafka reported (facility FAIL or an error-level line): a refused TLS
        /// handshake or SASL exchange, which librdkafka otherwise only retries behind a timeout.
        let lastFailure = Mutex<String?>(nil)
        init(logger: Logger) { self.logger = logger }
    }

    /// The handle. Thread-safe for the operations this target calls.
    let handle: OpaquePointer
    private let logContext: LogContext

    /// Creates a producer or consumer handle from properties.
    ///
    /// - Parameter events: the event types to deliver on the main queue (`RD_KAFKA_EVENT_*` bits), if any.
    init(type: rd_kafka_type_t, properties: [String: String], events: Int32 = 0, logger: Logger) throws(KafkaError) {
        let conf = try Self.makeConf(properties)
        let context = LogContext(logger: logger)
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(context).toOpaque())
        rd_kafka_conf_set_log_cb(conf, rdKafkaLogCallback)
        if events != 0 { rd_kafka_conf_set_events(conf, events) }
        var errorText = [CChar](repeating: 0, count: 512)
        guard let handle = rd_kafka_new(type, conf, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(conf)  // rd_kafka_new takes the conf only when it succeeds
            throw KafkaError(.client, String(cBuffer: errorText))
        }
        self.handle = handle
        self.logContext = context
    }

    /// The latest connection failure librdkafka reported for this handle, if any.
    var lastConnectionFailure: String? { self.logContext.lastFailure.withLock { $0 } }

    deinit {
        rd_kafka_destroy(self.handle)
        withExtendedLifetime(self.logContext) {}
    }

    /// Builds a conf from properties, destroying it when one is rejected.
    static func makeConf(_ properties: [String: String]) throws(KafkaError) -> OpaquePointer {
        let conf = rd_kafka_conf_new()!
        var errorText = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            if rd_kafka_conf_set(conf, key, value, &errorText, errorText.count) != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                throw KafkaError(.configuration, "\(key)=\(value): \(String(cBuffer: errorText))")
            }
        }
        return conf
    }

    /// The version of the librdkafka library loaded at run time.
    static var runtimeVersion: String { String(cString: rd_kafka_version_str()) }
    /// The loaded librdkafka's version as a number, `0xMMmmrrxx` (2.1.0 is `0x020100ff`).
    static var runtimeVersionNumber: Int32 { rd_kafka_version() }
}

/// librdkafka's log callback: syslog levels 0–7 mapped to swift-log, facility as the source.
private func rdKafkaLogCallback(
    _ handle: OpaquePointer?, _ level: Int32, _ facility: UnsafePointer<CChar>?, _ message: UnsafePointer<CChar>?
) {
    guard let handle, let opaque = rd_kafka_opaque(handle) else { return }
    let context = Unmanaged<RdKafkaClient.LogContext>.fromOpaque(opaque).takeUnretainedValue()
    let text = message.map { String(cString: $0) } ?? ""
    let source = facility.map { String(cString: $0) } ?? "rdkafka"
    let swiftLevel: Logger.Level =
        switch level {
        case 0...2: .critical
        case 3: .error
        case 4: .warning
        case 5, 6: .info
        default: .debug
        }
    if source == "FAIL" || level <= 3 {
        context.lastFailure.withLock { $0 = text }
    }
    context.logger.log(level: swiftLevel, "\(text)", metadata: ["rdkafka.facility": "\(source)"])
}

// MARK: - String + C buffers

extension String {
    /// The text of a NUL-terminated C character buffer filled by librdkafka.
    init(cBuffer: [CChar]) {
        self = String(decoding: cBuffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
