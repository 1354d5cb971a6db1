// [K4], [K5] TakeoverStages: a scan's claims run apart from the adoptions of the claims won, so a
// broker taking over many partitions claims them all at once while the adoptions queue, in order.
import { expect, test } from 'bun:test';
import { TakeoverStages } from '../../src/cluster/takeover-stages.ts';

/** A promise and its resolver: work that ends when the test says. */
function gate(): { readonly wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** Lets every settled promise's continuations run. */
async function turns(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

test('claims do not wait for the adoptions ahead of them; adoptions start in the order queued, at most the bound at once', async () => {
  const stages = new TakeoverStages(2, 2);
  const adoptionGates = Array.from({ length: 6 }, gate);
  const started: number[] = [];
  const ended: Promise<void>[] = [];
  for (let partition = 0; partition < 6; partition++) {
    await stages.claim(async (adopt) => {
      ended.push(
        adopt(async () => {
          started.push(partition);
          await adoptionGates[partition]!.wait;
        }),
      );
    });
  }
  await turns();
  expect(ended.length).toBe(6); // every claim was made with no adoption ended
  expect(started).toEqual([0, 1]);
  expect(stages.inFlight).toBe(6); // two adopting, four queued: all count towards the share
  adoptionGates[1]!.open();
  await ended[1];
  await turns();
  expect(started).toEqual([0, 1, 2]);
  for (const adoption of adoptionGates) adoption.open();
  await stages.settled();
  expect(started).toEqual([0, 1, 2, 3, 4, 5]);
  expect(stages.inFlight).toBe(0);
});

test('a failed claim stops the claims, the adoptions of claims won still run, and settled throws it once they ended', async () => {
  const stages = new TakeoverStages(4, 1);
  const adopted: number[] = [];
  const adoption = gate();
  await stages.claim(async (adopt) => {
    void adopt(async () => {
      await adoption.wait;
      adopted.push(0);
    });
  });
  await stages.claim(async () => {
    throw new Error('the claim failed');
  });
  await turns();
  expect(stages.failed).toBe(true);
  let ran = false;
  await stages.claim(async () => {
    ran = true;
  });
  expect(ran).toBe(false);
  const settled = stages.settled();
  adoption.open();
  await expect(settled).rejects.toThrow('the claim failed');
  expect(adopted).toEqual([0]);
});

test('after an adoption failed, the ones queued behind it never start, and each still ends', async () => {
  const stages = new TakeoverStages(4, 1);
  const started: number[] = [];
  const ends: Promise<void>[] = [];
  for (let partition = 0; partition < 3; partition++)
    await stages.claim(async (adopt) => {
      ends.push(
        adopt(async () => {
          started.push(partition);
          if (partition === 0) throw new Error('the adoption failed');
        }),
      );
    });
  await Promise.all(ends);
  expect(started).toEqual([0]);
  expect(stages.inFlight).toBe(0);
  await expect(stages.settled()).rejects.toThrow('the adoption failed');
});

test('what follows an adoption once served counts in no share, and settled waits for it', async () => {
  const stages = new TakeoverStages(1, 1);
  const noted = gate();
  let notedDone = false;
  await stages.claim(async (adopt) => {
    void adopt(async () => {
      stages.afterwards(noted.wait.then(() => void (notedDone = true)));
    });
  });
  await turns();
  expect(stages.inFlight).toBe(0); // served: the note under way counts no more
  const settled = stages.settled();
  await turns();
  expect(notedDone).toBe(false);
  noted.open();
  await settled;
  expect(notedDone).toBe(true);
});

test('each takeover counts once towards the share: from its claim until it lost, or until its adoption served', async () => {
  const stages = new TakeoverStages(4, 1);
  const claimed = gate();
  const serving = gate();
  const rest = gate();
  const lost = stages.claim(async () => {
    await claimed.wait; // a claim under way: counted
  });
  await lost;
  let adoptionEnded: Promise<void> | null = null;
  await stages.claim(async (adopt) => {
    adoptionEnded = adopt(async (served) => {
      await serving.wait;
      served(); // the partition is served: counted there from now on
      await rest.wait;
    });
  });
  await turns();
  expect(stages.inFlight).toBe(2); // one claim under way, one claim won and adopting: not three
  claimed.open();
  await turns();
  expect(stages.inFlight).toBe(1); // the claim lost its race: it adds nothing
  serving.open();
  await turns();
  expect(stages.inFlight).toBe(0); // served, though its adoption has not ended
  rest.open();
  await adoptionEnded!;
  await stages.settled();
  expect(stages.inFlight).toBe(0);
});
