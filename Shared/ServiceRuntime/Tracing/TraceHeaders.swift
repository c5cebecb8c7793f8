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
        if let forwarded = context[ForwardedTraceParentKey.self] {
            headers.removeAll { $0.name == "traceparent" || $0.name == "tracestate" }
            headers.append(KafkaHeader(name: "traceparent", value: forwarded))
            return
        }
        InstrumentationSystem.instrument.inject(context, into: &headers, using: KafkaHeadersInjector())
    }

    /// The `traceparent` of `context`, for a row that carries the trace across a database (the outbox); nil when
    /// tracing is off or there is no trace.
    public static func traceParent(of context: ServiceContext) -> String? {
        if let forwarded = context[ForwardedTraceParentKey.self] { return String(decoding: forwarded, as: UTF8.self) }
        var fields: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &fields, using: DictionaryInjector())
        return fields["traceparent"]
    }

    /// The trace headers (`traceparent`, and `tracestate` if any) of a record whose sender did not sample its trace,
    /// to forward unchanged; nil when the record carries no valid `traceparent` or a sampled one. Under a
    /// parent-based sampler such a trace records nothing downstream, so a stage may pass it on without a span of its
    /// own (W3C Trace Context lets a participant forward `traceparent` unmodified).
    public static func unsampledTrace(in headers: [KafkaHeader]) -> [KafkaHeader]? {
        guard let parent = headers.last(where: { $0.name == "traceparent" }), let value = parent.value,
            TraceParentField.isValidUnsampled(value)
        else { return nil }
        guard let state = headers.last(where: { $0.name == "tracestate" }) else { return [parent] }
        return [parent, state]
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

// MARK: - An unsampled trace without a span

extension TraceHeaders {
    /// `context` carrying the unsampled trace `traceParent` (a valid version-00 `traceparent`, sampled flag clear)
    /// with no span of this process: what ``inject(_:into:)`` and ``traceParent(of:)`` then write, unchanged. For a
    /// root ``RootSampling`` dropped: under a parent-based sampler nothing records it anywhere after this.
    public static func forwarding(unsampled traceParent: [UInt8], in context: ServiceContext) -> ServiceContext {
        precondition(TraceParentField.isValidUnsampled(traceParent), "only an unsampled trace is forwarded")
        var context = context
        context[ForwardedTraceParentKey.self] = traceParent
        return context
    }
}

/// The `traceparent` of an unsampled trace a context carries without a span (``TraceHeaders/forwarding(unsampled:in:)``).
enum ForwardedTraceParentKey: ServiceContextKey {
    typealias Value = [UInt8]
}

// MARK: - The traceparent field

/// W3C Trace Context's `traceparent` (version 00): `00-<trace id, 32 hex>-<parent id, 16 hex>-<flags, 2 hex>`, lower
/// case, neither id all zeros.
enum TraceParentField {
    /// Whether `value` is a valid version-00 `traceparent` whose sampled flag (bit 0 of the flags) is clear.
    static func isValidUnsampled(_ value: [UInt8]) -> Bool {
        let dash = UInt8(ascii: "-")
        guard value.count == 55, value[0] == UInt8(ascii: "0"), value[1] == UInt8(ascii: "0"), value[2] == dash,
            value[35] == dash, value[52] == dash,
            let flags = Self.hexValue(value[54]), Self.hexValue(value[53]) != nil
        else { return false }
        var traceIDIsZero = true
        for byte in value[3..<35] {
            guard let digit = Self.hexValue(byte) else { return false }
            if digit != 0 { traceIDIsZero = false }
        }
        var parentIDIsZero = true
        for byte in value[36..<52] {
            guard let digit = Self.hexValue(byte) else { return false }
            if digit != 0 { parentIDIsZero = false }
        }
        return !traceIDIsZero && !parentIDIsZero && flags & 1 == 0
    }

    /// The value of a lower-case hex digit, nil for anything else.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
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
