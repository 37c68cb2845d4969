// Where a child process's entry file is, and the flags it needs: the built `.js` when the cloud runs from
// dist/, the `.ts` source with this process's TypeScript loader (--import/--loader) when it runs from
// source (tests). Shared by the cloud's child processes (MQL evaluation, thumbnails).
import { fileURLToPath } from 'node:url';

export function childEntry(moduleUrl: string, baseName: string): { path: string; execArgv: string[] } {
  const fromSource = moduleUrl.endsWith('.ts');
  return {
    path: fileURLToPath(new URL(`./${baseName}${fromSource ? '.ts' : '.js'}`, moduleUrl)),
    execArgv: fromSource ? loaderFlags(process.execArgv) : [],
  };
}

function loaderFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if ((argv[i] === '--import' || argv[i] === '--loader') && i + 1 < argv.length) out.push(argv[i], argv[++i]);
    else if (/^--(import|loader)=/.test(argv[i])) out.push(argv[i]);
  }
  return out;
}
