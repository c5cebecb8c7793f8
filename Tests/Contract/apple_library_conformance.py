"""Apple's own Python library (PyPI app-store-server-library) against appstore-sim: does Apple's verifier accept
what the sim signs, and does Apple's API client get answers from the sim? Run by AppleLibraryConformanceTests.

    apple_library_conformance.py --root ROOT.der --bundle-id ID --app-apple-id N --notifications FILE
        --api-url URL --key KEY.p8 --key-id K --issuer-id I --original-transaction-id T

FILE holds one `ENVIRONMENT SIGNED_PAYLOAD` per line. Prints one JSON object: how many notifications verified,
every failure with its reason, and what Get All Subscription Statuses returned (its signed transaction verified
by the same library).
"""
import argparse
import json

from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def main():
    parser = argparse.ArgumentParser()
    for name in ("root", "bundle-id", "app-apple-id", "notifications", "api-url", "key", "key-id", "issuer-id",
                 "original-transaction-id"):
        parser.add_argument("--" + name, required=True)
    arguments = parser.parse_args()
    root = open(arguments.root, "rb").read()
    verifiers = {
        environment: SignedDataVerifier([root], False, environment, arguments.bundle_id, int(arguments.app_apple_id))
        for environment in (Environment.PRODUCTION, Environment.SANDBOX)
    }
    result = {"verified": 0, "failures": [], "types": {}}
    for line in open(arguments.notifications):
        environment_name, signed = line.split()
        try:
            decoded = verifiers[Environment(environment_name)].verify_and_decode_notification(signed)
            result["verified"] += 1
            kind = str(decoded.rawNotificationType)
            result["types"][kind] = result["types"].get(kind, 0) + 1
        except VerificationException as error:
            result["failures"].append(f"{environment_name}: {error.status}")

    client = AppStoreServerAPIClient(
        open(arguments.key, "rb").read(), arguments.key_id, arguments.issuer_id, arguments.bundle_id,
        Environment.PRODUCTION)
    # Apple's client knows Apple's hosts only; the sim stands where Production would be.
    client._base_url = arguments.api_url.rstrip("/")
    try:
        statuses = client.get_all_subscription_statuses(arguments.original_transaction_id)
        transactions = [item for group in statuses.data or [] for item in group.lastTransactions or []]
        result["statuses"] = len(transactions)
        result["statusEnvironment"] = str(statuses.rawEnvironment)
        if transactions:
            transaction = verifiers[Environment.PRODUCTION].verify_and_decode_signed_transaction(
                transactions[0].signedTransactionInfo)
            result["statusTransaction"] = transaction.originalTransactionId
    except APIException as error:
        result["apiError"] = {"status": error.http_status_code, "code": error.raw_api_error}
    except VerificationException as error:
        result["failures"].append(f"status transaction: {error.status}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
