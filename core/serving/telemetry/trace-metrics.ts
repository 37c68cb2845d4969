// The tracing's own figures as a metric: spans exported, dropped (a full export queue: the collector is
// down or slower than the spans come) and failed (refused or timed out), so that an operator sees spans
// go missing instead of guessing. Read at scrape time from the running tracing's counters.
import { Observed } from './metrics.js';
import type { SpanCounts } from './span-batcher.js';

const spans = new Observed(
  'platform_trace_spans_total',
  'Spans of this process by outcome: exported, dropped (export queue full) or failed (export refused or timed out)',
  ['outcome'],
  'counter',
);

/** Registers a tracing's counters (main thread only); the returned function removes them. */
export function observeTracing(tracing: { counts(): SpanCounts }): () => void {
  return spans.observe(() => {
    const c = tracing.counts();
    return [
      [{ outcome: 'exported' }, c.exported],
      [{ outcome: 'dropped' }, c.dropped],
      [{ outcome: 'failed' }, c.failed],
    ];
  });
}
