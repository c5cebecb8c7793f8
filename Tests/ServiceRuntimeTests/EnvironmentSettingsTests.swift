import ServiceRuntime
import Testing

/// Typed settings from environment variables, with errors that name the variable.
@Suite struct EnvironmentSettingsTests {
    let settings = EnvironmentSettings([
        "PORT": "8080", "BAD_PORT": "eighty", "TIMEOUT_MS": "250", "LIST": "a, b,,c", "EMPTY": "", "NAME": "x",
    ])

    @Test func typedValuesAndDefaults() throws {
        #expect(try self.settings.int("PORT", default: 1) == 8080)
        #expect(try self.settings.int("MISSING", default: 7) == 7)
        #expect(try self.settings.milliseconds("TIMEOUT_MS", default: .seconds(1)) == .milliseconds(250))
        #expect(self.settings.list("LIST") == ["a", "b", "c"])
        #expect(self.settings.string("EMPTY", default: "d") == "d")
        #expect(try self.settings.requiredString("NAME") == "x")
    }

    @Test func malformedOrMissingValuesNameTheVariable() {
        do {
            _ = try self.settings.int("BAD_PORT", default: 1)
            Issue.record("accepted a non-integer")
        } catch {
            #expect(error.description.contains("BAD_PORT"))
        }
        do {
            _ = try self.settings.requiredString("EMPTY")
            Issue.record("accepted an empty required value")
        } catch {
            #expect(error.description.contains("EMPTY"))
        }
    }
}

/// `LOG_LEVEL` is a setting like any other: a level swift-log knows, `info` when unset, and a stop otherwise.
@Suite struct LogLevelSettingTests {
    @Test func aKnownLevelIsTakenAndAnUnknownOneNamesTheVariable() throws {
        #expect(try LoggingSetup.level(EnvironmentSettings(["LOG_LEVEL": "debug"])) == .debug)
        #expect(try LoggingSetup.level(EnvironmentSettings([:])) == .info)
        #expect {
            try LoggingSetup.level(EnvironmentSettings(["LOG_LEVEL": "verbose"]))
        } throws: { error in
            "\(error)".contains("LOG_LEVEL") && "\(error)".contains("verbose")
        }
    }
}
