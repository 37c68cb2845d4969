// A trainer's output, read without trusting it: lines are cut at a bound (a script printing gigabytes
// without a newline must not grow the cloud's memory), and events are handled one after another in the
// order written, with back-pressure: past a backlog of unhandled events the pipes are paused, so the
// trainer blocks on its writes instead of the cloud queueing millions of lines.
import type { Readable } from 'node:stream';

/** Longest line kept, in characters; the rest of a longer line is dropped. */
export const maxLineChars = 8192;

/** Tells a line reader to hold its lines (for back-pressure), and when to go on. */
export interface LineGate {
  held(): boolean;
  onRelease(listener: () => void): void;
}

const open: LineGate = { held: () => false, onRelease: () => undefined };

/**
 * Calls `onLine` for each line of `stream` (without its \n or \r\n), each cut at maxLineChars. While
 * `gate` holds, lines wait (the gate's owner pauses the stream too; the gate, not the stream's paused
 * state, decides: Node resumes a child's pipes when the child exits).
 */
export function eachLine(stream: Readable, onLine: (line: string) => void, gate: LineGate = open): void {
  let pending = '';
  let dropping = false; // inside a line already cut: skip to its end
  // The unread part of a chunk while the stream is paused: paused means stop now, not after this chunk.
  let held: string | undefined;
  const cut = (line: string) => (line.length > maxLineChars ? `${line.slice(0, maxLineChars)} … (line cut at ${maxLineChars} characters)` : line);
  const feed = (chunk: string, honourPause: boolean) => {
    let start = 0;
    for (;;) {
      if (honourPause && gate.held() && start < chunk.length) {
        held = chunk.slice(start);
        return;
      }
      const end = chunk.indexOf('\n', start);
      if (end < 0) {
        if (!dropping) {
          pending += chunk.slice(start);
          if (pending.length > maxLineChars) {
            onLine(cut(pending));
            pending = '';
            dropping = true;
          }
        }
        return;
      }
      if (!dropping) onLine(cut((pending + chunk.slice(start, end)).replace(/\r$/, '')));
      pending = '';
      dropping = false;
      start = end + 1;
    }
  };
  const release = (honourPause: boolean) => {
    if (held === undefined) return;
    const chunk = held;
    held = undefined;
    feed(chunk, honourPause);
  };
  stream.setEncoding('utf8');
  // A chunk can arrive between resume() and its 'resume' event: it queues behind what is held.
  stream.on('data', (chunk: string) => {
    held = held === undefined ? chunk : held + chunk;
    release(true);
  });
  // The end can come while lines are still held (the stream's own buffer is empty): they are handed
  // out as the pause allows, and the last unterminated line after them.
  let ended = false;
  let finished = false;
  const finishIfDone = () => {
    if (!ended || finished || held !== undefined) return;
    finished = true;
    if (pending && !dropping) onLine(cut(pending));
  };
  gate.onRelease(() => {
    release(true);
    finishIfDone();
  });
  stream.on('end', () => {
    ended = true;
    release(true);
    finishIfDone();
  });
}

/** Handles events in order, pausing `streams` while more than `high` wait, resuming at `low`. */
export class OrderedEvents<E> implements LineGate {
  private chain: Promise<void> = Promise.resolve();
  private backlog = 0;
  private paused = false;
  private readonly releaseListeners: (() => void)[] = [];
  /** The largest backlog seen (for tests). */
  maxBacklog = 0;

  constructor(
    private readonly handle: (event: E) => void | Promise<void>,
    private readonly streams: Readable[],
    private readonly high = 256,
    private readonly low = 64,
  ) {}

  held(): boolean {
    return this.paused;
  }

  onRelease(listener: () => void): void {
    this.releaseListeners.push(listener);
  }

  push(event: E): void {
    this.backlog += 1;
    this.maxBacklog = Math.max(this.maxBacklog, this.backlog);
    if (this.backlog > this.high && !this.paused) {
      this.paused = true;
      for (const stream of this.streams) stream.pause();
    }
    this.chain = this.chain
      .then(() => this.handle(event))
      .catch(() => undefined) // a handler's failure must not stop the ones after it
      .then(() => {
        this.backlog -= 1;
        if (this.paused && this.backlog <= this.low) {
          this.paused = false;
          for (const stream of this.streams) stream.resume();
          for (const listener of this.releaseListeners) listener();
        }
      });
  }

  /** Resolves once every event was handled, including those a reader held back and hands out meanwhile. */
  async drained(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.chain;
      await seen;
    } while (seen !== this.chain);
  }
}
