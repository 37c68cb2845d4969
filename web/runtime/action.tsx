// One control's action and its error, shown next to the control that made the call.
import { useState } from 'preact/hooks';

/** Runs one action and shows its error, if any, next to the control. */
export function useAction(): [string, (run: () => Promise<unknown>) => void] {
  const [error, setError] = useState('');
  return [
    error,
    (run) => {
      setError('');
      run().catch((err: Error) => setError(err.message));
    },
  ];
}

export function Failure({ text }: { text?: string }) {
  return text ? (
    <p class="error" role="alert">
      {text}
    </p>
  ) : null;
}
