// pino-roll ships no types; this is the part of its API the runtime uses.
declare module 'pino-roll' {
  import type { Writable } from 'node:stream';
  interface RollOptions {
    file: string;
    size?: string | number;
    frequency?: 'daily' | 'hourly' | number;
    mkdir?: boolean;
    limit?: { count: number };
  }
  export default function build(options: RollOptions): Promise<Writable>;
}
