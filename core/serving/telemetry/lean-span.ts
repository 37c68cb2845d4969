// The platform's own span: what the OpenTelemetry API's Span promises, kept as small as a call on the hot
// path can afford (bench:telemetry measured the SDK's span at several microseconds per call: it copies and
// sanitises the attributes twice, keeps per-span metrics and timestamps in [seconds, nanoseconds]). Here a
// span holds its name, ids, two millisecond timestamps and a reference to the caller's attributes, copied
// only when the span sets one of its own. When it ends it goes to its tracer's `onEnd` (the pipeline of
// pipeline.ts). It also reads as the SDK's ReadableSpan, so the SDK's exporters (the tests' in-memory
// exporter) take it as is.
import type * as Api from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

type Attributes = Api.Attributes;

const EMPTY: Attributes = Object.freeze({});
const NO_LINKS: readonly Api.Link[] = Object.freeze([]);

/** Milliseconds since the epoch, to the microsecond: performance.now() from the process's time origin. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

/** [seconds, nanoseconds], the SDK's HrTime, from milliseconds since the epoch. */
export function hrTimeOf(ms: number): Api.HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** Where an ended span goes; shared by every span of one tracer. */
export interface SpanOwner {
  readonly resource: Resource;
  readonly scope: { name: string };
  onEnd(span: LeanSpan): void;
}

export class LeanSpan implements Api.Span, ReadableSpan {
  readonly startMs: number;
  endMs = 0;
  ended = false;
  status: Api.SpanStatus = { code: 0 };
  events: ReadableSpan['events'] = [];
  links: Api.Link[];
  private attrs: Attributes;
  private ownAttrs = false;

  constructor(
    private readonly owner: SpanOwner,
    public name: string,
    readonly kind: Api.SpanKind,
    private readonly context: Api.SpanContext,
    readonly parentSpanContext: Api.SpanContext | undefined,
    attributes: Attributes | undefined,
    startMs: number | undefined,
    links: Api.Link[] | undefined,
  ) {
    this.attrs = attributes ?? EMPTY;
    this.startMs = startMs ?? nowMs();
    this.links = links ?? (NO_LINKS as Api.Link[]);
  }

  spanContext(): Api.SpanContext {
    return this.context;
  }

  /** The attributes: the caller's object itself until the span sets one of its own (then a copy). */
  get attributes(): Attributes {
    return this.attrs;
  }

  setAttribute(key: string, value: Api.AttributeValue): this {
    if (this.ended || value === undefined || value === null) return this;
    if (!this.ownAttrs) {
      this.attrs = { ...this.attrs };
      this.ownAttrs = true;
    }
    this.attrs[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key of Object.keys(attributes)) this.setAttribute(key, attributes[key]!);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | Api.TimeInput, time?: Api.TimeInput): this {
    if (this.ended) return this;
    const attributes = isTimeInput(attributesOrTime) ? undefined : attributesOrTime;
    const at = isTimeInput(attributesOrTime) ? attributesOrTime : time;
    this.events.push({ name, attributes, time: hrTimeOf(at === undefined ? nowMs() : msOf(at)), droppedAttributesCount: 0 });
    return this;
  }

  addLink(link: Api.Link): this {
    if (this.ended) return this;
    // A span started without links shares the frozen empty list: its first link gets a list of its own.
    if (this.links === NO_LINKS) this.links = [];
    this.links.push(link);
    return this;
  }

  addLinks(links: Api.Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: Api.SpanStatus): this {
    // OK is final; an unset status never overrides one set (the API's rule).
    if (!this.ended && this.status.code !== 1 && status.code !== 0) this.status = { ...status };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  end(endTime?: Api.TimeInput): void {
    if (this.ended) return;
    this.ended = true;
    this.endMs = endTime === undefined ? nowMs() : msOf(endTime);
    this.owner.onEnd(this);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  recordException(exception: Api.Exception, time?: Api.TimeInput): void {
    const error = typeof exception === 'string' ? { message: exception } : exception;
    const attributes: Attributes = { 'exception.message': error.message ?? String(exception) };
    if (typeof error === 'object' && 'name' in error && error.name) attributes['exception.type'] = error.name;
    this.addEvent('exception', attributes, time);
  }

  // ReadableSpan's remaining fields, computed when an exporter reads them.
  get startTime(): Api.HrTime {
    return hrTimeOf(this.startMs);
  }
  get endTime(): Api.HrTime {
    return hrTimeOf(this.endMs);
  }
  get duration(): Api.HrTime {
    const ms = Math.max(0, this.endMs - this.startMs);
    return [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
  }
  get resource(): Resource {
    return this.owner.resource;
  }
  get instrumentationScope(): { name: string } {
    return this.owner.scope;
  }
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
}

function isTimeInput(value: unknown): value is Api.TimeInput {
  return typeof value === 'number' || value instanceof Date || Array.isArray(value);
}

/** Milliseconds since the epoch of the API's TimeInput (epoch ms, performance.now() ms, Date or HrTime). */
export function msOf(time: Api.TimeInput): number {
  if (typeof time === 'number') return time < performance.timeOrigin ? performance.timeOrigin + time : time; // performance.now() or epoch ms
  if (time instanceof Date) return time.getTime();
  return time[0] * 1000 + time[1] / 1e6;
}
