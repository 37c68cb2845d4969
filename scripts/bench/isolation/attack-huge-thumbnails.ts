// Issue 27 #7 (thumbnails): the attacker uploads a 100 MiB ".png" and asks for its thumbnail six at a
// time, and keeps six thumbnails of a large real PNG (at distinct sizes, so none come from the cache)
// waiting in the queue. Before the fixes, six requests for a 400 MiB ".png" reached 3.46 GB and another
// organization's 32x32 thumbnail waited 23.9 s. Reported: the quiet organization's 32x32 thumbnail wait.
import { randomBytes } from 'node:crypto';
import { noisyPng } from '../../../cloud/web/testing-images.js';
import type { Attack } from './harness.js';
import { bearerOf, Outcomes, partClient } from './ingest-tools.js';

const HUGE_MIB = Number(process.env.BENCH_HUGE_THUMBNAIL_MIB ?? 100);

export const hugeThumbnails: Attack = {
  name: 'huge-thumbnails',
  finding: 'issue 27 #7',
  describe: `the attacker asks six at a time for thumbnails of a ${HUGE_MIB} MiB ".png" and of a 1600x1200 PNG at ever new sizes; the quiet organization asks for a 32x32 one`,
  async start({ address, webUrl, attacker, quiet }) {
    const part = partClient(address, attacker);
    const quietPart = partClient(address, quiet);
    const huge = await part.dataClient.fileUpload(randomBytes(HUGE_MIB * 1024 * 1024), attacker.partId, { fileExtension: '.png' });
    const heavy = await part.dataClient.fileUpload(noisyPng(1600, 1200, 3), attacker.partId, { fileExtension: '.png' });
    const small = await quietPart.dataClient.fileUpload(noisyPng(32, 32, 4), quiet.partId, { fileExtension: '.png' });
    const attackerAuth = String((await bearerOf(attacker.client)).get('authorization')[0]);
    const quietAuth = String((await bearerOf(quiet.client)).get('authorization')[0]);
    const outcomes = new Outcomes();
    let stop = false;
    let size = 16;
    const get = async (id: string, px: number, authorization: string) => {
      const res = await fetch(`${webUrl}thumbnails/${id}?size=${px}`, { headers: { authorization } });
      await res.arrayBuffer();
      return res.status;
    };
    const loop = async (i: number) => {
      while (!stop) {
        const id = i % 2 ? huge : heavy;
        size = size >= 512 ? 16 : size + 1;
        outcomes.add(`${id === huge ? 'huge' : 'heavy'} ${await get(id, size, attackerAuth).catch(() => 'error')}`);
      }
    };
    const loops = Array.from({ length: 12 }, (_, i) => loop(i));
    const waits: number[] = [];
    const quietLoop = (async () => {
      for (let px = 16; !stop; px = px >= 512 ? 16 : px + 1) {
        const t = performance.now();
        const code = await get(small, px, quietAuth).catch(() => 0);
        if (code === 200) waits.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    return async () => {
      stop = true;
      await Promise.all([...loops, quietLoop]);
      part.close();
      quietPart.close();
      waits.sort((a, b) => a - b);
      const p = (q: number) => (waits.length ? waits[Math.min(waits.length - 1, Math.floor(q * waits.length))].toFixed(0) : '-');
      return `attacker outcomes ${outcomes}; the quiet organization's 32x32 thumbnail: ${waits.length} answers, p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${p(1)} ms`;
    };
  },
};
