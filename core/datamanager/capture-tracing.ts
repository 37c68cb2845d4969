// Spans of data capture, in the data manager's worker while the machine config's tracing is on (the
// worker starts its own tracing, driver.ts). A capture batch (the readings the captured resource's worker
// took in the last CAPTURE_BATCH_MS and posted here together) is one span, `capture <resource>.<method>`,
// from its first reading's requested time to its write; its write to the capture file is a child span,
// `capture write`. A span per reading would be hundreds a second per method; the batch is the unit the
// data manager handles. Each batch starts its own trace (sampled by `tracing.sample_ratio`).
import type { Span } from '@opentelemetry/api';
import { childSpanOf, rootSpan } from '../serving/telemetry/tracing.js';

/** The batch's span, or undefined while tracing is off. */
export function startCaptureSpan(resource: string, method: string, firstRequestedMs: number): Span | undefined {
  return rootSpan(`capture ${resource}.${method}`, { startTime: firstRequestedMs, attributes: { 'platform.resource': resource, 'platform.method': method } });
}

/** The write's span, a child of the batch's (capture runs from message callbacks: the parent is given, not active). */
export function startWriteSpan(batch: Span | undefined, records: number, bytes: number): Span | undefined {
  return childSpanOf(batch, 'capture write', { 'platform.capture.records': records, 'platform.capture.bytes': bytes });
}

/** Ends a span, an ERROR with `error` when given. */
export function endCaptureSpan(span: Span | undefined, error?: string): void {
  if (!span) return;
  if (error !== undefined) span.setStatus({ code: 2, message: error });
  span.end();
}
