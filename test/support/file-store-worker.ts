// A child process for the file store's multi-process tests.
//   cas <root> <key> <count>   increments the counter in <key> <count> times by compare-and-swap
//   put-loop <root> <key>      replaces <key> forever with whole objects of one repeated byte,
//                              alternating sizes; prints "put <n>" after each, until killed
import { isStoreError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file.ts';

const [mode, root, key, countText] = process.argv.slice(2);
if (mode === undefined || root === undefined || key === undefined) throw new Error('usage: file-store-worker cas|put-loop <root> <key> [count]');
const store = await FileStore.open(root);
const decoder = new TextDecoder();

if (mode === 'cas') {
  const count = Number(countText);
  let retries = 0;
  for (let done = 0; done < count; ) {
    const current = await store.get(key);
    const next = Number(decoder.decode(current.body)) + 1;
    try {
      await store.put(key, new TextEncoder().encode(String(next)), { ifMatch: current.etag });
      done++;
    } catch (error) {
      if (!isStoreError(error, 'PreconditionFailed')) throw error;
      retries++;
    }
  }
  process.stdout.write(`done ${retries}\n`);
  await store.close();
} else if (mode === 'put-loop') {
  for (let n = 0; ; n++) {
    // Sizes differ so a torn object would show up as a wrong length as well as mixed bytes.
    const body = new Uint8Array(n % 2 === 0 ? 3 * 1024 * 1024 : 2 * 1024 * 1024 + 17).fill(n % 251);
    await store.put(key, body);
    process.stdout.write(`put ${n}\n`);
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
