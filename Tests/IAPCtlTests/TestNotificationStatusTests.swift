import AppStoreAPI
import Testing

@testable import IAPCtl

/// `iapctl test-notification` asks for the status again, until its timeout, only when Apple says there is nothing to
/// report yet (404 with `TestNotificationNotFoundError`, 4040008); every other failure ends the command at once.
@Suite struct TestNotificationStatusTests {
    @Test func onlyApplesNotFoundCodeMeansNotAvailableYet() {
        let notYet = AppStoreAPIError(.http(status: 404, errorCode: 4_040_008, message: nil))
        #expect(TestNotificationCommand.isNotAvailableYet(notYet))
        for other in [
            AppStoreAPIError(.http(status: 404, errorCode: 4_040_010, message: nil)),
            AppStoreAPIError(.http(status: 401, errorCode: nil, message: nil)),
            AppStoreAPIError(.http(status: 400, errorCode: 4_000_020, message: nil)),
            AppStoreAPIError(.http(status: 500, errorCode: 5_000_001, message: nil)),
            AppStoreAPIError(.timeout),
        ] {
            #expect(!TestNotificationCommand.isNotAvailableYet(other), "\(other)")
        }
    }
}
