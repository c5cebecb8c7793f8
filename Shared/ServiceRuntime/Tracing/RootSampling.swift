import Synchronization

/// The sampling decision for a trace's root, made by the service where every root begins (ingest's door) before any
/// span exists: OpenTelemetry's TraceIdRatioBased rule (the trace id's last eight bytes, read as swift-otel reads
/// them, below `ratio` × 2⁶⁴) on a trace id drawn here.
///
/// Why: under `parentbased_traceidratio` at 1 %, swift-otel drew the ids of every root from three `getrandom` calls
/// under a lock, sampled, boxed a span that is dropped 99 times in 100, and its propagator then formatted the ids as
/// text for the raw record: 4.4 % of ingest's CPU for nothing (docs/performance.md). A dropped root decided here is
/// an atomic add and a 55-byte `traceparent` with its sampled flag clear, which every later stage forwards as it is.
/// A kept root is started by swift-otel as a root with the process's sampler set to `parentbased_always_on`
/// (``TracingSetup/bootstrap(service:settings:logger:samplesRootsAtTheDoor:)``), so the ratio applies once.
public struct RootSampling: Sendable, Equatable {
    /// The share of roots kept, 0 through 1.
    public let ratio: Double
    /// Trace ids whose last eight bytes read below this are kept (swift-otel's `idUpperBound`).
    let upperBound: UInt64

    /// Roots kept at `ratio` (0 through 1).
    public init(ratio: Double) {
        precondition(ratio >= 0 && ratio <= 1, "a sampling ratio is 0 through 1")
        self.ratio = ratio
        self.upperBound =
            switch ratio {
            case 0: .min
            case 1: .max
            default: UInt64(ratio * Double(UInt64.max))
            }
    }

    // MARK: The decision

    /// Whether the root of the trace `traceID` (16 bytes) is kept: the rule of OpenTelemetry's TraceIdRatioBased
    /// sampler as swift-otel applies it, so a stage that samples by trace id alone decides the same on this trace.
    public func keeps(traceID: [UInt8]) -> Bool {
        precondition(traceID.count == 16, "a trace id is 16 bytes")
        switch self.upperBound {
        case .min: return false
        case .max: return true
        default:
            let value = traceID.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
            return value < self.upperBound
        }
    }

    /// The `traceparent` of a new root this sampling drops (its ids fresh, its sampled flag clear), or nil when it
    /// keeps the root, which swift-otel then starts.
    public func droppedRoot() -> [UInt8]? {
        let ids = Self.randomIDs()
        guard !self.keeps(traceID: Array(ids[0..<16])) else { return nil }
        return TraceParentField.unsampled(traceID: ids[0..<16], parentID: ids[16..<24])
    }

    // MARK: Ids

    /// 24 random bytes (a trace id and a span id), neither id all zeros: SplitMix64 over one atomic counter seeded
    /// from the system's generator. The standard generator is a `getrandom(2)` call for every 8 bytes (three a
    /// request, which swift-otel makes under a lock); ids need to be unique and evenly spread for the ratio, not
    /// secret (W3C Trace Context asks for randomness, not unpredictability).
    static func randomIDs() -> [UInt8] {
        let golden: UInt64 = 0x9e37_79b9_7f4a_7c15
        let start = Self.counter.wrappingAdd(3 &* golden, ordering: .relaxed).oldValue
        var bytes = [UInt8](repeating: 0, count: 24)
        bytes.withUnsafeMutableBytes { buffer in
            for word in 0..<3 {
                buffer.storeBytes(
                    of: Self.mix(start &+ UInt64(word + 1) &* golden).littleEndian, toByteOffset: word * 8,
                    as: UInt64.self)
            }
        }
        // W3C: an id of all zeros is invalid; one in 2⁶⁴ draws, made valid rather than drawn again.
        if bytes[0..<16].allSatisfy({ $0 == 0 }) { bytes[15] = 1 }
        if bytes[16..<24].allSatisfy({ $0 == 0 }) { bytes[23] = 1 }
        return bytes
    }

    /// SplitMix64's state, seeded once from the system's generator.
    private static let counter: Atomic<UInt64> = {
        var system = SystemRandomNumberGenerator()
        return Atomic(system.next())
    }()

    /// SplitMix64's output function (Steele, Lea and Flood, 2014).
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

// MARK: - Writing a traceparent

extension TraceParentField {
    /// `00-<trace id>-<parent id>-00` in lower-case hex: the `traceparent` of an unsampled trace.
    static func unsampled(traceID: ArraySlice<UInt8>, parentID: ArraySlice<UInt8>) -> [UInt8] {
        let dash = UInt8(ascii: "-")
        var value = [UInt8]()
        value.reserveCapacity(55)
        value.append(contentsOf: [UInt8(ascii: "0"), UInt8(ascii: "0"), dash])
        Self.appendHex(traceID, to: &value)
        value.append(dash)
        Self.appendHex(parentID, to: &value)
        value.append(contentsOf: [dash, UInt8(ascii: "0"), UInt8(ascii: "0")])
        return value
    }

    /// Appends two lower-case hex digits a byte, as `Hex.encode` writes them (`Hex` lives in `JWSVerification`, which
    /// this module does not import; and these bytes go into a header with no `String` between).
    private static func appendHex(_ bytes: ArraySlice<UInt8>, to value: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        for byte in bytes {
            value.append(digits.utf8Start[Int(byte >> 4)])
            value.append(digits.utf8Start[Int(byte & 0x0f)])
        }
    }
}
