/*
 * ack-latency: a librdkafka producer that sends fixed-size messages at a fixed rate and reports
 * each message's ack latency, for bench/broker.bench.ts (kcat cannot report per-message times).
 *
 *   ack-latency BOOTSTRAP TOPIC RATE_PER_S DURATION_MS VALUE_BYTES WARMUP_MS [-X name=value ...]
 *
 * Open loop: message i is due at start + i / RATE; the main thread sleeps until then
 * (clock_nanosleep, absolute) and produces it. Its latency runs from that due time, not from
 * the produce call, so a producer or broker that falls behind is charged for the wait
 * (no coordinated omission), to the delivery report, which a second thread blocked in
 * rd_kafka_poll receives the moment librdkafka parses the broker's response.
 *
 * First WARMUP_MS at the same rate, unrecorded (connections, metadata, the broker's JIT), then
 * a pause until every warm-up message is acknowledged, then DURATION_MS recorded.
 * stdout: one latency per line in microseconds, in send order. stderr: a summary line.
 * Exit status 1 if any message failed or was not acknowledged within 30 s of the last send.
 *
 * Build: cc -O2 -pthread -o ack-latency ack-latency.c -lrdkafka   (Debian: librdkafka-dev)
 */
#define _GNU_SOURCE
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DRAIN_TIMEOUT_NS (30LL * 1000 * 1000 * 1000)
#define POLL_TIMEOUT_MS 20

static int64_t *due_ns;       /* per message: when it was due to be sent */
static int64_t *latency_ns;   /* per message: ack time - due time; -1 until acknowledged */
static atomic_long acked;
static atomic_long failed;
static atomic_int stopping;
static rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(int64_t when_ns) {
  struct timespec ts = { .tv_sec = when_ns / 1000000000LL, .tv_nsec = when_ns % 1000000000LL };
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque) {
  (void)rk;
  (void)opaque;
  int64_t at = now_ns();
  long index = (long)(intptr_t)message->_private;
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (atomic_fetch_add(&failed, 1) == 0) first_error = message->err;
    return;
  }
  latency_ns[index] = at - due_ns[index];
  atomic_fetch_add(&acked, 1);
}

static void *poller(void *arg) {
  rd_kafka_t *rk = arg;
  while (!atomic_load(&stopping)) rd_kafka_poll(rk, POLL_TIMEOUT_MS);
  return NULL;
}

static void on_log(const rd_kafka_t *rk, int level, const char *facility, const char *message) {
  (void)rk;
  if (level <= 3) fprintf(stderr, "ack-latency: %s: %s\n", facility, message);
}

/* Sends messages [from, to) on the open-loop schedule that starts at start_ns. */
static int send_range(rd_kafka_t *rk, const char *topic, const char *value, size_t value_bytes, long from, long to, int64_t start_ns, double interval_ns) {
  for (long index = from; index < to; index++) {
    int64_t due = start_ns + (int64_t)((double)(index - from) * interval_ns);
    sleep_until(due);
    due_ns[index] = due;
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_VALUE((void *)value, value_bytes),
                                                  RD_KAFKA_V_OPAQUE((void *)(intptr_t)index), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        fprintf(stderr, "ack-latency: produce: %s\n", rd_kafka_err2str(err));
        return -1;
      }
      struct timespec pause = { 0, 100000 };
      nanosleep(&pause, NULL);
    }
  }
  return 0;
}

/* Waits until `count` messages were acknowledged or failed; 0 on success. */
static int wait_for(long count) {
  int64_t deadline = now_ns() + DRAIN_TIMEOUT_NS;
  while (atomic_load(&acked) + atomic_load(&failed) < count) {
    if (now_ns() > deadline) return -1;
    struct timespec pause = { 0, 200000 };
    nanosleep(&pause, NULL);
  }
  return atomic_load(&failed) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: ack-latency BOOTSTRAP TOPIC RATE_PER_S DURATION_MS VALUE_BYTES WARMUP_MS [-X name=value ...]\n");
    return 2;
  }
  const char *bootstrap = argv[1];
  const char *topic = argv[2];
  double rate = atof(argv[3]);
  long duration_ms = atol(argv[4]);
  size_t value_bytes = (size_t)atol(argv[5]);
  long warmup_ms = atol(argv[6]);
  if (rate <= 0 || duration_ms <= 0 || value_bytes == 0 || warmup_ms < 0) {
    fprintf(stderr, "ack-latency: RATE_PER_S, DURATION_MS and VALUE_BYTES must be positive, WARMUP_MS not negative\n");
    return 2;
  }

  char error[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, error, sizeof error) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "ack-latency: %s\n", error);
    return 2;
  }
  for (int arg = 7; arg < argc; arg++) {
    if (strcmp(argv[arg], "-X") != 0 || arg + 1 >= argc) {
      fprintf(stderr, "ack-latency: expected -X name=value, got %s\n", argv[arg]);
      return 2;
    }
    char *pair = strdup(argv[++arg]);
    char *equals = strchr(pair, '=');
    if (equals == NULL) {
      fprintf(stderr, "ack-latency: -X %s has no '='\n", pair);
      return 2;
    }
    *equals = '\0';
    if (rd_kafka_conf_set(conf, pair, equals + 1, error, sizeof error) != RD_KAFKA_CONF_OK) {
      fprintf(stderr, "ack-latency: %s\n", error);
      return 2;
    }
    free(pair);
  }
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_log_cb(conf, on_log);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (rk == NULL) {
    fprintf(stderr, "ack-latency: rd_kafka_new: %s\n", error);
    return 1;
  }

  double interval_ns = 1e9 / rate;
  long warmup_count = (long)(rate * (double)warmup_ms / 1000.0);
  long measured_count = (long)(rate * (double)duration_ms / 1000.0);
  if (measured_count < 1) measured_count = 1;
  long total = warmup_count + measured_count;
  due_ns = calloc((size_t)total, sizeof *due_ns);
  latency_ns = malloc((size_t)total * sizeof *latency_ns);
  char *value = malloc(value_bytes);
  if (due_ns == NULL || latency_ns == NULL || value == NULL) {
    fprintf(stderr, "ack-latency: out of memory\n");
    return 1;
  }
  for (long index = 0; index < total; index++) latency_ns[index] = -1;
  for (size_t byte = 0; byte < value_bytes; byte++) value[byte] = (char)('a' + byte % 26);

  pthread_t thread;
  pthread_create(&thread, NULL, poller, rk);
  int status = 0;
  if (send_range(rk, topic, value, value_bytes, 0, warmup_count, now_ns(), interval_ns) != 0 || wait_for(warmup_count) != 0) {
    fprintf(stderr, "ack-latency: warm-up failed\n");
    status = 1;
  }
  int64_t started = now_ns();
  if (status == 0 && (send_range(rk, topic, value, value_bytes, warmup_count, total, started, interval_ns) != 0 || wait_for(total) != 0)) status = 1;
  double elapsed_s = (double)(now_ns() - started) / 1e9;
  atomic_store(&stopping, 1);
  pthread_join(thread, NULL);

  long recorded = 0;
  for (long index = warmup_count; index < total; index++) {
    if (latency_ns[index] < 0) continue;
    printf("%lld\n", (long long)((latency_ns[index] + 500) / 1000));
    recorded++;
  }
  fflush(stdout);
  fprintf(stderr, "ack-latency: %ld warm-up + %ld measured messages of %zu B at %.0f/s; %ld recorded, %ld failed%s%s, %.2f s\n", warmup_count, measured_count, value_bytes,
          rate, recorded, atomic_load(&failed), first_error == RD_KAFKA_RESP_ERR_NO_ERROR ? "" : ", first error: ", first_error == RD_KAFKA_RESP_ERR_NO_ERROR ? "" : rd_kafka_err2str(first_error),
          elapsed_s);
  if (recorded < measured_count) status = 1;

  rd_kafka_flush(rk, 5000);
  rd_kafka_destroy(rk);
  free(value);
  free(due_ns);
  free(latency_ns);
  return status;
}
