// The process half of an FTDC sample: CPU time since the previous sample, memory, event-loop delay and
// active handles. Every call here is a cheap read of counters the process keeps anyway.
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';

export interface ProcessSample {
  /** CPU time of the whole process (all threads, driver workers included) since the previous sample. */
  cpu_user_ms: number;
  cpu_system_ms: number;
  /** Wall time the CPU times above cover. */
  elapsed_ms: number;
  rss_bytes: number;
  heap_used_bytes: number;
  heap_total_bytes: number;
  external_bytes: number;
  /** Main-thread event-loop delay over the interval (0 when the interval was too short to measure). */
  event_loop_delay_p50_ms: number;
  event_loop_delay_p99_ms: number;
  event_loop_delay_max_ms: number;
  /** Handles and requests keeping the event loop alive (sockets, timers, file handles). */
  active_handles: number;
}

/** The sampling timer's period. Finer costs timer wake-ups, and a delay below it is not worth diagnosing. */
const RESOLUTION_MS = 10;

// The histogram records the time between two ticks of its timer, so an idle loop reads as the period
// itself (10 ms); the delay is what exceeds it.
const delayMs = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);

export class ProcessSampler {
  private readonly delay: IntervalHistogram;
  private lastCpu = process.cpuUsage();
  private lastAt = performance.now();

  constructor() {
    this.delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.delay.enable();
  }

  sample(): ProcessSample {
    // One reading, differenced by hand: a second call would leave the time between the two uncounted.
    const total = process.cpuUsage();
    const cpu = { user: total.user - this.lastCpu.user, system: total.system - this.lastCpu.system };
    this.lastCpu = total;
    const now = performance.now();
    const elapsed = now - this.lastAt;
    this.lastAt = now;
    const memory = process.memoryUsage();
    const measured = this.delay.count > 0;
    const sample: ProcessSample = {
      cpu_user_ms: Math.round(cpu.user / 10) / 100,
      cpu_system_ms: Math.round(cpu.system / 10) / 100,
      elapsed_ms: Math.round(elapsed),
      rss_bytes: memory.rss,
      heap_used_bytes: memory.heapUsed,
      heap_total_bytes: memory.heapTotal,
      external_bytes: memory.external,
      event_loop_delay_p50_ms: measured ? delayMs(this.delay.percentile(50)) : 0,
      event_loop_delay_p99_ms: measured ? delayMs(this.delay.percentile(99)) : 0,
      event_loop_delay_max_ms: measured ? delayMs(this.delay.max) : 0,
      active_handles: process.getActiveResourcesInfo().length,
    };
    this.delay.reset();
    return sample;
  }

  close(): void {
    this.delay.disable();
  }
}
