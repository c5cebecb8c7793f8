#!/usr/bin/env bash
# Makes a throwaway certificate authority and a server certificate signed by it, for tests of TLS connections:
#   tls-certs.sh DIR NAME    writes DIR/ca.pem, DIR/ca.key, DIR/server.pem and DIR/server.key (the server's
#                            subjectAltName is DNS:NAME) and DIR/client.pem, DIR/client.key (CN=test-client)
# Keys are 0600. Nothing here is for production: the keys are made and kept in DIR only.
set -euo pipefail
dir=${1:?usage: tls-certs.sh DIR NAME}
name=${2:?usage: tls-certs.sh DIR NAME}
mkdir -p "$dir"
cd "$dir"
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=test-ca" \
    -keyout ca.key -out ca.pem >/dev/null 2>&1
for who in server client; do
    subject=$([[ $who == server ]] && echo "/CN=$name" || echo "/CN=test-client")
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$subject" -keyout $who.key -out $who.csr \
        >/dev/null 2>&1
    extensions=$([[ $who == server ]] && echo "subjectAltName=DNS:$name" || echo "extendedKeyUsage=clientAuth")
    openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out $who.pem \
        -extfile <(echo "$extensions") >/dev/null 2>&1
    rm -f $who.csr
done
chmod 0644 ca.pem server.pem client.pem
echo "$dir"
