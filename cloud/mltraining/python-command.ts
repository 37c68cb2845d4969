// Which python runs the trainers. Debian's python3-torch lives in /usr/bin/python3's packages, while a
// developer's PATH may put another python3 (pyenv, venv) first that has no torch.
import { existsSync } from 'node:fs';

export function defaultPython(): string {
  const chosen = process.env.PLATFORM_TRAINING_PYTHON;
  if (chosen) return chosen;
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}
