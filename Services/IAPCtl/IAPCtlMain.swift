import ArgumentParser
import Foundation

/// `iapctl`, the operator's tool. Subcommands are added as the product grows.
struct IAPCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iapctl",
        abstract: "Operate the App Store notifications pipeline.",
        subcommands: [
            VerifyCommand.self, TopicsCommand.self, MigrateCommand.self, EntitlementsCommand.self, BackfillCommand.self,
            ReplayCommand.self,
            TestNotificationCommand.self, APIKeysCommand.self, ResyncCommand.self, SupportCommand.self,
            RetentionCommand.self, PruneCommand.self, WebhooksCommand.self,
        ])
}

/// The entry point. It maps outcomes to exit codes: a command's own `ExitCode`, 0 for help, and 2 for
/// every usage error (ArgumentParser's default would be 64).
@main
enum IAPCtlEntryPoint {
    static func main() async {
        do {
            var command = try IAPCtl.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            if IAPCtl.exitCode(for: error) == .success {
                print(IAPCtl.fullMessage(for: error))
                Foundation.exit(0)
            }
            StandardStreams.writeError(IAPCtl.fullMessage(for: error))
            Foundation.exit(2)
        }
    }
}
