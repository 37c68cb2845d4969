// Data pipeline schedules: standard 5-field cron expressions, evaluated in UTC. Each run covers the data
// received between the previous scheduled time and its own, so consecutive runs never overlap or leave gaps.
import { CronExpressionParser } from 'cron-parser';
import { invalidArgument } from '../../../core/serving/status-error.js';

export function checkSchedule(schedule: unknown): string {
  if (typeof schedule !== 'string' || schedule.trim() === '') throw invalidArgument('schedule: is required (a 5-field cron expression such as "0 * * * *")');
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== 5)
    throw invalidArgument(`schedule: must be a 5-field cron expression (minute hour day-of-month month day-of-week), got ${fields.length} fields`);
  try {
    CronExpressionParser.parse(schedule, { tz: 'UTC', strict: false });
  } catch (err) {
    throw invalidArgument(`schedule: ${(err as Error).message}`);
  }
  return fields.join(' ');
}

/** The first scheduled time strictly after `after`. */
export function nextTick(schedule: string, after: Date): Date {
  return CronExpressionParser.parse(schedule, { tz: 'UTC', currentDate: after }).next().toDate();
}

/** The last scheduled time at or before `at`. */
export function previousTick(schedule: string, at: Date): Date {
  return CronExpressionParser.parse(schedule, { tz: 'UTC', currentDate: new Date(at.getTime() + 1) })
    .prev()
    .toDate();
}
