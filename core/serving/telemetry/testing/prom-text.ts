// Test helper: a strict parser of Prometheus's text exposition format (0.0.4), written from the format's
// description: `# HELP`/`# TYPE` lines, one family's samples together after its TYPE, names and label names
// by the format's patterns, escaped label values, float values (±Inf, NaN, any case, as Prometheus reads them), optional timestamps,
// and for histograms buckets with rising `le`, cumulative counts, a +Inf bucket equal to _count. Any
// departure throws an error naming the line.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** As Prometheus reads values (Go's strconv.ParseFloat): NaN and Inf in any case; prom-client writes "Nan". */
function parseValue(text: string, where: string): number {
  if (/^[+]?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`${where}: ${JSON.stringify(text)} is not a float`);
  return Number(text);
}

/** Reads `{a="x",b="y"}` from `text` at `at` (just past `{`); returns the labels and where they end. */
function parseLabels(text: string, at: number, where: string): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  for (;;) {
    if (text[at] === '}') return [labels, at + 1];
    const eq = text.indexOf('=', at);
    if (eq < 0) throw new Error(`${where}: label without "="`);
    const name = text.slice(at, eq);
    if (!LABEL.test(name)) throw new Error(`${where}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`${where}: label ${name} twice`);
    if (text[eq + 1] !== '"') throw new Error(`${where}: label ${name}'s value is not quoted`);
    let value = '';
    let i = eq + 2;
    for (; i < text.length && text[i] !== '"'; i++) {
      if (text[i] === '\\') {
        const next = text[++i];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`${where}: bad escape \\${next} in label ${name}`);
      } else value += text[i];
    }
    if (i >= text.length) throw new Error(`${where}: label ${name}'s value is not closed`);
    labels[name] = value;
    at = i + 1;
    if (text[at] === ',') at++;
    else if (text[at] !== '}') throw new Error(`${where}: expected "," or "}" after label ${name}`);
  }
}

function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  for (const suffix of ['', '_bucket', '_sum', '_count']) {
    if (suffix && !sample.endsWith(suffix)) continue;
    const family = families.get(sample.slice(0, sample.length - suffix.length));
    if (family && (suffix === '' || family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return family;
  }
  return undefined;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of family.samples) {
    const { le: _le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, samples] of series) {
    const buckets = samples.filter((s) => s.name.endsWith('_bucket'));
    const count = samples.find((s) => s.name === `${family.name}_count`);
    if (!count || !samples.some((s) => s.name === `${family.name}_sum`)) throw new Error(`${family.name}${key}: histogram without _sum or _count`);
    const les = buckets.map((b) => parseValue(b.labels.le ?? '', `${family.name} le`));
    for (let i = 1; i < buckets.length; i++) {
      if (!(les[i] > les[i - 1])) throw new Error(`${family.name}${key}: le not rising`);
      if (buckets[i].value < buckets[i - 1].value) throw new Error(`${family.name}${key}: bucket counts not cumulative`);
    }
    if (les.at(-1) !== Infinity || buckets.at(-1)!.value !== count.value) throw new Error(`${family.name}${key}: the +Inf bucket must equal _count`);
  }
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the exposition must end with a newline');
  lines.forEach((line, index) => {
    const where = `line ${index + 1}`;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m;
      if (!NAME.test(name)) throw new Error(`${where}: bad metric name ${JSON.stringify(name)}`);
      let family = families.get(name);
      if (family && family !== current) throw new Error(`${where}: family ${name} is not contiguous`);
      if (!family) {
        family = { name, type: 'untyped', samples: [] };
        families.set(name, family);
      }
      current = family;
      if (kind === 'HELP') family.help = rest;
      else {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${JSON.stringify(rest)}`);
        if (family.samples.length) throw new Error(`${where}: TYPE of ${name} after its samples`);
        family.type = rest as Family['type'];
      }
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{?)/.exec(line);
    if (!m) throw new Error(`${where}: not a sample: ${JSON.stringify(line)}`);
    let labels: Record<string, string> = {};
    let at = m[1].length;
    if (m[2]) [labels, at] = parseLabels(line, at + 1, where);
    const rest = line.slice(at);
    const v = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
    if (!v) throw new Error(`${where}: expected " value [timestamp]", got ${JSON.stringify(rest)}`);
    const family = familyOf(m[1], families);
    if (!family || family !== current) throw new Error(`${where}: sample ${m[1]} outside its family's block (no TYPE before it)`);
    family.samples.push({ name: m[1], labels, value: parseValue(v[1], where) });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The value of the one sample named `name` whose labels include `labels` (0 when none). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const all = [...families.values()].flatMap((f) => f.samples);
  const found = all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${found.length} samples match`);
  return found[0]?.value ?? 0;
}
