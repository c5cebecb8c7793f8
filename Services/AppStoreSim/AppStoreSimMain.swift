import AppStoreSimKit

/// `appstore-sim`: the App Store stand-in's command line; everything it runs lives in `AppStoreSimKit`, which the
/// tests use as a library.
@main
enum AppStoreSimMain {
    static func main() async {
        await AppStoreSimCommand.runFromCommandLine()
    }
}
