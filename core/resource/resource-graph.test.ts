import test from 'ava';
import { analyzeGraph, dependentsOf } from './resource-graph.js';

const node = (name: string, ...dependencies: string[]) => ({ name, dependencies });

test('levels put dependencies before dependents', (t) => {
  const { levels, cycles, missing } = analyzeGraph([node('motor', 'board', 'encoder'), node('encoder', 'board'), node('board'), node('sensor')]);
  t.deepEqual(levels, [['board', 'sensor'], ['encoder'], ['motor']]);
  t.is(cycles.size, 0);
  t.is(missing.size, 0);
});

test('a cycle is named as a path for each of its members, and they get no level', (t) => {
  const { levels, cycles } = analyzeGraph([node('a', 'b'), node('b', 'c'), node('c', 'a'), node('d', 'a'), node('e')]);
  t.deepEqual(cycles.get('a'), ['a', 'b', 'c', 'a']);
  t.deepEqual(cycles.get('b'), ['b', 'c', 'a', 'b']);
  t.deepEqual(cycles.get('c'), ['c', 'a', 'b', 'c']);
  t.false(cycles.has('d'));
  t.deepEqual(levels, [['d', 'e']]);
});

test('a two-node cycle and a self loop are cycles', (t) => {
  const { cycles } = analyzeGraph([node('a', 'b'), node('b', 'a'), node('s', 's')]);
  t.deepEqual(cycles.get('a'), ['a', 'b', 'a']);
  t.deepEqual(cycles.get('s'), ['s', 's']);
});

test('dependencies that are not configured are reported as missing', (t) => {
  const { missing, levels } = analyzeGraph([node('motor', 'board', 'ghost')]);
  t.deepEqual(missing.get('motor'), ['board', 'ghost']);
  t.deepEqual(levels, [['motor']]);
});

test('dependentsOf returns the transitive dependents only', (t) => {
  const nodes = [node('board'), node('encoder', 'board'), node('motor', 'encoder'), node('other')];
  t.deepEqual([...dependentsOf(['board'], nodes)].sort(), ['encoder', 'motor']);
  t.deepEqual([...dependentsOf(['motor'], nodes)], []);
});
