#!/usr/bin/env bash
# Runs what the product does so far, on this machine: builds `iapctl` and fully verifies the real
# Apple-signed Sandbox notification (outer JWS, transaction and renewal info) against Apple Root CA G3,
# then shows how a forged notification is refused. Later issues grow this into the whole local pipeline.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH"
deploy/local/prerequisites.sh
swift build --product iapctl
iapctl=$(swift build --show-bin-path)/iapctl
sample=Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW

echo "== iapctl verify: the real Apple-signed DID_RENEW notification (Sandbox)"
"$iapctl" verify --bundle-id com.loki-project.loki-messenger --app-apple-id 1470168868 \
    --environment Sandbox "$sample" > /tmp/iapctl-verified.json
python3 - /tmp/iapctl-verified.json <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))
t, r = n["data"]["transactionInfo"], n["data"]["renewalInfo"]
print(f'valid: {n["notificationType"]} {n["notificationUUID"]} status={n["data"]["status"]}')
print(f'  transaction {t["transactionId"]} of {t["originalTransactionId"]}: {t["productId"]} '
      f'{t["transactionReason"]} {t["price"]/1000:.2f} {t["currency"]}, expires {t["expiresDate"]}')
print(f'  renewal info: autoRenewStatus={r["autoRenewStatus"]} renews to {r["autoRenewProductId"]}')
PY
echo "   (full JSON: /tmp/iapctl-verified.json)"

echo "== iapctl verify: the same notification in a Production configuration"
"$iapctl" verify --bundle-id com.loki-project.loki-messenger --app-apple-id 1470168868 \
    --environment Production "$sample" || echo "   exit $? (refused, as it must be)"

echo "== iapctl verify: the same notification with one signature character changed"
python3 -c 'import sys; s = open(sys.argv[1]).read().strip(); i = s.rindex(".") + 20; print(s[:i] + ("A" if s[i] != "A" else "B") + s[i+1:])' "$sample" \
    | "$iapctl" verify --bundle-id com.loki-project.loki-messenger \
    --app-apple-id 1470168868 --environment Sandbox - || echo "   exit $? (refused, as it must be)"
