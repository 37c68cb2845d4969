// The tracer behind `startTracing` (tracing.ts): it makes LeanSpans (lean-span.ts) and decides which
// traces are recorded with a parent-based ratio sampler. A span whose trace is not sampled is the API's
// non-recording span: it carries the ids (so `traceparent` still travels, flagged unsampled, and the
// cloud follows the machine's decision) and records nothing.
import { randomFillSync } from 'node:crypto';
import type * as Api from '@opentelemetry/api';
import { LeanSpan, msOf, type SpanOwner } from './lean-span.js';

const SAMPLED = 1;

const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * Random ids, hex, cut from a pooled string: 4096 bytes from the OS's generator turned into hex at once
 * (one native call per 170 calls' ids, where a Buffer.toString per id was the largest share of a traced
 * call's tracing time in bench:telemetry's profiles); an id is a slice of it.
 */
class IdSource {
  private static readonly BYTES = 4096;
  private readonly pool = Buffer.alloc(IdSource.BYTES);
  private hex = '';
  /** The next unused hex digit of `hex`. */
  private at = 2 * IdSource.BYTES;

  private take(digits: number, zero: string): string {
    if (this.at + digits > this.hex.length) {
      randomFillSync(this.pool);
      this.hex = this.pool.toString('hex');
      this.at = 0;
    }
    const id = this.hex.slice(this.at, (this.at += digits));
    // All-zero ids are invalid (W3C trace context); 2^-64 at worst, but never send one.
    return id === zero ? this.take(digits, zero) : id;
  }

  traceId = () => this.take(32, ZERO_TRACE_ID);
  spanId = () => this.take(16, ZERO_SPAN_ID);
}

/**
 * The sampling rule: a span with a parent (local, or remote from `traceparent`) is recorded exactly
 * when its parent was; a root span's trace is recorded with probability `ratio`, decided from the trace
 * id's last 8 hex digits (random by W3C's rules) so that the decision is the same wherever it is taken.
 */
export function parentBasedRatio(ratio: number): (traceId: string, parent: Api.SpanContext | undefined) => boolean {
  if (!(ratio >= 0 && ratio <= 1)) throw new Error(`sample ratio: must be a number from 0 to 1, got ${ratio}`);
  const bound = Math.floor(ratio * 0x1_0000_0000);
  return (traceId, parent) => {
    if (parent) return (parent.traceFlags & SAMPLED) === SAMPLED;
    if (ratio >= 1) return true;
    return parseInt(traceId.slice(-8), 16) < bound;
  };
}

export class LeanTracer implements Api.Tracer {
  private readonly ids = new IdSource();

  constructor(
    private readonly api: typeof Api,
    private readonly owner: SpanOwner,
    private readonly sampled: (traceId: string, parent: Api.SpanContext | undefined) => boolean,
  ) {}

  startSpan(name: string, options: Api.SpanOptions = {}, context: Api.Context = this.api.context.active()): Api.Span {
    const parentSpan = options.root ? undefined : this.api.trace.getSpan(context);
    const parent = parentSpan?.spanContext();
    const validParent = parent && this.api.trace.isSpanContextValid(parent) ? parent : undefined;
    const traceId = validParent ? validParent.traceId : this.ids.traceId();
    const sampled = this.sampled(traceId, validParent);
    const spanContext: Api.SpanContext = { traceId, spanId: this.ids.spanId(), traceFlags: sampled ? SAMPLED : 0 };
    if (validParent?.traceState) spanContext.traceState = validParent.traceState;
    if (!sampled) return this.api.trace.wrapSpanContext(spanContext);
    const startMs = options.startTime === undefined ? undefined : msOf(options.startTime);
    return new LeanSpan(this.owner, name, options.kind ?? 0, spanContext, validParent, options.attributes, startMs, options.links);
  }

  startActiveSpan<F extends (span: Api.Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Api.Span) => unknown>(name: string, options: Api.SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Api.Span) => unknown>(name: string, options: Api.SpanOptions, context: Api.Context, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Api.Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest.pop() as F;
    const [options, parentContext = this.api.context.active()] = rest as [Api.SpanOptions | undefined, Api.Context | undefined];
    const span = this.startSpan(name, options, parentContext);
    return this.api.context.with(this.api.trace.setSpan(parentContext, span), fn as (span: Api.Span) => ReturnType<F>, undefined, span);
  }
}
