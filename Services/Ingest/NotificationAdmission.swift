import AppStoreModels
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords

/// What ingest learned from a body that passed the structural checks.
struct AdmittedNotification: Sendable {
    /// The body's `signedPayload`, split, with its payload decoded (not yet verified).
    var notification: UnverifiedNotification
    var environment: Environment
    /// The app the notification is for (a configured one unless ``parked``).
    var bundleId: String
    var subject: String
    var notificationUUID: String?
    /// `unknown-app` or `unknown-environment`: the notification names an app or App Store environment not configured
    /// here. Once Apple's signature is verified it is stored all the same (200: Apple may not retry a 4xx), and the
    /// chain-verifier parks it in the DLQ under that reason, to be replayed once the app is configured.
    var parked: String?
}

/// Why a body was refused: the HTTP status and a JSON error naming the problem.
struct AdmissionRejection: Error, Sendable {
    var status: Int
    /// A stable machine-readable code (`body-too-large`, `not-json`, `not-a-jws`, …).
    var code: String
    var message: String
}

/// The cheap structural checks ingest makes before the signature (``EdgeVerification``): they refuse what can
/// never verify, so Apple sees a 4xx at once and no certificate is parsed for it.
struct NotificationAdmission: Sendable {
    let apps: [AppIdentity]
    let environments: [Environment]
    /// The facts of headers seen before: Apple signs with a few certificates, so the ~4 KB header (a tenth of
    /// ingest's CPU to decode) is decoded once per certificate, not once per notification.
    let headers = HeaderCache<JWSHeaderFacts>(capacity: 64)

    /// Checks a body for a route (`nil`: any configured environment).
    func admit(body: [UInt8], route: Environment?) throws(AdmissionRejection) -> AdmittedNotification {
        guard let signedPayload = EnvelopeReader.signedPayloadBytes(in: body) else {
            let isJSON = (try? JSONSerialization.jsonObject(with: Data(body))) != nil
            throw isJSON
                ? AdmissionRejection(
                    status: 400, code: "no-signed-payload", message: "the body has no signedPayload string")
                : AdmissionRejection(
                    status: 400, code: "not-json", message: "the body must be JSON {\"signedPayload\": \"<JWS>\"}")
        }
        guard !signedPayload.isEmpty else {
            throw AdmissionRejection(
                status: 400, code: "no-signed-payload", message: "the body has an empty signedPayload")
        }
        let jws: UnverifiedJWS
        do {
            jws = try UnverifiedJWS(bytes: signedPayload, headers: self.headers)
        } catch {
            throw AdmissionRejection(
                status: 400, code: "not-a-jws", message: "signedPayload is not a compact JWS: \(error.detail)")
        }
        guard jws.algorithm == "ES256" else {
            throw AdmissionRejection(
                status: 400, code: "bad-algorithm", message: "alg must be ES256, found \(jws.algorithm ?? "none")")
        }
        guard jws.certificateCount == 3 else {
            throw AdmissionRejection(
                status: 400, code: "bad-certificate-chain",
                message: "x5c must hold 3 certificates, found \(jws.certificateCount ?? 0)")
        }
        let notification: UnverifiedNotification
        do {
            notification = try jws.decodeNotification()
        } catch {
            throw AdmissionRejection(status: 400, code: "bad-payload", message: "the payload is not a notification")
        }
        let payload = notification.payload
        guard payload.notificationUUID != nil, payload.signedDate != nil, payload.containerCount == 1 else {
            throw AdmissionRejection(
                status: 400, code: "bad-payload",
                message: "the notification needs notificationUUID, signedDate and exactly one data container")
        }
        let (environment, environmentParked) = try self.checkEnvironment(payload, route: route)
        let appParked = try self.checkApp(payload)
        return AdmittedNotification(
            notification: notification, environment: environment, bundleId: payload.bundleId ?? "",
            subject: NotificationSubject.of(payload, transaction: Self.unverifiedTransaction(payload)),
            notificationUUID: payload.notificationUUID, parked: environmentParked ?? appParked)
    }

    /// A notification with no app is refused; one of an app not configured (or whose appAppleId is not the
    /// configured one) is parked as `unknown-app`.
    private func checkApp(_ payload: ResponseBodyV2DecodedPayload) throws(AdmissionRejection) -> String? {
        guard let bundleId = payload.bundleId, !bundleId.isEmpty else {
            throw AdmissionRejection(status: 400, code: "bad-payload", message: "the notification names no bundleId")
        }
        guard let app = self.apps.first(where: { $0.bundleId == bundleId }) else { return "unknown-app" }
        if let expected = app.appAppleId, let actual = payload.appAppleId, expected != actual { return "unknown-app" }
        return nil
    }

    /// The notification's environment, equal to the route's when the route names one: an App Store server
    /// environment not accepted here is parked as `unknown-environment`; anything else is refused.
    private func checkEnvironment(_ payload: ResponseBodyV2DecodedPayload, route: Environment?)
        throws(AdmissionRejection) -> (Environment, parked: String?)
    {
        guard let raw = payload.rawEnvironment, let environment = Environment(rawValue: raw),
            self.environments.contains(environment) || environment.isAppStoreServer
        else {
            throw AdmissionRejection(
                status: 400, code: "unknown-environment",
                message: "environment \(payload.rawEnvironment ?? "(none)") is not accepted here")
        }
        if let route, route != environment {
            throw AdmissionRejection(
                status: 400, code: "wrong-environment",
                message: "a \(environment.rawValue) notification was posted to the \(route.rawValue) route")
        }
        return (environment, self.environments.contains(environment) ? nil : "unknown-environment")
    }

    /// The nested transaction's `originalTransactionId`, decoded without verification (its header not even
    /// decoded), for the subject only.
    private static func unverifiedTransaction(_ payload: ResponseBodyV2DecodedPayload) -> JWSTransactionDecodedPayload?
    {
        guard let signed = payload.data?.signedTransactionInfo,
            let subject = try? UnverifiedJWS.decodePayload(of: signed, as: TransactionSubject.self)
        else { return nil }
        var transaction = JWSTransactionDecodedPayload()
        transaction.originalTransactionId = subject.originalTransactionId
        return transaction
    }

    /// The one field of a transaction the subject needs.
    private struct TransactionSubject: Decodable {
        var originalTransactionId: String?
    }
}
