import AppStoreModels
import Foundation

/// The Retention Messaging side of App Store Connect, per environment: uploaded images and messages with their
/// review state, default messages per product and locale, the real-time URL, and performance tests with results.
///
/// Review, as the sim plays it: an upload is `PENDING` for `reviewDelay` (or until ``reviewAll(now:)`` decides every
/// upload so far, as a test does), then `APPROVED`, unless its text holds a link (`http://`, `https://`), which App
/// Review refuses here (`REJECTED`).
@_spi(Testing) public actor SimMessagingStore {
    /// An uploaded message.
    struct Message: Sendable {
        var upload: UploadMessageRequestBody
        var uploadedAt: Date
    }

    /// One environment's configuration.
    struct Space: Sendable {
        var images: [String: Date] = [:]
        var messages: [String: Message] = [:]
        /// Default message by "productId locale".
        var defaults: [String: String] = [:]
        var realtimeURL: String?
        var tests: [String: PerformanceTestResultResponse] = [:]
        /// Whether a performance test of this environment has passed (Production's URL needs one).
        var passedTest = false
    }

    let reviewDelay: Duration
    /// Uploads at or before this instant are decided, whatever the delay.
    private var reviewedUpTo = Date.distantPast
    private var spaces: [Environment: Space] = [:]
    /// The most images and messages an app may have (Apple's limits are larger; small to reach in tests).
    static let maximumItems = 100

    init(reviewDelay: Duration) { self.reviewDelay = reviewDelay }

    // MARK: Review states

    /// App Review decides every upload made so far (the review delay no longer applies to them).
    @_spi(Testing) public func reviewAll(now: Date = Date()) { self.reviewedUpTo = now }

    /// A message's or image's state now.
    func state(uploadedAt: Date, text: String, now: Date = Date()) -> String {
        guard now.timeIntervalSince(uploadedAt) >= self.reviewDelay.timeInterval || uploadedAt <= self.reviewedUpTo
        else {
            return "PENDING"
        }
        return text.contains("http://") || text.contains("https://") ? "REJECTED" : "APPROVED"
    }

    /// A message's state now (nil: no such message).
    func messageState(_ id: String, _ environment: Environment) -> String? {
        guard let message = self.spaces[environment]?.messages[id] else { return nil }
        return self.state(uploadedAt: message.uploadedAt, text: message.upload.header + " " + message.upload.body)
    }

    /// An image's state now (nil: no such image).
    func imageState(_ id: String, _ environment: Environment) -> String? {
        self.spaces[environment]?.images[id].map { self.state(uploadedAt: $0, text: "") }
    }

    // MARK: Images and messages

    /// Stores an image; false when the id exists (4090000) or the limit is reached.
    func uploadImage(_ id: String, _ environment: Environment) -> Int? {
        var space = self.spaces[environment] ?? Space()
        guard space.images[id] == nil else { return 4_090_000 }
        guard space.images.count < Self.maximumItems else { return 4_030_014 }
        space.images[id] = Date()
        self.spaces[environment] = space
        return nil
    }

    /// Stores a message; an Apple error code when refused.
    func uploadMessage(_ id: String, _ upload: UploadMessageRequestBody, _ environment: Environment) -> Int? {
        var space = self.spaces[environment] ?? Space()
        guard space.messages[id] == nil else { return 4_090_001 }
        guard space.messages.count < Self.maximumItems else { return 4_030_016 }
        guard upload.header.count <= 66 else { return 4_000_162 }
        guard upload.body.count <= 144 else { return 4_000_163 }
        if let image = upload.image {
            guard image.altText.count <= 150 else { return 4_000_175 }
            guard space.images[image.imageIdentifier] != nil else { return 4_040_014 }
        }
        space.messages[id] = Message(upload: upload, uploadedAt: Date())
        self.spaces[environment] = space
        return nil
    }

    /// Deletes a message or image; an Apple error code when there is none or it is in use.
    func delete(message id: String, _ environment: Environment) -> Int? {
        guard self.spaces[environment]?.messages.removeValue(forKey: id) != nil else { return 4_040_015 }
        self.spaces[environment]?.defaults = self.spaces[environment]?.defaults.filter { $0.value != id } ?? [:]
        return nil
    }

    func delete(image id: String, _ environment: Environment) -> Int? {
        guard self.spaces[environment]?.images[id] != nil else { return 4_040_014 }
        if self.spaces[environment]?.messages.values.contains(where: { $0.upload.image?.imageIdentifier == id }) == true
        {
            return 4_030_019
        }
        self.spaces[environment]?.images[id] = nil
        return nil
    }

    func messages(_ environment: Environment) -> [MessageListItem] {
        (self.spaces[environment]?.messages.keys.sorted() ?? []).map {
            MessageListItem(messageIdentifier: $0, messageState: self.messageState($0, environment))
        }
    }

    func images(_ environment: Environment) -> [ImageListItem] {
        (self.spaces[environment]?.images.keys.sorted() ?? []).map {
            ImageListItem(imageIdentifier: $0, imageState: self.imageState($0, environment))
        }
    }

    // MARK: Default messages

    /// Sets a product's default message for a locale: the message must exist and be approved (4030017), its image too.
    func setDefault(product: String, locale: String, message: String, _ environment: Environment) -> Int? {
        guard let state = self.messageState(message, environment) else { return 4_040_015 }
        guard state == "APPROVED" else { return 4_030_017 }
        if let image = self.spaces[environment]?.messages[message]?.upload.image?.imageIdentifier,
            self.imageState(image, environment) != "APPROVED"
        {
            return 4_030_018
        }
        self.spaces[environment]?.defaults["\(product) \(locale)"] = message
        return nil
    }

    func defaultMessage(product: String, locale: String, _ environment: Environment) -> String? {
        self.spaces[environment]?.defaults["\(product) \(locale)"]
    }

    func deleteDefault(product: String, locale: String, _ environment: Environment) -> Int? {
        guard self.spaces[environment]?.defaults.removeValue(forKey: "\(product) \(locale)") != nil else {
            return 4_040_020
        }
        return nil
    }

    // MARK: Real-time URL and performance tests

    /// Sets the real-time URL; Production needs a passed performance test first (4030026).
    func setRealtimeURL(_ url: String, _ environment: Environment) -> Int? {
        guard url.count <= 256, let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? "") else {
            return 4_000_215
        }
        var space = self.spaces[environment] ?? Space()
        if environment == .production {
            guard self.spaces.values.contains(where: \.passedTest) else { return 4_030_026 }
        }
        space.realtimeURL = url
        self.spaces[environment] = space
        return nil
    }

    func realtimeURL(_ environment: Environment) -> String? { self.spaces[environment]?.realtimeURL }

    func deleteRealtimeURL(_ environment: Environment) -> Int? {
        guard self.spaces[environment]?.realtimeURL != nil else { return 4_040_021 }
        self.spaces[environment]?.realtimeURL = nil
        return nil
    }

    /// Registers a running test; false when one is already running in the environment (4000213).
    func startTest(_ id: String, _ initial: PerformanceTestResultResponse, _ environment: Environment) -> Bool {
        var space = self.spaces[environment] ?? Space()
        guard !space.tests.values.contains(where: { $0.result == "PENDING" }) else { return false }
        space.tests[id] = initial
        self.spaces[environment] = space
        return true
    }

    func updateTest(_ id: String, _ result: PerformanceTestResultResponse, _ environment: Environment) {
        self.spaces[environment]?.tests[id] = result
        if result.result == "PASS" { self.spaces[environment]?.passedTest = true }
    }

    func test(_ id: String, _ environment: Environment) -> PerformanceTestResultResponse? {
        self.spaces[environment]?.tests[id]
    }
}
