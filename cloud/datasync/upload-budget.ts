// Limits of DataCaptureUpload (issue 27, finding 5): points and values per request, checked while the
// request is decoded (struct-codec.ts), and request bytes in flight per principal, taken before it is
// decoded. 16M empty points are 61 MiB on the wire, under gRPC's 64 MiB message limit, and took the cloud
// to 6.2 GB once decoded; two at once ended it.
import { resourceExhausted } from '../../core/serving/status-error.js';
import type { Principal } from '../auth/principal.js';
import type { DecodeLimits } from './struct-codec.js';
import { principalKey } from './upload-streams.js';
import { envWholeNumber } from '../../core/serving/env.js';

export interface CaptureUploadLimits extends DecodeLimits {
  /** DataCaptureUpload request bytes one principal may have being decoded and stored at once. */
  maxInFlightBytesPerPrincipal: number;
}

export const defaultCaptureUploadLimits: CaptureUploadLimits = {
  maxPoints: 100_000,
  maxValues: 2_000_000,
  maxInFlightBytesPerPrincipal: 64 * 1024 * 1024,
};

/** PLATFORM_UPLOAD_MAX_POINTS, PLATFORM_UPLOAD_MAX_VALUES, PLATFORM_UPLOAD_MAX_INFLIGHT_BYTES_PER_PRINCIPAL. */
export function captureUploadLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): CaptureUploadLimits {
  const d = defaultCaptureUploadLimits;
  return {
    maxPoints: envWholeNumber('PLATFORM_UPLOAD_MAX_POINTS', d.maxPoints, env),
    maxValues: envWholeNumber('PLATFORM_UPLOAD_MAX_VALUES', d.maxValues, env),
    maxInFlightBytesPerPrincipal: envWholeNumber('PLATFORM_UPLOAD_MAX_INFLIGHT_BYTES_PER_PRINCIPAL', d.maxInFlightBytesPerPrincipal, env),
  };
}

/**
 * Bytes in flight per principal, a semaphore that refuses rather than queues: a caller over its budget
 * gets RESOURCE_EXHAUSTED at once (a machine retries with back-off), so waiting requests cannot pile up
 * in memory either. A request alone larger than the budget is refused the same way.
 */
export class ByteBudget {
  private readonly used = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes `bytes` of `principal`'s budget; call the returned function once, when the request is done. */
  take(principal: Principal, bytes: number, describe: string): () => void {
    const key = principalKey(principal);
    const held = this.used.get(key) ?? 0;
    if (held + bytes > this.max) {
      throw resourceExhausted(
        `${describe} has ${held} bytes of uploads in progress; ${bytes} more would pass the ${this.max}-byte limit (PLATFORM_UPLOAD_MAX_INFLIGHT_BYTES_PER_PRINCIPAL); retry when they are done`,
      );
    }
    this.used.set(key, held + bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.used.get(key) ?? bytes) - bytes;
      if (left > 0) this.used.set(key, left);
      else this.used.delete(key);
    };
  }

  /** Bytes held by a principal now (for tests). */
  held(principal: Principal): number {
    return this.used.get(principalKey(principal)) ?? 0;
  }
}
