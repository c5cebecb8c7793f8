"""Verifies deliveries with the `standardwebhooks` package from PyPI, as a receiver would.

Usage: verify_standard_webhooks.py DELIVERIES.json
Each delivery: {"body": str, "headers": {name: value}, "secrets": [whsec_...], "valid": bool}. A valid delivery must
verify with each of its secrets; an invalid one (tampered) must be refused by every one. Prints one line and exits 0
when every delivery is judged as expected, else 1 with the ones that were not.
"""
import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

deliveries = json.load(open(sys.argv[1]))
wrong = []
for index, delivery in enumerate(deliveries):
    for secret in delivery["secrets"]:
        try:
            Webhook(secret).verify(delivery["body"], delivery["headers"], json_parse=False)
            verified = True
        except WebhookVerificationError:
            verified = False
        if verified != delivery["valid"]:
            wrong.append(f"{index}: {'refused' if delivery['valid'] else 'accepted'} with {secret[:10]}…")
if wrong:
    print("not as expected: " + "; ".join(wrong[:5]))
    sys.exit(1)
print(f"standardwebhooks judged {len(deliveries)} deliveries as expected")
