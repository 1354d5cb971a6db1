// The cost model's arithmetic against bills computed by hand (docs/cost-model.md's formulas, a
// 30-day month of 2,592,000 s, GB = 2^30 B), and its refusals.
import { describe, expect, test } from 'bun:test';
import { checkDeployment, compare, DEFAULT_DEPLOYMENT, type Deployment, DeploymentError, ferryBill, kafkaBill, walCycleSeconds, walShape } from '../../src/cost/index.ts';
import { SeededRandom } from '../../src/util/random.ts';

const MONTH_SECONDS = 2_592_000;
const GIB = 2 ** 30;
/** 1 MB/s for a month, in GB: 2.592e12 / 2^30 = 2,413.988 GB. */
const ONE_MB_S_MONTH_GB = 2.592e12 / GIB;

function deployment(overrides: Partial<Deployment>, ferry: Partial<Deployment['ferry']> = {}): Deployment {
  return { ...DEFAULT_DEPLOYMENT, ...overrides, ferry: { ...DEFAULT_DEPLOYMENT.ferry, ...ferry } };
}

function line(bill: { lines: readonly { item: string; usdPerMonth: number }[] }, item: string): number {
  const found = bill.lines.find((entry) => entry.item === item);
  if (found === undefined) throw new Error(`no line '${item}' in ${bill.lines.map((entry) => entry.item).join(', ')}`);
  return found.usdPerMonth;
}

describe('classic Kafka', () => {
  const kafka = kafkaBill(deployment({ throughputMbPerSecond: 1, zones: 3, replication: 3, retentionHours: 168 }));

  test('1 MB/s over 3 zones: replication sends 2 copies across zones, each GB paid on both sides ($0.02)', () => {
    expect(ONE_MB_S_MONTH_GB).toBeCloseTo(2413.988, 3);
    expect(line(kafka, 'cross-zone: leader -> followers')).toBeCloseTo(ONE_MB_S_MONTH_GB * 2 * 0.02, 6); // $96.56
  });

  test('gp3 holds the retention on every replica, provisioned at 70% full', () => {
    const retainedGb = (1e6 * 168 * 3600) / GIB; // 563.27 GB
    expect(line(kafka, 'EBS gp3: retention x replicas')).toBeCloseTo(((retainedGb * 3) / 0.7) * 0.08, 6); // $193.12
  });

  test('two of three producers sit in another zone than their leader; consumers fetch from their own zone', () => {
    expect(line(kafka, 'cross-zone: producers -> leaders')).toBeCloseTo((ONE_MB_S_MONTH_GB * 2 * 0.02) / 3, 6);
    expect(line(kafka, 'cross-zone: replicas -> consumers')).toBe(0);
    expect(kafka.totalUsdPerMonth).toBeCloseTo(96.5595 + 193.1191 + 32.1865, 2);
  });

  test('RF 3 over 2 zones: one follower is in the leader zone, so one copy crosses', () => {
    const two = kafkaBill(deployment({ throughputMbPerSecond: 1, zones: 2, replication: 3 }));
    expect(line(two, 'cross-zone: leader -> followers')).toBeCloseTo(ONE_MB_S_MONTH_GB * 0.02, 6);
  });

  test('in one zone nothing crosses a zone', () => {
    const one = kafkaBill(deployment({ throughputMbPerSecond: 50, zones: 1, replication: 3 }));
    for (const entry of one.lines.filter((item) => item.item.startsWith('cross-zone'))) expect(entry.usdPerMonth).toBe(0);
  });
});

describe('Ferry', () => {
  test('size-triggered WAL objects: 100 MB/s over 3 writers of 1 MiB objects is 100e6 / 2^20 PUTs a second', () => {
    const shape = walShape(deployment({ throughputMbPerSecond: 100, brokers: 3, partitions: 3, replication: 1 }, { uploadBytes: 2 ** 20, uploadIntervalMs: 1000, uploadWhenIdle: false }));
    expect(shape.writers).toBe(3);
    expect(shape.objectsPerSecond).toBeCloseTo(1e8 / 2 ** 20, 9);
    const bill = ferryBill(deployment({ throughputMbPerSecond: 100, brokers: 3, partitions: 3, replication: 1 }, { uploadBytes: 2 ** 20, uploadIntervalMs: 1000, uploadWhenIdle: false }));
    expect(line(bill, 'S3 Express: WAL PUTs')).toBeCloseTo(((1e8 / 2 ** 20) * MONTH_SECONDS * 0.00113) / 1000, 6); // $279.33
  });

  test('interval-triggered WAL objects (no upload when idle): one cycle is the interval plus the wait for the next produce', () => {
    // 1 MB/s of 16 KiB produces to one writer: 61.04 produces/s, a cycle of 5 ms + 16.384 ms.
    const d = deployment({ throughputMbPerSecond: 1, brokers: 1, partitions: 1, replication: 1, zones: 1, produceBytes: 16_384 }, { uploadIntervalMs: 5, uploadWhenIdle: false });
    expect(walShape(d).objectsPerSecond).toBeCloseTo(1 / 0.021384, 6);
    expect(line(ferryBill(d), 'S3 Express: WAL PUTs')).toBeCloseTo((MONTH_SECONDS / 0.021384) * 0.00113e-3, 6); // $136.97
  });

  test('upload when idle ([W8]): the closed-form cycle matches the close rule run on random produces', () => {
    // The rule itself, run: the last object closed at 0 and lands at L; the next produce comes at
    // a ~ Exp(lambda); the object closes at a when the writer is idle, else at min(a + I, L).
    const simulated = (intervalMs: number, putMs: number, lambda: number): number => {
      const random = new SeededRandom(7);
      const cycles = 200_000;
      let total = 0;
      for (let i = 0; i < cycles; i++) {
        const a = -Math.log(1 - random.next()) / lambda;
        const [interval, busy] = [intervalMs / 1000, putMs / 1000];
        total += a >= busy ? a : Math.min(a + interval, busy);
      }
      return total / cycles;
    };
    for (const [intervalMs, putMs, lambda] of [
      [5, 4, 61],
      [5, 4, 2_000],
      [2, 10, 500],
      [20, 4, 10],
      [5, 0, 100],
    ] as const) {
      const closed = walCycleSeconds({ ...DEFAULT_DEPLOYMENT.ferry, uploadIntervalMs: intervalMs, uploadWhenIdle: true }, lambda, putMs);
      expect(Math.abs(closed - simulated(intervalMs, putMs, lambda)) / closed).toBeLessThan(0.01);
    }
    // Produces back to back: an object per PUT (the interval longer) or per interval (shorter).
    expect(walCycleSeconds({ ...DEFAULT_DEPLOYMENT.ferry, uploadIntervalMs: 5, uploadWhenIdle: true }, 1e9, 4)).toBeCloseTo(0.004, 6);
    expect(walCycleSeconds({ ...DEFAULT_DEPLOYMENT.ferry, uploadIntervalMs: 2, uploadWhenIdle: true }, 1e9, 4)).toBeCloseTo(0.002, 6);
  });

  test('the upload fee is on every byte, the tier keeps one copy at S3 Standard prices', () => {
    const bill = ferryBill(deployment({ throughputMbPerSecond: 1, retentionHours: 24 }));
    expect(line(bill, 'S3 Express: upload fee')).toBeCloseTo(ONE_MB_S_MONTH_GB * 0.0032, 9);
    expect(line(bill, 'S3 Standard: storage')).toBeCloseTo(((1e6 * 24 * 3600) / GIB) * 0.023, 9);
  });

  test('no replication traffic crosses a zone; with 1 replica, consumers in the 2 other zones of 3 do', () => {
    const bill = ferryBill(deployment({ throughputMbPerSecond: 1, replication: 1, readFanout: 2 }));
    expect(line(bill, 'cross-zone: leader -> followers')).toBe(0);
    expect(line(bill, 'S3 Express: follower GETs')).toBe(0);
    expect(line(bill, 'cross-zone: replicas -> consumers')).toBeCloseTo(((ONE_MB_S_MONTH_GB * 2 * 2) / 3) * 0.02, 6);
  });

  test('followers read the frames past the tail probe once per replica; the probe once per reading broker', () => {
    // 3 brokers, RF 3: the other 2 brokers read every object: 2 GETs each (tail, then frames).
    const d = deployment({ throughputMbPerSecond: 100, brokers: 3, partitions: 3, replication: 3 }, { uploadBytes: 2 ** 20, uploadIntervalMs: 1000, uploadWhenIdle: false });
    const objectsPerMonth = (1e8 / 2 ** 20) * MONTH_SECONDS;
    const bill = ferryBill(d);
    expect(line(bill, 'S3 Express: follower GETs')).toBeCloseTo(objectsPerMonth * 2 * 2 * 0.00003e-3, 6);
    // Objects of exactly 1 MiB: each reader's 64 KiB probe plus the rest, read by 2 followers: 2 MiB per object.
    expect(line(bill, 'S3 Express: follower retrieval')).toBeCloseTo(((objectsPerMonth * 2 * 2 ** 20) / GIB) * 0.0006, 6);
  });

  test('a 1 GiB segment goes up in 8 MiB parts: 128 parts, create, complete and its tier record', () => {
    const d = deployment({ throughputMbPerSecond: 1024 ** 3 / 1e6, partitions: 1, brokers: 3 });
    const segmentsPerMonth = MONTH_SECONDS; // one 1 GiB segment a second
    expect(line(ferryBill(d), 'S3 Standard: tier PUTs')).toBeCloseTo(segmentsPerMonth * 131 * 0.005e-3, 3);
  });
});

describe('the comparison', () => {
  test("docs/design.md's 1 GiB/s case: at 1 GiB/s RF 3 Kafka's cross-zone replication is ~$100k a month; Ferry's whole bill is several times less", () => {
    const comparison = compare(deployment({ throughputMbPerSecond: 1024 ** 3 / 1e6, partitions: 1024, brokers: 12 }));
    expect(line(comparison.kafka, 'cross-zone: leader -> followers')).toBeCloseTo(103_680, 0);
    expect(comparison.kafkaOverFerry).toBeGreaterThan(3);
    expect(comparison.kafkaOverFerry).toBeCloseTo(comparison.kafka.totalUsdPerMonth / comparison.ferry.totalUsdPerMonth, 9);
  });

  test('totals are the sums of their lines', () => {
    const comparison = compare(DEFAULT_DEPLOYMENT);
    for (const bill of [comparison.ferry, comparison.kafka])
      expect(bill.totalUsdPerMonth).toBeCloseTo(
        bill.lines.reduce((sum, entry) => sum + entry.usdPerMonth, 0),
        9,
      );
  });

  test('nothing produced, nothing billed', () => {
    const comparison = compare(deployment({ throughputMbPerSecond: 0 }));
    expect(comparison.ferry.totalUsdPerMonth).toBe(0);
    expect(comparison.kafka.totalUsdPerMonth).toBe(0);
  });
});

describe('refusals', () => {
  test.each([
    [{ zones: 0 }, 'zones'],
    [{ zones: 7 }, 'zones'],
    [{ partitions: 1.5 }, 'partitions'],
    [{ throughputMbPerSecond: Number.NaN }, 'throughputMbPerSecond'],
    [{ retentionHours: -1 }, 'retentionHours'],
    [{ replication: 4, brokers: 3 }, 'replication'],
  ] as const)('%p is refused naming %s', (overrides, field) => {
    let caught: unknown = null;
    try {
      checkDeployment(deployment(overrides));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DeploymentError);
    expect((caught as DeploymentError).field).toBe(field);
  });
});
