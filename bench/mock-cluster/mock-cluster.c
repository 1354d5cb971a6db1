/*
 * mock-cluster: librdkafka's built-in mock Kafka cluster (rdkafka_mock.h) as a process, the
 * reference peer of bench/broker.bench.ts. It serves the Kafka protocol on loopback from
 * librdkafka's own threads, keeps partitions in memory and acknowledges a produce as soon as it
 * has appended it: no disk, no object store. So it is the floor a broker on this machine can
 * reach with the same client, not a real Kafka.
 *
 *   mock-cluster TOPIC [PARTITIONS [ACK_DELAY_MS]]
 *
 * Creates one broker and TOPIC (1 partition by default, replication factor 1), prints the
 * bootstrap servers on one line on stdout, then serves until stdin closes (the bench holds a
 * pipe; if the bench dies, the pipe closes and this process exits too). ACK_DELAY_MS (0 by
 * default) delays every response that long (rd_kafka_mock_broker_set_rtt): a broker that acks
 * each request exactly that long after it arrives, the reference for what a client's latency can
 * be against an ack time (bench/broker.bench.ts).
 *
 * Build: cc -O2 -o mock-cluster mock-cluster.c -lrdkafka   (Debian: apt-get install -y librdkafka-dev)
 */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void quiet_log(const rd_kafka_t *rk, int level, const char *facility, const char *message) {
  (void)rk;
  if (level <= 3) fprintf(stderr, "mock-cluster: %s: %s\n", facility, message);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: mock-cluster TOPIC [PARTITIONS [ACK_DELAY_MS]]\n");
    return 2;
  }
  const char *topic = argv[1];
  int partitions = argc >= 3 ? atoi(argv[2]) : 1;
  int ack_delay_ms = argc == 4 ? atoi(argv[3]) : 0;
  if (partitions < 1) {
    fprintf(stderr, "mock-cluster: PARTITIONS must be a positive integer\n");
    return 2;
  }
  if (ack_delay_ms < 0) {
    fprintf(stderr, "mock-cluster: ACK_DELAY_MS must be 0 or more\n");
    return 2;
  }

  char error[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, quiet_log);
  /* The handle only hosts the mock cluster's threads; it never produces. */
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (rk == NULL) {
    fprintf(stderr, "mock-cluster: rd_kafka_new: %s\n", error);
    return 1;
  }
  rd_kafka_mock_cluster_t *cluster = rd_kafka_mock_cluster_new(rk, 1);
  if (cluster == NULL) {
    fprintf(stderr, "mock-cluster: rd_kafka_mock_cluster_new failed\n");
    rd_kafka_destroy(rk);
    return 1;
  }
  rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(cluster, topic, partitions, 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    fprintf(stderr, "mock-cluster: rd_kafka_mock_topic_create(%s): %s\n", topic, rd_kafka_err2str(err));
    rd_kafka_mock_cluster_destroy(cluster);
    rd_kafka_destroy(rk);
    return 1;
  }

  if (ack_delay_ms > 0) rd_kafka_mock_broker_set_rtt(cluster, 1, ack_delay_ms);

  printf("%s\n", rd_kafka_mock_cluster_bootstraps(cluster));
  fflush(stdout);

  char drain[256];
  while (read(STDIN_FILENO, drain, sizeof drain) > 0) {
  }

  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(rk);
  return 0;
}
