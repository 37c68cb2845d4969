// The thumbnail child runs below the cloud's priority (thumbnail-priority.ts), all its threads.
import test from 'ava';
import { readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { noisyPng } from './testing-images.js';
import { THUMBNAIL_NICENESS } from './thumbnail-priority.js';
import { ThumbnailProcess } from './thumbnail-process.js';

test('the child that decodes images runs at niceness 10, every thread of it, while the cloud keeps its own', async (t) => {
  const ours = getPriority();
  const thumbnails = new ThumbnailProcess();
  t.teardown(() => thumbnails.close());
  const jpeg = await thumbnails.make(noisyPng(64, 48, 2), 'image/png', 32, 'org-a');
  t.is(jpeg.subarray(0, 2).toString('hex'), 'ffd8'); // a JPEG
  const pid = thumbnails.childPid!;
  t.is(THUMBNAIL_NICENESS, 10);
  t.is(getPriority(pid), THUMBNAIL_NICENESS);
  const threads = readdirSync(`/proc/${pid}/task`).map(Number);
  t.true(threads.length > 1);
  for (const tid of threads) {
    let priority: number;
    try {
      priority = getPriority(tid);
    } catch {
      continue; // a thread that ended since the listing
    }
    t.is(priority, THUMBNAIL_NICENESS, `thread ${tid}`);
  }
  t.is(getPriority(), ours); // the cloud's own process is not changed
});
