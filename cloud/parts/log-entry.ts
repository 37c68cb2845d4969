// One stored log line of a part, as the machine shipped it (its own file so that the log store and the
// event bus that announces new lines can both name it without importing each other).
export interface StoredLogEntry {
  time: Date;
  level: string;
  loggerName: string;
  message: string;
  fields: Record<string, unknown>;
}
