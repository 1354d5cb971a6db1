import { expect, test } from 'bun:test';
import { expectReadBack } from './kafka-semantics.ts';
import type { SuiteReport } from './suite-report.ts';

/** The codecs every client suite produces with, one topic each. */
export const COMPRESSION_CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

/**
 * The data-path tests every client suite reports the same way: a produce per codec read back by
 * partition (`produce.<codec>`, or `produce.idempotent.<codec>`), a partition consumer from
 * offset 10 (`consume.partition`), and a group member that commits, then a restarted one that
 * resumes after the commit (`group.consume`, `group.resume`).
 */
export function dataPathTests(report: () => SuiteReport, options: { readonly idempotent: boolean }): void {
  for (const codec of COMPRESSION_CODECS) {
    const op = options.idempotent ? `produce.idempotent.${codec}` : `produce.${codec}`;
    test(`${options.idempotent ? 'an idempotent producer' : 'a producer'} with acks=all and ${codec} compression; read back by partition`, () => {
      const { offsets, sent, consumed } = report().data<{ offsets: number[]; sent: string[]; consumed: [number, string][] }>(op);
      expect(offsets).toEqual(sent.map((_, i) => i));
      expectReadBack(consumed, sent, 0);
    });
  }

  test('a partition consumer started at an offset reads from there', () => {
    const { consumed } = report().data<{ consumed: [number, string][] }>('consume.partition');
    expect(consumed.map(([offset]) => offset)).toEqual(Array.from({ length: 20 }, (_, i) => 10 + i));
  });

  test('a group member reads everything and commits; a restarted member resumes after the commit', () => {
    const first = report().data<{ values: string[]; committed: number }>('group.consume');
    expect(first.values).toEqual(Array.from({ length: 10 }, (_, i) => `first-${i}`));
    expect(first.committed).toBe(10);
    const second = report().data<{ values: string[]; committed: number }>('group.resume');
    expect(second.values).toEqual(Array.from({ length: 5 }, (_, i) => `second-${i}`));
    expect(second.committed).toBe(15);
  });
}
