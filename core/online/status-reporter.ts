// Reports the runtime's status to the cloud: when it changes (debounced: resource states, and each saved
// config revision once it is applied or refused) and every 10 s, so that the cloud shows the part online,
// its version, the revision it runs, and the resources that are not ready with their errors.
import type { ReportStatusRequest } from '../../gen/platform/app/v1/robot_part.js';
import type { DriverLogger } from '../../plugins/contract.js';
import type { Machine } from '../kernel/machine.js';
import type { CloudLink } from '../cloud-link/cloud-link.js';

export const STATUS_INTERVAL_MS = 10_000;
/** State changes come in bursts (a reconfiguration touches many resources): one report per burst. */
const DEBOUNCE_MS = 200;

export interface StatusInputs {
  version: string;
  revision(): number;
  configProblem(): string | undefined;
}

export class StatusReporter {
  private timer?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;
  private last = '';
  private sending = false;
  private again = false;
  private failing = false;
  private readonly onState = () => this.soon();

  constructor(
    private readonly link: CloudLink,
    private readonly machine: Machine,
    private readonly inputs: StatusInputs,
    private readonly log: DriverLogger,
  ) {}

  start(): void {
    this.machine.on('state', this.onState);
    // PLATFORM_STATUS_INTERVAL_MS (tests): a test that must see only the reports a change causes sets it long.
    this.timer = setInterval(() => void this.send(true), Number(process.env.PLATFORM_STATUS_INTERVAL_MS) || STATUS_INTERVAL_MS);
    void this.send(true);
  }

  /** Reports soon; for changes the machine does not emit (config revision, config problem). */
  soon(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.send(false), DEBOUNCE_MS);
  }

  current(): ReportStatusRequest {
    const statuses = this.machine.statuses();
    return {
      id: this.link.partId,
      runtimeVersion: this.inputs.version,
      machineState: this.inputs.revision() === 0 && statuses.length === 0 ? 'no_config' : this.machine.state,
      configRevision: this.inputs.revision(),
      configError: this.inputs.configProblem() ?? '',
      notReady: statuses.filter((s) => s.state !== 'ready').map((s) => ({ name: s.key, state: s.state, error: s.error ?? '' })),
      resourceCount: statuses.length,
    };
  }

  private async send(periodic: boolean): Promise<void> {
    if (this.sending) {
      this.again = true;
      return;
    }
    const report = this.current();
    const text = JSON.stringify(report);
    if (!periodic && text === this.last) return;
    this.sending = true;
    try {
      await this.link.unary(this.link.robot.reportStatus, report);
      this.last = text;
      if (this.failing) this.log.info('status reports reach the cloud again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.log.warn('cannot report the status to the cloud; retrying every 10 s', { error: (err as Error).message });
      this.failing = true;
    } finally {
      this.sending = false;
      if (this.again) {
        this.again = false;
        this.soon();
      }
    }
  }

  stop(): void {
    this.machine.off('state', this.onState);
    clearInterval(this.timer);
    clearTimeout(this.debounce);
  }
}
