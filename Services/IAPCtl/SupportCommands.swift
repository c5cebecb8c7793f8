import AppStoreAPI
import AppStoreModels
import ArgumentParser
import Foundation
import Logging
import NotificationPipeline

/// `iapctl support …`: the look-ups and make-goods of support work against the App Store Server API (the same
/// `APPSTORE_*` settings as the services): Look Up Order ID, Get Refund History (every page), Get Transaction
/// Info, Extend a Subscription Renewal Date, and the mass extension with its status polled to the end. Each
/// prints JSON lines on stdout; Apple's refusals exit 1 with the error on stderr.
struct SupportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "support", abstract: "Look up orders, refunds and transactions; extend renewal dates.",
        subcommands: [LookUpOrder.self, RefundHistory.self, TransactionInfo.self, ExtendRenewal.self, MassExtend.self])

    /// Where each call goes.
    struct Scope: ParsableArguments {
        @Option(help: "The app (default: the first of APPSTORE_APPS).") var app: String?
        @Option(help: "Production or Sandbox (default: Production, then Sandbox for ids Production does not know).")
        var environment: String?

        /// The API client of this app and environment.
        func client(_ access: APIAccess) throws -> AppStoreServerAPIClient {
            let bundleId =
                try self.app
                ?? (access.configured.first?.bundleId).orThrow(ValidationError("APPSTORE_APPS names no app"))
            let environment = try self.environment.map { name -> Environment in
                guard let environment = Environment(rawValue: name), environment.isAppStoreServer else {
                    throw ValidationError("--environment must be Production or Sandbox")
                }
                return environment
            }
            return try access.client.scoped(
                bundleID: bundleId, environment: environment ?? .production, fallbackToSandbox: environment == nil)
        }
    }

    /// Runs a call with the API client, printing Apple's refusals and exiting 1 on them.
    static func run(_ scope: Scope, _ call: (AppStoreServerAPIClient) async throws -> Void) async throws {
        do {
            try await APIAccess.with(logger: APIAccess.quietLogger) { access in try await call(try scope.client(access))
            }
        } catch let error as ValidationError {
            throw error
        } catch let exit as ExitCode {
            throw exit
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// Apple's bounds of an extension (single or mass): 1–90 days, reason code 0–3.
    static func validateExtension(days: Int32, reason: Int32) throws {
        guard (1...90).contains(days) else { throw ValidationError("--days must be 1…90") }
        guard (0...3).contains(reason) else { throw ValidationError("--reason must be 0…3") }
    }

    struct LookUpOrder: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lookup-order", abstract: "Look Up Order ID: the order's transactions, one JSON line each.")
        @OptionGroup var scope: Scope
        @Argument(help: "The order id from the customer's emailed receipt.") var orderId: String

        func run() async throws {
            let orderId = self.orderId
            try await SupportCommand.run(self.scope) { client in
                guard let order = try await client.lookUpOrder(orderId) else {
                    StandardStreams.writeError("Apple knows no order \(orderId)")
                    throw ExitCode(1)
                }
                for item in order.transactions { try StandardStreams.writeJSONLine(item.transaction) }
            }
        }
    }

    struct RefundHistory: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "refund-history",
            abstract: "Get Refund History (every page): the customer's refunded transactions, oldest first.")
        @OptionGroup var scope: Scope
        @Argument(help: "Any transaction id of the customer.") var transactionId: String

        func run() async throws {
            let id = self.transactionId
            try await SupportCommand.run(self.scope) { client in
                let refunds = try await client.refundHistory(id)
                for item in refunds.transactions { try StandardStreams.writeJSONLine(item.transaction) }
                StandardStreams.writeError(
                    "\(refunds.transactions.count) refunded transaction(s) in \(refunds.environment.rawValue)")
            }
        }
    }

    struct TransactionInfo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "transaction-info", abstract: "Get Transaction Info, verified and decoded.")
        @OptionGroup var scope: Scope
        @Argument(help: "The transaction id.") var transactionId: String

        func run() async throws {
            let id = self.transactionId
            try await SupportCommand.run(self.scope) { client in
                try StandardStreams.writeJSONLine(try await client.transactionInfo(id).transaction)
            }
        }
    }

    struct ExtendRenewal: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extend-renewal",
            abstract: "Extend a Subscription Renewal Date (Apple then sends RENEWAL_EXTENDED).")
        @OptionGroup var scope: Scope
        @Option(help: "The subscription's original transaction id.") var originalTransactionId: String
        @Option(help: "Days to add (1–90).") var days: Int32
        @Option(help: "0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.") var reason: Int32 =
            1
        @Option(help: "Makes a repeat harmless (default: a new UUID).") var requestIdentifier: String?

        func validate() throws { try SupportCommand.validateExtension(days: self.days, reason: self.reason) }

        func run() async throws {
            let request = ExtendRenewalDateRequest(
                extendByDays: self.days, extendReasonCode: self.reason,
                requestIdentifier: self.requestIdentifier ?? UUID().uuidString.lowercased())
            let original = self.originalTransactionId
            try await SupportCommand.run(self.scope) { client in
                try StandardStreams.writeJSONLine(try await client.extendRenewalDate(original, request))
            }
        }
    }

    struct MassExtend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mass-extend",
            abstract:
                "Extend the renewal date of every active subscriber of a product, then poll its status to the end.")
        @OptionGroup var scope: Scope
        @Option(help: "The product.") var productId: String
        @Option(help: "Days to add (1–90).") var days: Int32
        @Option(help: "0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.") var reason: Int32 =
            3
        @Option(help: "Comma-separated ISO 3166-1 alpha-3 storefronts (default: all).") var storefronts: String?
        @Option(help: "Identifies the extension (default: a new UUID); the same one resumes polling.")
        var requestIdentifier: String?
        @Option(help: "Milliseconds between status polls.") var pollMs = 5_000

        func validate() throws { try SupportCommand.validateExtension(days: self.days, reason: self.reason) }

        func run() async throws {
            let request = MassExtendRenewalDateRequest(
                extendByDays: self.days, extendReasonCode: self.reason,
                requestIdentifier: self.requestIdentifier ?? UUID().uuidString.lowercased(),
                productId: self.productId,
                storefrontCountryCodes: self.storefronts.map { $0.split(separator: ",").map(String.init) })
            let interval = Duration.milliseconds(self.pollMs)
            try await SupportCommand.run(self.scope) { client in
                let started = try await client.extendRenewalDatesForAllActiveSubscribers(request)
                StandardStreams.writeError("mass extension \(started.requestIdentifier) requested; polling")
                let done = try await client.waitForMassExtension(
                    productId: request.productId, requestIdentifier: started.requestIdentifier,
                    interval: interval
                ) { status in
                    StandardStreams.writeError(
                        "  \(status.succeededCount ?? 0) extended, \(status.failedCount ?? 0) failed, complete: \(status.complete ?? false)"
                    )
                }
                try StandardStreams.writeJSONLine(done)
            }
        }
    }
}
