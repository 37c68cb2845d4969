// The entry point of a mingo child process (see mingo-pool.ts): evaluates one task per message and
// answers with the documents or the error. A fatal V8 error or an exhausted heap ends this process only.
import { StatusError } from '../../../core/serving/status-error.js';
import { checkResultSize } from '../result-size.js';
import evaluate, { type MingoTask } from './mingo-worker.js';

process.on('message', (message: { id: number; task: MingoTask }) => {
  let reply: { id: number; docs?: Record<string, unknown>[]; error?: string; code?: number };
  try {
    const docs = evaluate(message.task);
    // The result limits are checked here, before the documents cross into the cloud process: a result
    // too large to send never reaches its heap, and what does reach it encodes safely (../result-size.ts).
    if (message.task.resultLimits) checkResultSize(docs, message.task.resultLimits, 'query');
    reply = { id: message.id, docs };
  } catch (err) {
    reply = { id: message.id, error: err instanceof Error ? err.message : String(err), code: err instanceof StatusError ? err.code : undefined };
  }
  process.send!(reply);
});
// Messages that arrive before a listener exists are lost: the parent sends nothing until this arrives.
process.send!({ ready: true });
// The parent going away (killed, crashed) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
