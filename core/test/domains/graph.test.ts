import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * Core's domain folders form a graph without cycles. An edge A → B exists when
 * a file of domains/A imports a file of domains/B, directly or through modules outside
 * domains/ (db, errors, plugins…), so a loop cannot hide behind a shared helper. Type-only
 * imports count: they are dependencies of the design even when erased at run time.
 */

const SRC = resolve(import.meta.dirname, '../../src');
const DOMAINS = join(SRC, 'domains');
const IMPORT = /(?:^|[\s;])(?:import|export)\s(?:[^'"]*?\sfrom\s)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The relative imports of a file, resolved to absolute paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)]
    .map((match) => match[1] ?? match[2] ?? '')
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier));
}

/** The domain folder of a file, or null for files outside domains/. */
function domainOf(file: string): string | null {
  const path = relative(DOMAINS, file);
  return path.startsWith('..') ? null : path.split(sep)[0]!;
}

/** Domain folder → the domain folders it depends on. */
export function domainGraph(): Map<string, Set<string>> {
  const files = sourceFiles(SRC);
  const imports = new Map(files.map((file) => [file, importsOf(file)]));
  const reached = (start: string): Set<string> => {
    const domains = new Set<string>();
    const seen = new Set<string>();
    const stack = [...(imports.get(start) ?? [])];
    while (stack.length) {
      const file = stack.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const domain = domainOf(file);
      if (domain) domains.add(domain);
      else stack.push(...(imports.get(file) ?? []));
    }
    return domains;
  };
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const from = domainOf(file);
    if (!from) continue;
    const edges = graph.get(from) ?? new Set<string>();
    for (const to of reached(file)) if (to !== from) edges.add(to);
    graph.set(from, edges);
  }
  return graph;
}

/**
 * File → the files of the same domain folder it imports, directly (a file-level loop inside a
 * folder: deposits → purchase → deposits). Paths relative to the folder.
 */
export function fileGraph(domain: string): Map<string, Set<string>> {
  const folder = join(DOMAINS, domain);
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(folder)) {
    const inside = importsOf(file).filter((target) => !relative(folder, target).startsWith('..'));
    graph.set(relative(folder, file), new Set(inside.map((target) => relative(folder, target))));
  }
  return graph;
}

/** One cycle as a path that starts and ends at the same node, or null. */
export function findCycle(graph: Map<string, Set<string>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === 'done') return null;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

describe('core domain import graph', () => {
  it('finds a cycle when there is one (the check itself can fail)', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(findCycle(graph)).toEqual(['a', 'b', 'c', 'a']);
    expect(
      findCycle(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set<string>()],
        ]),
      ),
    ).toBeNull();
  });

  it('sees the domains and their imports, through modules outside domains/ too', () => {
    const graph = domainGraph();
    expect([...graph.keys()]).toEqual(expect.arrayContaining(['auth', 'currencies', 'exchange', 'ledger', 'rates', 'site', 'transfer', 'user']));
    expect(graph.get('exchange')).toContain('ledger');
    expect(graph.get('exchange')).toContain('rates');
    expect(graph.get('auth')).toContain('user');
  });

  it('has no cycle between domain folders', () => {
    expect(findCycle(domainGraph())).toBeNull();
  });

  it('sees the files of a folder and their imports inside it', () => {
    const payments = fileGraph('payments');
    expect(payments.get('routes.ts')).toContain('deposits.ts');
    expect(payments.get('purchase.ts')).toContain('deposits.ts');
  });

  it.each(['lib', 'inbox'])('keeps %s/ free of the domains: it imports none, directly or through other modules', (folder) => {
    const files = sourceFiles(SRC);
    const imports = new Map(files.map((file) => [file, importsOf(file)]));
    const reached = new Set<string>();
    const stack = sourceFiles(join(SRC, folder));
    while (stack.length) {
      const file = stack.pop()!;
      if (reached.has(file)) continue;
      reached.add(file);
      stack.push(...(imports.get(file) ?? []));
    }
    expect([...reached].filter((file) => domainOf(file) !== null).map((file) => relative(SRC, file))).toEqual([]);
  });

  it.each(['payments', 'cards'])('has no import loop between the files of %s', (domain) => {
    expect(findCycle(fileGraph(domain))).toBeNull();
  });
});
