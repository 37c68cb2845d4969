// Floods a SignalingService with offers that never complete ICE (issue 30's hostile input): valid offers
// whose answer is read and then left (the caller never sends a candidate), Call streams abandoned as soon
// as they are sent, and malformed SDPs. Counts what each got back, by gRPC status code, and reads the
// answering process's memory and UDP sockets from /proc (Linux), which is where a leaked peer shows.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { Metadata, type ServiceError } from '@grpc/grpc-js';
import type { SignalingServiceClient } from '../../../gen/platform/rpc/webrtc/v1/signaling.js';
import { createCaller } from '../../../core/serving/webrtc/peer.js';

export type OfferKind = 'half-open' | 'abandoned' | 'malformed';

/** One real offer's JSON (a werift caller's, closed at once): the flood sends it again and again. */
export async function sampleOffer(): Promise<string> {
  const caller = await createCaller();
  caller.close();
  return JSON.stringify(caller.description);
}

const MALFORMED = [
  'not json',
  JSON.stringify({ type: 'offer', sdp: 'v=0\r\nm=audio 9 RTP/AVP 0\r\n' }),
  JSON.stringify({ type: 'answer', sdp: 'v=0' }),
  JSON.stringify({ type: 'offer', sdp: 'v=0\r\n' + 'a=x\r\n'.repeat(20_000) }),
];

/** The kind of the i-th offer: mostly half-open, every 5th abandoned, every 7th malformed. */
export const kindOf = (i: number): OfferKind => (i % 7 === 3 ? 'malformed' : i % 5 === 1 ? 'abandoned' : 'half-open');

export interface FloodResult {
  /** Outcomes by kind: 'answered', or the status code name of the refusal. */
  outcomes: Record<OfferKind, Record<string, number>>;
}

export interface Flood {
  /** Offers sent so far. */
  sent(): number;
  /** Resolves once every offer has had its outcome. */
  done: Promise<FloodResult>;
}

/** Sends `count` offers, `inFlight` at a time, with `metadata` (rpc-host, a key's authorization). */
export function floodOffers(client: SignalingServiceClient, offer: string, count: number, inFlight: number, metadata = new Metadata()): Flood {
  const outcomes: FloodResult['outcomes'] = { 'half-open': {}, abandoned: {}, malformed: {} };
  const note = (kind: OfferKind, outcome: string) => (outcomes[kind][outcome] = (outcomes[kind][outcome] ?? 0) + 1);
  let next = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const kind = kindOf(i);
      const sdp = kind === 'malformed' ? MALFORMED[i % MALFORMED.length] : offer;
      // A deadline, so that no stream of the flood outlives a test even if a server forgot it.
      const stream = client.call({ sdp, disableTrickle: false }, metadata, { deadline: Date.now() + 60_000 });
      // Gone before any answer: the server sees the cancellation at some point of its work.
      if (kind === 'abandoned') setImmediate(() => stream.cancel());
      let answered = false;
      stream.on('data', (r: { init?: unknown }) => {
        if (r.init && !answered) {
          answered = true;
          note(kind, 'answered');
          // Half-open: the answer and the machine's candidates are read, and nothing is ever sent back.
        }
      });
      stream.on('error', (err: ServiceError) => {
        if (!answered) note(kind, err.code === 1 ? 'cancelled' : `code ${err.code}`);
        resolve();
      });
      stream.on('end', () => resolve());
    });
  const worker = async () => {
    while (next < count) await one(next++);
  };
  return { sent: () => next, done: Promise.all(Array.from({ length: inFlight }, worker)).then(() => ({ outcomes })) };
}

/** Resident memory of a process, in MiB. */
export function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/** Unconnected UDP sockets a process holds open (its fds matched against /proc/net/udp{,6}): werift binds them per peer. */
export function udpSockets(pid: number): number {
  const udp = new Set<string>();
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table.slice(10)}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // Only sockets with no peer address: a resolver's sockets connected to its DNS server come and go
      // with lookups and are not the WebRTC peers' (werift binds, never connects, its ICE sockets).
      if (fields[9] && /^0+:0000$/.test(fields[2])) udp.add(fields[9]);
    }
  }
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && udp.has(inode)) count++;
    } catch {
      // The fd closed while we read.
    }
  }
  return count;
}
