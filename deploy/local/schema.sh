#!/usr/bin/env bash
# Writes docs/schema.sql: the schema every migration produces, as pg_dump --schema-only prints it (through
# postgres.sh dump-schema). Run it after adding a migration; SchemaDocumentTests fails until the file matches.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/env.sh"
cd "$root"
swift build --product iapctl >/dev/null
dir=$(mktemp -d)
trap 'bash "$here/postgres.sh" stop "$dir"; rm -rf "$dir"' EXIT
url=$(bash "$here/postgres.sh" start "$dir")
DATABASE_URL="$url" "$(swift build --show-bin-path)/iapctl" migrate >/dev/null
bash "$here/postgres.sh" dump-schema "$dir" > docs/schema.sql
echo "docs/schema.sql: $(grep -c '^CREATE TABLE' docs/schema.sql) tables"
