import RdKafka
import ServiceRuntime
import Testing

/// `KAFKA_PROPERTIES` (librdkafka properties applied last) and `SWIFT_TASKS_ON_EVENT_LOOPS`, read from the environment.
@Suite struct KafkaPropertiesSettingsTests {
    @Test func propertiesAreAppliedLastAndOverrideTheTypedOnes() throws {
        let client = try KafkaClientSettings(
            EnvironmentSettings([
                "KAFKA_BOOTSTRAP_SERVERS": "b1:9092,b2:9092",
                "KAFKA_PROPERTIES": "linger.ms=0, socket.nagle.disable=true,a.b=x=y",
            ]),
            clientID: "ingest")
        #expect(client.bootstrapServers == ["b1:9092", "b2:9092"])
        #expect(client.additional == ["linger.ms": "0", "socket.nagle.disable": "true", "a.b": "x=y"])
        let producer = KafkaProducerConfiguration(client: client).librdkafkaProperties
        #expect(producer["linger.ms"] == "0")
        #expect(producer["socket.nagle.disable"] == "true")
        #expect(producer["acks"] == "all")
    }

    @Test func noPropertiesLeaveTheDefaults() throws {
        let client = try KafkaClientSettings(EnvironmentSettings([:]), clientID: "ingest")
        #expect(client.additional.isEmpty)
        #expect(client.bootstrapServers == ["127.0.0.1:9092"])
        #expect(KafkaProducerConfiguration(client: client).librdkafkaProperties["linger.ms"] == "2")
    }

    @Test(arguments: ["linger.ms", "=5", "linger.ms=1,oops"])
    func aMalformedEntryIsRefusedNamingTheVariable(_ value: String) {
        do {
            _ = try KafkaClientSettings(EnvironmentSettings(["KAFKA_PROPERTIES": value]), clientID: "ingest")
            Issue.record("accepted \(value)")
        } catch {
            #expect(error.description.contains("KAFKA_PROPERTIES"))
        }
    }

    @Test func tasksRunOnTheEventLoopsUnlessTurnedOff() throws {
        #expect(try EventLoopConcurrency.isRequested(EnvironmentSettings([:])))
        #expect(try EventLoopConcurrency.isRequested(EnvironmentSettings(["SWIFT_TASKS_ON_EVENT_LOOPS": "true"])))
        #expect(try !EventLoopConcurrency.isRequested(EnvironmentSettings(["SWIFT_TASKS_ON_EVENT_LOOPS": "false"])))
    }

    /// A boolean setting is `true` or `false`: `1`, `yes` or `TRUE` stop the service at start with the
    /// variable's name (`INGEST_VERIFY=1` once turned edge verification off without a word).
    @Test(arguments: ["1", "0", "yes", "TRUE", "False", " true"])
    func malformedBooleansStopTheService(value: String) throws {
        let settings = EnvironmentSettings(["INGEST_VERIFY": value, "SWIFT_TASKS_ON_EVENT_LOOPS": value])
        #expect(throws: SettingsError.self) { try settings.bool("INGEST_VERIFY", default: true) }
        #expect(throws: SettingsError.self) { try EventLoopConcurrency.isRequested(settings) }
        do {
            _ = try settings.bool("INGEST_VERIFY", default: true)
        } catch {
            #expect(error.description == "INGEST_VERIFY must be true or false, not \(value)")
        }
        #expect(try settings.bool("UNSET_FLAG", default: false) == false)
    }
}
