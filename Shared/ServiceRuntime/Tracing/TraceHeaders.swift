public import RdKafka
public import ServiceContextModule
import Tracing

/// The W3C trace context (`traceparent`, `tracestate`) carried in Kafka headers and outbox rows, so one notification
/// is one trace from Apple's POST through every service to the event other teams read. With tracing off the
/// instrument is a no-op: nothing is written and every context read is empty.
public enum TraceHeaders {
    /// The context a record's headers carry (empty when they carry none).
    public static func context(of headers: [KafkaHeader]) -> ServiceContext {
        var context = ServiceContext.topLevel
        InstrumentationSystem.instrument.extract(headers, into: &context, using: KafkaHeadersExtractor())
        return context
    }

    /// `headers` with the trace headers of `context` (replacing any it had).
    public static func inject(_ context: ServiceContext, into headers: inout [KafkaHeader]) {
        InstrumentationSystem.instrument.inject(context, into: &headers, using: KafkaHeadersInjector())
    }

    /// The `traceparent` of `context`, for a row that carries the trace across a database (the outbox); nil when
    /// tracing is off or there is no trace.
    public static func traceParent(of context: ServiceContext) -> String? {
        var fields: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &fields, using: DictionaryInjector())
        return fields["traceparent"]
    }

    /// The context a stored `traceparent` names (empty for nil).
    public static func context(traceParent: String?) -> ServiceContext {
        var context = ServiceContext.topLevel
        guard let traceParent else { return context }
        InstrumentationSystem.instrument.extract(
            ["traceparent": traceParent], into: &context, using: DictionaryExtractor())
        return context
    }
}

// MARK: - Carriers

/// Writes trace fields as Kafka headers, replacing headers of the same name.
struct KafkaHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [KafkaHeader]) {
        carrier.removeAll { $0.name == key }
        carrier.append(KafkaHeader(name: key, text: value))
    }
}

/// Reads trace fields from Kafka headers (the last of a name wins).
struct KafkaHeadersExtractor: Extractor {
    func extract(key: String, from carrier: [KafkaHeader]) -> String? {
        carrier.last { $0.name == key }?.text
    }
}

/// Writes trace fields into a dictionary.
struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

/// Reads trace fields from a dictionary.
struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
