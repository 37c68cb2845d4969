// The entry point of a mingo child process (see mingo-pool.ts): evaluates one task per message and
// answers with the documents or the error. A fatal V8 error or an exhausted heap ends this process only.
import evaluate, { type MingoTask } from './mingo-worker.js';

process.on('message', (message: { id: number; task: MingoTask }) => {
  let reply: { id: number; docs?: Record<string, unknown>[]; error?: string };
  try {
    reply = { id: message.id, docs: evaluate(message.task) };
  } catch (err) {
    reply = { id: message.id, error: err instanceof Error ? err.message : String(err) };
  }
  process.send!(reply);
});
// Messages that arrive before a listener exists are lost: the parent sends nothing until this arrives.
process.send!({ ready: true });
// The parent going away (killed, crashed) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
