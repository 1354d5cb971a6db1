/*
 * fetch-drain: the cheapest Kafka consumer there is, to measure a broker's fetch path where
 * kcat -C measures kcat (it parses and prints every record: bench/consume.bench.ts). Two modes:
 *
 *   fetch-drain fetch HOST PORT TOPIC PARTITION START_OFFSET END_OFFSET PARTITION_MAX_BYTES
 *     One connection, one Fetch (v4) in flight, as a consumer keeps one per broker: each asks
 *     for the offset after the last batch of the one before, each response is read into one
 *     reused buffer, and only the batch headers are looked at (base offset, length, last offset
 *     delta, record count). Ends at END_OFFSET. Prints one line:
 *       fetch records=N batches=N record_bytes=N responses=N ns=N
 *
 *   fetch-drain floor FILE...
 *     The same bytes through a loopback socket with nothing of Kafka: a child process connects
 *     and reads to the end into one reused buffer while this one reads the files with read(2)
 *     into one 1 MiB buffer and writes each read to the socket. The copies any broker without
 *     sendfile makes (page cache to user memory, user memory to the socket, socket to the
 *     reader) and no request round trips, so no broker's fetch gets above it. Prints one line:
 *       floor bytes=N ns=N
 *
 * Exit status 0 on success; 1 with a line on stderr on any error (a Kafka error code included).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FETCH_API_KEY 1
#define FETCH_VERSION 4
#define FETCH_MAX_WAIT_MS 10
#define FETCH_MAX_BYTES (50 * 1024 * 1024)
#define FLOOR_CHUNK_BYTES (1024 * 1024)
/* Fetches in a row that return nothing below the high watermark before giving up (100 x the max wait: 1 s). */
#define FETCH_STALLS_MAX 100
/* v2 batch header: baseOffset 0, batchLength 8, lastOffsetDelta 23, recordsCount 57; 61 bytes. */
#define LOG_OVERHEAD_BYTES 12
#define LAST_OFFSET_DELTA_AT 23
#define RECORDS_COUNT_AT 57
#define BATCH_HEADER_BYTES 61

static void die(const char *what) {
  fprintf(stderr, "fetch-drain: %s: %s\n", what, errno ? strerror(errno) : "failed");
  exit(1);
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void read_fully(int fd, uint8_t *into, size_t length) {
  size_t got = 0;
  while (got < length) {
    ssize_t n = read(fd, into + got, length - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("reading the response");
    got += (size_t)n;
  }
}

static void write_fully(int fd, const uint8_t *from, size_t length) {
  size_t sent = 0;
  while (sent < length) {
    ssize_t n = write(fd, from + sent, length - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("writing");
    sent += (size_t)n;
  }
}

static uint8_t *put16(uint8_t *at, int16_t v) { uint16_t be = htons((uint16_t)v); memcpy(at, &be, 2); return at + 2; }
static uint8_t *put32(uint8_t *at, int32_t v) { uint32_t be = htonl((uint32_t)v); memcpy(at, &be, 4); return at + 4; }
static uint8_t *put64(uint8_t *at, int64_t v) { at = put32(at, (int32_t)((uint64_t)v >> 32)); return put32(at, (int32_t)(uint32_t)v); }
static uint8_t *putString(uint8_t *at, const char *s) { size_t n = strlen(s); at = put16(at, (int16_t)n); memcpy(at, s, n); return at + n; }
static int16_t get16(const uint8_t *at) { uint16_t v; memcpy(&v, at, 2); return (int16_t)ntohs(v); }
static int32_t get32(const uint8_t *at) { uint32_t v; memcpy(&v, at, 4); return (int32_t)ntohl(v); }
static int64_t get64(const uint8_t *at) { return (int64_t)(((uint64_t)(uint32_t)get32(at) << 32) | (uint32_t)get32(at + 4)); }

/* A Fetch v4 request for one partition at `offset`, with its size prefix; returns its length. */
static size_t fetch_request(uint8_t *buffer, int32_t correlation, const char *topic, int32_t partition, int64_t offset, int32_t partition_max_bytes) {
  uint8_t *at = buffer + 4;
  at = put16(at, FETCH_API_KEY);
  at = put16(at, FETCH_VERSION);
  at = put32(at, correlation);
  at = putString(at, "fetch-drain");
  at = put32(at, -1); /* replica id: a consumer */
  at = put32(at, FETCH_MAX_WAIT_MS);
  at = put32(at, 1); /* min bytes */
  at = put32(at, FETCH_MAX_BYTES);
  *at++ = 0; /* isolation: read uncommitted */
  at = put32(at, 1);
  at = putString(at, topic);
  at = put32(at, 1);
  at = put32(at, partition);
  at = put64(at, offset);
  at = put32(at, partition_max_bytes);
  put32(buffer, (int32_t)(at - buffer - 4));
  return (size_t)(at - buffer);
}

static int connect_to(const char *host, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &address.sin_addr) != 1) { errno = EINVAL; die("the host (an IPv4 address)"); }
  if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) die("connect");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

static int drain_fetches(int argc, char **argv) {
  if (argc != 9) { fprintf(stderr, "usage: fetch-drain fetch HOST PORT TOPIC PARTITION START_OFFSET END_OFFSET PARTITION_MAX_BYTES\n"); return 1; }
  const char *topic = argv[4];
  int32_t partition = atoi(argv[5]);
  int64_t offset = atoll(argv[6]), end = atoll(argv[7]);
  int32_t partition_max_bytes = atoi(argv[8]);
  int fd = connect_to(argv[2], atoi(argv[3]));
  uint8_t request[512];
  size_t capacity = 2 * (size_t)FETCH_MAX_BYTES;
  uint8_t *response = malloc(capacity);
  if (response == NULL) die("malloc");
  uint64_t records = 0, batches = 0, record_bytes = 0, responses = 0;
  int stalls = 0;
  uint64_t start = now_ns();
  for (int32_t correlation = 1; offset < end; correlation++) {
    write_fully(fd, request, fetch_request(request, correlation, topic, partition, offset, partition_max_bytes));
    uint8_t size_prefix[4];
    read_fully(fd, size_prefix, 4);
    size_t size = (size_t)get32(size_prefix);
    if (size > capacity) { errno = EMSGSIZE; die("a response larger than the buffer"); }
    read_fully(fd, response, size);
    responses++;
    if (get32(response) != correlation) { errno = EPROTO; die("a response out of order"); }
    /* correlation, throttle, [topic count, topic], [partition count, partition, error, hw, lso, aborted] */
    const uint8_t *response_end = response + size;
#define NEED(p, n) do { if ((size_t)(response_end - (p)) < (size_t)(n)) { errno = EPROTO; die("a response shorter than its fields"); } } while (0)
    const uint8_t *at = response + 8;
    NEED(at, 6);
    if (get32(at) != 1) { errno = EPROTO; die("a response without exactly one topic"); }
    at += 4;
    if (get16(at) < 0) { errno = EPROTO; die("a null topic name"); }
    at += 2 + get16(at);
    NEED(at, 8 + 2 + 8 + 8 + 4);
    if (get32(at) != 1) { errno = EPROTO; die("a response without exactly one partition"); }
    at += 8;
    int16_t error = get16(at);
    if (error != 0) { fprintf(stderr, "fetch-drain: Kafka error code %d at offset %lld\n", error, (long long)offset); return 1; }
    int64_t high_watermark = get64(at + 2);
    at += 2 + 8 + 8;
    int32_t aborted = get32(at);
    at += 4;
    if (aborted > 0) { NEED(at, (size_t)aborted * 16); at += (size_t)aborted * 16; }
    NEED(at, 4);
    int32_t records_length = get32(at);
    at += 4;
    if (records_length > 0) NEED(at, records_length);
    const uint8_t *records_end = at + (records_length > 0 ? records_length : 0);
    int64_t before = offset;
    while (at + BATCH_HEADER_BYTES <= records_end) {
      int32_t batch_length = get32(at + 8);
      if (batch_length < BATCH_HEADER_BYTES - LOG_OVERHEAD_BYTES) { errno = EPROTO; die("a batch shorter than its header"); }
      size_t batch_bytes = LOG_OVERHEAD_BYTES + (size_t)batch_length;
      if (batch_bytes > (size_t)(records_end - at)) break; /* a partial batch at the end: fetched again next time */
      if (at[16] != 2) { errno = EPROTO; die("a batch that is not magic v2"); }
      int64_t base = get64(at);
      int64_t next = base + get32(at + LAST_OFFSET_DELTA_AT) + 1;
      if (next > offset) {
        int32_t count = get32(at + RECORDS_COUNT_AT);
        /* from inside a batch (START_OFFSET): only the records from the offset asked for (offsets are dense here) */
        records += (uint64_t)(base < offset && count == next - base ? next - offset : count);
        batches++;
        record_bytes += batch_bytes;
        offset = next;
      }
      at += batch_bytes;
    }
    if (offset == before) {
      if (offset >= high_watermark) { fprintf(stderr, "fetch-drain: the partition ends at %lld, before END_OFFSET %lld\n", (long long)high_watermark, (long long)end); return 1; }
      if (++stalls > FETCH_STALLS_MAX) { fprintf(stderr, "fetch-drain: no records at offset %lld (high watermark %lld) in %d fetches\n", (long long)offset, (long long)high_watermark, stalls); return 1; }
    } else {
      stalls = 0;
    }
  }
  printf("fetch records=%llu batches=%llu record_bytes=%llu responses=%llu ns=%llu\n", (unsigned long long)records, (unsigned long long)batches,
         (unsigned long long)record_bytes, (unsigned long long)responses, (unsigned long long)(now_ns() - start));
  return 0;
}

static int stream_floor(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: fetch-drain floor FILE...\n"); return 1; }
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof address;
  if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0) die("listen");
  if (getsockname(listener, (struct sockaddr *)&address, &length) != 0) die("getsockname");
  uint8_t *buffer = malloc(FLOOR_CHUNK_BYTES);
  if (buffer == NULL) die("malloc");
  pid_t reader = fork();
  if (reader < 0) die("fork");
  if (reader == 0) {
    int fd = connect_to("127.0.0.1", ntohs(address.sin_port));
    while (read(fd, buffer, FLOOR_CHUNK_BYTES) > 0) {}
    _exit(0);
  }
  int connection = accept(listener, NULL, NULL);
  if (connection < 0) die("accept");
  uint64_t bytes = 0, start = now_ns();
  for (int i = 2; i < argc; i++) {
    int file = open(argv[i], O_RDONLY);
    if (file < 0) die(argv[i]);
    ssize_t n;
    while ((n = read(file, buffer, FLOOR_CHUNK_BYTES)) > 0) {
      write_fully(connection, buffer, (size_t)n);
      bytes += (uint64_t)n;
    }
    close(file);
  }
  close(connection);
  int status;
  waitpid(reader, &status, 0);
  printf("floor bytes=%llu ns=%llu\n", (unsigned long long)bytes, (unsigned long long)(now_ns() - start));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "fetch") == 0) return drain_fetches(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "floor") == 0) return stream_floor(argc, argv);
  fprintf(stderr, "usage: fetch-drain fetch HOST PORT TOPIC PARTITION START_OFFSET END_OFFSET PARTITION_MAX_BYTES\n       fetch-drain floor FILE...\n");
  return 1;
}
