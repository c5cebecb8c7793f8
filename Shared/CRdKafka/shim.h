// The librdkafka C API (Debian librdkafka-dev), imported only by the RdKafka target.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
