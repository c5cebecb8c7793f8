import Foundation
import SwiftASN1
public import X509

/// Apple's intermediate certificates that sign App Store leaves, built in so that a default configuration knows
/// them from the start (``SignedDataVerifier/warm(intermediates:)``): the first notification after a start or a
/// leaf rotation then costs one leaf check and no new-chain budget.
public enum AppleIntermediateCertificates {
    /// Apple Worldwide Developer Relations Certification Authority, G6 (P-384, issued by Apple Root CA - G3, valid
    /// 2021-03-17 to 2036-03-19): the intermediate of App Store signing chains. DER, SHA-256 fingerprint
    /// bdd4ed6e74691f0c2bfd01be0296197af1379e0418e2d300efa9c3bef642ca30: `x5c[1]` of the real Apple-signed notification
    /// of the conformance data, also published at https://www.apple.com/certificateauthority/.
    public static let wwdrG6DER: [UInt8] = Array(Data(base64Encoded: wwdrG6Base64)!)

    /// The built-in intermediates, parsed.
    public static var all: [Certificate] {
        // The bytes are a constant checked by the tests; parsing them cannot fail.
        [try! Certificate(derEncoded: wwdrG6DER)]
    }

    private static let wwdrG6Base64 =
        "MIIDFjCCApygAwIBAgIUIsGhRwp0c2nvU4YSycafPTjzbNcwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9vdCBDQSAt"
        + "IEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMC"
        + "VVMwHhcNMjEwMzE3MjAzNzEwWhcNMzYwMzE5MDAwMDAwWjB1MUQwQgYDVQQDDDtBcHBsZSBXb3JsZHdpZGUgRGV2ZWxvcGVyIFJl"
        + "bGF0aW9ucyBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTELMAkGA1UECwwCRzYxEzARBgNVBAoMCkFwcGxlIEluYy4xCzAJBgNVBAYT"
        + "AlVTMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEbsQKC94PrlWmZXnXgtxzdVJL8T0SGYngDRGpngn3N6PT8JMEb7FDi4bBmPhCnZ3/"
        + "sq6PF/cGcKXWsL5vOteRhyJ45x3ASP7cOB+aao90fcpxSv/EZFbniAbNgZGhIhpIo4H6MIH3MBIGA1UdEwEB/wQIMAYBAf8CAQAw"
        + "HwYDVR0jBBgwFoAUu7DeoVgziJqkipnevr3rr9rLJKswRgYIKwYBBQUHAQEEOjA4MDYGCCsGAQUFBzABhipodHRwOi8vb2NzcC5h"
        + "cHBsZS5jb20vb2NzcDAzLWFwcGxlcm9vdGNhZzMwNwYDVR0fBDAwLjAsoCqgKIYmaHR0cDovL2NybC5hcHBsZS5jb20vYXBwbGVy"
        + "b290Y2FnMy5jcmwwHQYDVR0OBBYEFD8vlCNR01DJmig97bB85c+lkGKZMA4GA1UdDwEB/wQEAwIBBjAQBgoqhkiG92NkBgIBBAIF"
        + "ADAKBggqhkjOPQQDAwNoADBlAjBAXhSq5IyKogMCPtw490BaB677CaEGJXufQB/EqZGd6CSjiCtOnuMTbXVXmxxcxfkCMQDTSPxa"
        + "rZXvNrkxU3TkUMI33yzvFVVRT4wxWJC994OsdcZ4+RGNsYDyR5gmdr0nDGg="
}
