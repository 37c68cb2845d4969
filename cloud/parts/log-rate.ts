// How fast one writer and one organization may upload log entries (RobotService/Log; issue 27, finding 7).
//
// Every byte of a Log request costs the cloud's one JavaScript thread (decoding, staging) and DuckDB's
// writers (insert, log, checkpoint). A machine part sending 10,000-entry batches in a loop took about a
// third of the thread and every checkpoint, and another organization's 1-row reads waited behind it.
// Requests are charged by their size on the wire, before they are decoded, to a token bucket of the
// writer (its part or API key) and one of its organization: a refused request costs a token check, not
// a decode. A bucket may go into debt by one request (a request larger than a second's worth still
// passes when the bucket is full), and refuses while it is in debt; the refusal says when to retry.
// Machines ship logs from a durable queue and retry with back-off (`core/online/log-shipper.ts`), so a
// refused batch waits on the machine's disk, nothing is lost.
import { resourceExhausted } from '../../core/serving/status-error.js';
import { describePrincipal, type Principal } from '../auth/principal.js';
import { principalKey } from '../datasync/upload-streams.js';
import { envWholeNumber } from '../../core/serving/env.js';

export interface LogRateLimits {
  /** Log request bytes per second one writer (machine part or API key) may send, on average. */
  bytesPerSecondPerWriter: number;
  /** … all writers of one organization together. */
  bytesPerSecondPerOrg: number;
}

// 4 MiB/s is 40,000 lines/s of bench:online's lines, twice its 20,000 lines/s target for a machine
// catching up after an outage.
export const defaultLogRateLimits: LogRateLimits = { bytesPerSecondPerWriter: 4 * 1024 * 1024, bytesPerSecondPerOrg: 16 * 1024 * 1024 };

/** PLATFORM_LOG_MAX_BYTES_PER_S and PLATFORM_LOG_MAX_BYTES_PER_S_PER_ORG. */
export function logRateLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): LogRateLimits {
  const d = defaultLogRateLimits;
  return {
    bytesPerSecondPerWriter: envWholeNumber('PLATFORM_LOG_MAX_BYTES_PER_S', d.bytesPerSecondPerWriter, env),
    bytesPerSecondPerOrg: envWholeNumber('PLATFORM_LOG_MAX_BYTES_PER_S_PER_ORG', d.bytesPerSecondPerOrg, env),
  };
}

interface Bucket {
  tokens: number;
  at: number;
}

class Buckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly rate: number,
    private readonly now: () => number,
  ) {}

  /** Tokens of `key` now (refilled up to one second's worth); a bucket back to full is forgotten. */
  level(key: string): number {
    const b = this.buckets.get(key);
    if (!b) return this.rate;
    const tokens = Math.min(this.rate, b.tokens + ((this.now() - b.at) / 1000) * this.rate);
    if (tokens >= this.rate) this.buckets.delete(key);
    return tokens;
  }

  charge(key: string, bytes: number): void {
    this.buckets.set(key, { tokens: this.level(key) - bytes, at: this.now() });
  }

  /** Milliseconds until a bucket in debt is out of it. */
  waitMs(tokens: number): number {
    return Math.max(1, Math.ceil((-tokens / this.rate) * 1000));
  }
}

export class LogRate {
  private readonly writers: Buckets;
  private readonly orgs: Buckets;

  constructor(
    private readonly limits: LogRateLimits = logRateLimitsFromEnv(),
    now: () => number = Date.now,
  ) {
    this.writers = new Buckets(limits.bytesPerSecondPerWriter, now);
    this.orgs = new Buckets(limits.bytesPerSecondPerOrg, now);
  }

  /** Charges a Log request of `bytes` to its writer and organization, or throws RESOURCE_EXHAUSTED naming the limit. */
  charge(principal: Principal, bytes: number): void {
    const writer = principalKey(principal);
    const writerTokens = this.writers.level(writer);
    if (writerTokens < 0) {
      throw resourceExhausted(
        `${describePrincipal(principal)} sent log entries faster than ${this.limits.bytesPerSecondPerWriter} bytes per second, the limit (PLATFORM_LOG_MAX_BYTES_PER_S); nothing of this batch was stored, send it again in ${this.writers.waitMs(writerTokens)} ms`,
      );
    }
    const orgTokens = this.orgs.level(principal.organizationId);
    if (orgTokens < 0) {
      throw resourceExhausted(
        `organization ${principal.organizationId} sent log entries faster than ${this.limits.bytesPerSecondPerOrg} bytes per second, the limit for all its machines together (PLATFORM_LOG_MAX_BYTES_PER_S_PER_ORG); nothing of this batch was stored, send it again in ${this.orgs.waitMs(orgTokens)} ms`,
      );
    }
    this.writers.charge(writer, bytes);
    this.orgs.charge(principal.organizationId, bytes);
  }
}
