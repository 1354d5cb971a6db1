// Review 27f (a helper that did not write [W8] or f29d21d, told to break it): a seeded fuzz of the
// WAL writer under store latency and faults, fencing and flushes. No frame waits out the upload
// interval on an idle writer (the [W8] assertion in the interval timer), and every acknowledged
// frame is in a durable object. No finding; kept as a property test. Knobs: SEEDS (default 400),
// FENCE=1 (fencing steps), REGRESS=1 (turns idle-upload-not-armed on: fails at seed 6).
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { decodeWalObject } from '../../src/wal/format.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { reintroduce } from '../../src/util/regressions.ts';
if (process.env.REGRESS) reintroduce(['idle-upload-not-armed']);
import { batchOf } from '../support/batches.ts';
import { idOf } from '../support/topic-ids.ts';
import { advanceThrough } from '../support/settle.ts';

const turn = () => new Promise((r) => setImmediate(r));

async function run(seed: number): Promise<string | null> {
  let s = (seed * 2654435761) % 4294967296;
  const rnd = () => {
    s = (s * 1664525 + 1013904223) % 4294967296;
    return s / 4294967296;
  };
  const clock = new ManualClock();
  const store = new MemoryStore({
    clock,
    seed,
    multipartPartBytesMin: 1024,
    latency: { name: 'x', write: { p50Ms: 1 + Math.floor(rnd() * 5), p99Ms: 30 }, read: { p50Ms: 1, p99Ms: 5 }, bytesPerMs: Number.POSITIVE_INFINITY },
    faults: { throttledRate: rnd() * 0.3, unavailableRate: rnd() * 0.2, timeoutRate: rnd() * 0.2, slowRate: 0.1 },
  });
  const config = {
    ...DEFAULT_WAL_WRITER_CONFIG,
    uploadIntervalMs: 1 + Math.floor(rnd() * 20),
    uploadBytes: 512 + Math.floor(rnd() * 4096),
    maxInFlight: 1 + Math.floor(rnd() * 3),
    maxBufferedBytes: 1 << 20,
    multipartPartBytes: rnd() < 0.3 ? 2048 : 5 << 20,
    retry: { attempts: Number.POSITIVE_INFINITY, baseMs: 1, capMs: 8 },
    prefix: 'c',
    stream: { writerId: 'w', epoch: 1 },
  };
  const wal = new WalWriter(store, config, { clock, random: new SeededRandom(seed) });
  const acked: { p: number; o: number; acked: boolean }[] = [];
  const next = [0, 0, 0];
  for (let step = 0; step < 200; step++) {
    const r = rnd();
    try {
      if (wal.failure) break;
      if (r < 0.45) {
        const n = 1 + Math.floor(rnd() * 3);
        for (let i = 0; i < n; i++) {
          const p = Math.floor(rnd() * 3);
          const o = next[p]!++;
          const rec = { p, o, acked: false };
          acked.push(rec);
          wal.append({ topic: 't', topicId: idOf('t'), partition: p, leaderEpoch: 0, baseOffset: o, lastOffset: o, data: batchOf(`v${p}-${o}`, 1, 1_700_000_000_000, Math.floor(rnd() * 600)) }).then(
            () => (rec.acked = true),
            () => {},
          );
        }
      } else if (r < 0.47) {
        wal.flush().catch(() => {});
      } else if (r < 0.475 && process.env.FENCE) {
        wal.fence('fuzz');
      } else if (r < 0.5) {
        wal.flush().catch(() => {});
      } else if (r < 0.85) {
        clock.advance(Math.floor(rnd() * 4));
      }
    } catch (e) {
      return `seed ${seed} step ${step}: ${(e as Error).message}`;
    }
    const turns = Math.floor(rnd() * 4);
    for (let i = 0; i < turns; i++) await turn();
  }
  if (wal.failure && !process.env.FENCE) return null;
  // check acks durable
  const retry = async <T>(f: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await advanceThrough(clock, f(), 'read');
      } catch (e) {
        if ((e as Error).message.includes('read:')) throw e;
      }
    }
  };
  const ackedNow = acked.filter((a) => a.acked);
  const objs: { key: string }[] = [];
  for (let sq = 0; sq <= wal.durableSequence; sq++) objs.push({ key: `c/wal/w/${String(1).padStart(10, '0')}/${String(sq).padStart(20, '0')}` });
  const have = new Set<string>();
  for (const o of objs) {
    const obj = decodeWalObject((await retry(() => store.get(o.key))).body);
    for (const f of obj.frames) have.add(`${f.entry.partition}-${f.entry.baseOffset}`);
  }
  for (const a of ackedNow)
    if (!have.has(`${a.p}-${a.o}`))
      return `seed ${seed}: acked ${a.p}-${a.o} not stored (objects ${objs.length} keys ${objs.map((o) => Number(o.key.split('/').pop())).sort((x, y) => x - y)} durableSeq ${wal.durableSequence} stats ${JSON.stringify(wal.stats())}, frames ${have.size}, sample ${[...have].slice(0, 5)})`;
  return null;
}

test('[W8] no frame waits the interval on an idle writer; acks durable (fuzz)', async () => {
  const problems: string[] = [];
  for (let seed = 1; seed <= Number(process.env.SEEDS ?? 400); seed++) {
    const p = await run(seed);
    if (p) problems.push(p);
    if (problems.length >= 3) break;
  }
  expect(problems).toEqual([]);
}, 300_000);
