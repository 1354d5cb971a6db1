// Review 27i: a thread that makes flock fail with EBADF as fast as it can, while the main thread reads
// its own flock errno (issue27i-locks.test.ts). errno is per thread; this proves the read is too.
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { tryLockExclusive } from '../../src/util/flock.ts';

declare const self: Worker;
const fd = openSync(join(tmpdir(), `ferry-27i-${process.pid}-${Math.random()}`), 'a');
closeSync(fd);
let stop = false;
let failures = 0;
self.onmessage = () => void (stop = true);
const spin = (): void => {
  for (let i = 0; i < 2000; i++) {
    try {
      tryLockExclusive(fd);
    } catch {
      failures++;
    }
  }
  if (stop) self.postMessage(failures);
  else setTimeout(spin, 0);
};
self.postMessage('started');
spin();
