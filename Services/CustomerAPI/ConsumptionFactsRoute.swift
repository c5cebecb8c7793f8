import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import RdKafka
import ServiceRuntime
import Storage

/// `PUT /v1/apps/{bundleId}/customers/{customer}/consumption-facts[?idType=appUserId|appAccountToken|originalTransactionId]`:
/// the app records its customer's consent to
/// share consumption data with Apple (and, optionally, play time, delivery, consumption, user status) for the
/// answers to CONSUMPTION_REQUESTs. Written through the verified topic (the updater stores it); answered 200 once
/// stored (within the apply wait), else 202.
struct ConsumptionFactsRoute: Sendable {
    let producer: KafkaProducer
    let topics: PipelineTopics
    /// Signs the facts record for the updater.
    let signing: RecordSigner
    let database: PostgresClient
    let applyWait: Duration
    let outcomes: LabelledCounter
    let logger: Logger

    /// The JSON body.
    struct Body: Decodable {
        var environment: String?
        var transactionId: String?
        var customerConsented: Bool
        var playTimeMinutes: Int64?
        var deliveryStatus: String?
        var consumptionPercentage: Int32?
        var userStatus: Int32?
    }

    func add(to group: RouterGroup<CustomerAPIContext>) {
        group.put("apps/:bundleId/customers/:customer/consumption-facts") { request, context in
            try await self.put(request, context)
        }
    }

    func put(_ request: Request, _ context: CustomerAPIContext) async throws -> Response {
        let bundleId = try context.parameters.require("bundleId")
        let customer = try context.parameters.require("customer")
        guard !customer.isEmpty, customer.count <= 128 else {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(.badRequest, "bad-customer", "a customer id is 1 to 128 characters")
        }
        let bytes: ByteBuffer
        do {
            bytes = try await BoundedBody.read(request, limit: 1 << 16)
        } catch {
            self.outcomes.increment("bad-request")
            return error.response
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView)) else {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(.badRequest, "bad-body", "expected {\"customerConsented\": true|false, …}")
        }
        let environment = body.environment ?? "Production"
        guard ["Production", "Sandbox"].contains(environment) else {
            return APIErrorResponse.response(
                .badRequest, "bad-environment", "environment must be Production or Sandbox")
        }
        // The kind of id is named, as look-ups name it: facts for app user "X" never answer for a purchase whose token
        // or originalTransactionId is "X".
        let kindName = request.uri.queryParameters.get("idType") ?? CustomerIDKind.appUserId.rawValue
        guard let kind = CustomerIDKind(rawValue: kindName) else {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(
                .badRequest, "bad-id-type", "idType must be appUserId, appAccountToken or originalTransactionId")
        }
        let named = kind == .appAccountToken ? customer.lowercased() : customer
        let facts = ConsumptionFactsRecord(
            environment: environment, bundleId: bundleId, customer: named, customerKind: kind.rawValue,
            transactionId: body.transactionId ?? "",
            customerConsented: body.customerConsented, playTimeMinutes: body.playTimeMinutes,
            deliveryStatus: body.deliveryStatus,
            consumptionPercentage: body.consumptionPercentage, userStatus: body.userStatus)
        if let problem = facts.problem {
            self.outcomes.increment("bad-request")
            return APIErrorResponse.response(.badRequest, "bad-consumption-facts", problem)
        }
        _ = try await self.producer.enqueue(
            try VerifiedTopicRecords.consumptionFacts(facts, topics: self.topics, signing: self.signing)
        ).report
        let (database, logger) = (self.database, self.logger)
        let stored = try await pollUntil(within: self.applyWait) {
            try await ConsumptionRequests.isStored(facts, client: database, logger: logger) ? true : nil
        }
        if stored == true {
            self.outcomes.increment("consumption-facts")
            return SupportRoutes.json(["customer": customer, "stored": "true"])
        }
        self.outcomes.increment("consumption-facts-accepted")
        return SupportRoutes.json(["customer": customer, "stored": "false"], status: .accepted)
    }
}
