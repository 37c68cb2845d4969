// The strict Prometheus text parser the /metrics tests rely on: it must refuse what Prometheus refuses,
// or those tests would pass on a broken exposition.
import test from 'ava';
import { parsePrometheusText, sampleValue } from './testing/prom-text.js';

const good = [
  '# HELP a_total Things.',
  '# TYPE a_total counter',
  'a_total{k="x \\"q\\" \\\\ \\n"} 3',
  '# TYPE h histogram',
  'h_bucket{le="0.1"} 1',
  'h_bucket{le="+Inf"} 2',
  'h_sum 0.5',
  'h_count 2',
  '# TYPE g gauge',
  'g Nan',
  '',
].join('\n');

test('a well-formed exposition parses, label escapes included', (t) => {
  const families = parsePrometheusText(good);
  t.is(sampleValue(families, 'a_total', { k: 'x "q" \\ \n' }), 3);
  t.is(sampleValue(families, 'h_count'), 2);
  t.true(Number.isNaN(sampleValue(families, 'g')));
});

test('malformed expositions are refused, naming the line or family', (t) => {
  const bad: [string, RegExp][] = [
    ['a 1\n', /outside its family/],
    ['# TYPE a counter\na{k=x} 1\n', /not quoted/],
    ['# TYPE a counter\na 1x\n', /not a float/],
    ['# TYPE a counter\na 1', /end with a newline/],
    ['# TYPE a wat\n', /unknown type/],
    ['# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', /cumulative/],
    ['# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', /\+Inf/],
    ['# TYPE a counter\na 1\n# TYPE b gauge\nb 1\na 2\n', /outside its family/],
  ];
  for (const [text, error] of bad) t.throws(() => parsePrometheusText(text), { message: error }, text);
});
