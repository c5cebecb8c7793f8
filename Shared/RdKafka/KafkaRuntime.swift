/// Facts about the librdkafka library loaded at run time.
public enum KafkaRuntime {
    /// The loaded librdkafka's version, e.g. "2.16.0" (the headers may be older: Debian's 2.0.2).
    public static var librdkafkaVersion: String { RdKafkaClient.runtimeVersion }
}
