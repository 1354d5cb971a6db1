// systemClock.setTimer with a delay past setTimeout's signed 32-bit limit (about 24.8 days) fired
// after 1 ms (adversarial review of finding 17): with --connections-max-idle-ms of 30 days every
// connection's idle check re-armed itself every millisecond, a busy loop per connection (and a
// TimeoutOverflowWarning on stderr). A long timer must wait its whole delay.
import { expect, test } from 'bun:test';
import { systemClock } from '../../src/util/clock.ts';

const THIRTY_DAYS_MS = 30 * 24 * 60 * 60 * 1000;

test('a timer longer than 2^31-1 ms does not fire early', async () => {
  let fired = 0;
  const timer = systemClock.setTimer(THIRTY_DAYS_MS, () => fired++, true);
  await Bun.sleep(50);
  timer.cancel();
  expect(fired).toBe(0);
});

test('a cancelled long timer never fires, and short timers still do', async () => {
  let long = 0;
  let short = 0;
  systemClock.setTimer(THIRTY_DAYS_MS, () => long++, true).cancel();
  systemClock.setTimer(1, () => short++, true);
  await Bun.sleep(50);
  expect(long).toBe(0);
  expect(short).toBe(1);
});
