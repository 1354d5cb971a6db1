import type { Gauge, MetricsRegistry } from '../metrics/index.ts';
import type { Disk } from '../util/disk.ts';
import type { Partition } from '../partition/partition.ts';

const MS_PER_SECOND = 1000;

/** What the engine's scrape-time gauges read: its served partitions, its directory and disk. */
export interface EngineGaugeSources {
  readonly partitions: () => Iterable<Partition>;
  readonly directory: string;
  readonly disk: Disk;
}

/**
 * The engine's levels, read off the engine at every scrape (nothing on the produce path):
 * partitions served, led and under-replicated; how far followers are behind, as a leader sees
 * each (labelled by replica id: bounded by the cluster's size, never by topics) and as a follower
 * sees itself; the log directory's disk space. Returns what stops reading them (at close).
 */
export function registerEngineGauges(registry: MetricsRegistry, sources: EngineGaugeSources): () => void {
  const partitionGauges = {
    served: registry.gauge('ferry_partitions', 'Partitions served by this broker, led or followed'),
    led: registry.gauge('ferry_partition_leaders', 'Partitions this broker leads'),
    underReplicated: registry.gauge('ferry_under_replicated_partitions', 'Led partitions with fewer followers in sync than their replica set holds'),
    followerLag: registry.gauge('ferry_follower_lag_offsets', "Offsets of the leaders' high watermarks the partitions followed here have not applied, summed"),
  };
  const replicaLag = replicaLagGauges(registry);
  const disk = diskGauges(registry, sources);
  return registry.onCollect(() => {
    collectPartitions(sources.partitions(), partitionGauges, replicaLag);
    disk();
  });
}

interface PartitionGauges {
  readonly served: Gauge;
  readonly led: Gauge;
  readonly underReplicated: Gauge;
  readonly followerLag: Gauge;
}

function collectPartitions(partitions: Iterable<Partition>, gauges: PartitionGauges, replicaLag: (lags: Map<string, { offsets: number; ms: number }>) => void): void {
  let served = 0;
  let led = 0;
  let underReplicated = 0;
  let followerLag = 0;
  const worst = new Map<string, { offsets: number; ms: number }>();
  for (const partition of partitions) {
    served++;
    if (partition.role.kind === 'follower') {
      followerLag += Math.max(0, (partition.leaderHighWatermark ?? 0) - partition.log.logEndOffset);
      continue;
    }
    led++;
    if (partition.underReplicated) underReplicated++;
    for (const [replica, lag] of partition.followerLags()) {
      const seen = worst.get(replica) ?? { offsets: 0, ms: 0 };
      worst.set(replica, { offsets: Math.max(seen.offsets, lag.offsets), ms: Math.max(seen.ms, lag.ms) });
    }
  }
  gauges.served.set(served);
  gauges.led.set(led);
  gauges.underReplicated.set(underReplicated);
  gauges.followerLag.set(followerLag);
  replicaLag(worst);
}

/**
 * Per follower replica, its worst lag over the partitions led here. A replica that no longer
 * reports to any of them reads 0 (its series stays: the registry keeps every series it made).
 */
function replicaLagGauges(registry: MetricsRegistry): (lags: Map<string, { offsets: number; ms: number }>) => void {
  const known = new Map<string, { offsets: Gauge; seconds: Gauge }>();
  return (lags) => {
    for (const replica of lags.keys()) {
      if (known.has(replica)) continue;
      const labels = { replica };
      known.set(replica, {
        offsets: registry.gauge('ferry_replica_lag_offsets', 'Offsets a follower replica is behind, the most over the partitions led here', { labels }),
        seconds: registry.gauge('ferry_replica_lag_seconds', 'Time since a follower replica last held everything durable here, the most over the partitions led here (0 while caught up)', { labels }),
      });
    }
    for (const [replica, gauges] of known) {
      const lag = lags.get(replica);
      gauges.offsets.set(lag?.offsets ?? 0);
      gauges.seconds.set((lag?.ms ?? 0) / MS_PER_SECOND);
    }
  };
}

/** The log directory's file system: free and total bytes (statfs); NaN when the disk cannot say or statfs fails. */
function diskGauges(registry: MetricsRegistry, sources: EngineGaugeSources): () => void {
  const usable = registry.gauge('ferry_disk_free_bytes', "Bytes free for Ferry on the log directory's file system (statfs f_bavail)");
  const total = registry.gauge('ferry_disk_total_bytes', "Size of the log directory's file system");
  return () => {
    try {
      const space = sources.disk.statfsSync?.(sources.directory);
      usable.set(space?.usableBytes ?? Number.NaN);
      total.set(space?.totalBytes ?? Number.NaN);
    } catch {
      usable.set(Number.NaN); // the directory went away or the disk fails: storage errors say which
      total.set(Number.NaN);
    }
  };
}
