// One refusal scenario as a test: the client tries to write, must be refused, and the matrix gets
// a row with Kafka's answer and the client's. Where Ferry's refusal is known to reach the client in
// other words than Kafka's (a bug or a limitation, named in `difference`), the test asserts the
// refusal and a test.todo holds Kafka's wording until Ferry gives it.
import { expect, test } from 'bun:test';
import type { AuthMatrix, Verdict } from './auth-matrix.ts';

export interface Attempt {
  /** The broker took nothing: the client was refused. */
  readonly refused: boolean;
  /** What the client reported. */
  readonly observed: string;
}

export interface RefusalScenario {
  readonly client: string;
  readonly scenario: string;
  /** Kafka's refusal as this client shows it (matched against the observation). */
  readonly expected: RegExp;
  /** The same for the table. */
  readonly expectedText: string;
  readonly attempt: () => Promise<Attempt>;
  /** Why Ferry's words differ from Kafka's, when they are known to. */
  readonly difference?: string;
}

/** The verdict of one attempt against Kafka's answer. */
export function verdictOf(attempt: Attempt, expected: RegExp): Verdict {
  if (!attempt.refused) return 'FAIL';
  return expected.test(attempt.observed) ? 'ok' : 'refused, other words';
}

/** A test that the client is refused (recorded in `matrix`), with Kafka's words unless a difference is known. */
export function refusalTest(matrix: AuthMatrix, scenario: RefusalScenario): void {
  const name = `${scenario.client}: ${scenario.scenario} is refused`;
  test(scenario.difference === undefined ? `${name} (${scenario.expectedText})` : name, async () => {
    const attempt = await scenario.attempt();
    const verdict = verdictOf(attempt, scenario.expected);
    matrix.record({ client: scenario.client, scenario: scenario.scenario, expected: scenario.expectedText, observed: attempt.observed, verdict });
    expect(attempt.refused).toBe(true);
    if (scenario.difference === undefined) expect(attempt.observed).toMatch(scenario.expected);
  });
  if (scenario.difference !== undefined) test.todo(`${name} with Kafka's words "${scenario.expectedText}" (Ferry: ${scenario.difference})`);
}
