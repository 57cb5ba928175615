/**
 * YAML → tagged tree conversion and a validating reader for build specs. The `yaml` library
 * parses the document (tags such as `!CommandStep` stay on the nodes); this module turns the
 * nodes into a small tree with line numbers and offers typed accessors that collect
 * validation messages instead of throwing, so one pass reports every problem.
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Document } from 'yaml';

const require = createRequire(import.meta.url);
let yamlModule: typeof Yaml | undefined;

/** The `yaml` library, loaded on first use (start-up reads no build spec). */
function yaml(): typeof Yaml {
  yamlModule ??= require('yaml') as typeof Yaml;
  return yamlModule;
}

/** A node of the converted tree. `tag` is the explicit YAML tag (`!CommandStep`) or null. */
export type SpecNode =
  | { readonly kind: 'map'; readonly tag: string | null; readonly line: number; readonly entries: ReadonlyMap<string, SpecNode> }
  | { readonly kind: 'seq'; readonly tag: string | null; readonly line: number; readonly items: readonly SpecNode[] }
  | { readonly kind: 'scalar'; readonly tag: string | null; readonly line: number; readonly value: string | number | boolean | null; readonly text: string };

/** Limit on converted nodes, so alias expansion ("billion laughs") cannot exhaust memory. */
const MAX_NODES = 50_000;

/**
 * Parses YAML text into a {@link SpecNode} tree.
 *
 * @returns the root node (null for an empty document) or the syntax error messages.
 */
export function parseYamlTree(text: string): { root: SpecNode | null; errors: string[] } {
  const { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      root: null,
      errors: doc.errors.map((e) => {
        const pos = e.linePos?.[0] ?? (e.pos ? lineCounter.linePos(e.pos[0]) : undefined);
        const msg = e.message.split('\n')[0];
        return pos ? `line ${pos.line}, column ${pos.col}: ${msg}` : msg;
      }),
    };
  }
  let budget = MAX_NODES;
  const aliasTargets = new Map<unknown, unknown>();
  const convert = (node: unknown, depth: number): SpecNode => {
    if (--budget < 0 || depth > 200) throw new TooComplex();
    if (isAlias(node)) {
      let target = aliasTargets.get(node);
      if (target === undefined) {
        target = node.resolve(doc as Document);
        aliasTargets.set(node, target);
      }
      return convert(target, depth + 1);
    }
    const n = node as { tag?: string; range?: [number, number, number] };
    const line = n.range ? lineCounter.linePos(n.range[0]).line : 0;
    const tag = n.tag && n.tag.startsWith('!') && !n.tag.startsWith('!!') ? n.tag : null;
    if (isMap(node)) {
      const entries = new Map<string, SpecNode>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        entries.set(key, pair.value == null ? { kind: 'scalar', tag: null, line, value: null, text: '' } : convert(pair.value, depth + 1));
      }
      return { kind: 'map', tag, line, entries };
    }
    if (isSeq(node)) {
      return { kind: 'seq', tag, line, items: node.items.map((i) => convert(i, depth + 1)) };
    }
    if (isScalar(node)) {
      const v = node.value;
      const value = v === null || v === undefined ? null : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string' ? v : String(v);
      const src = (node as { source?: string }).source;
      const textValue = typeof value === 'string' ? value : value === null ? '' : node.type === 'PLAIN' && typeof src === 'string' ? src : String(value);
      return { kind: 'scalar', tag, line, value, text: textValue };
    }
    return { kind: 'scalar', tag, line, value: null, text: '' };
  };
  try {
    return { root: doc.contents == null ? null : convert(doc.contents, 0), errors: [] };
  } catch (e) {
    if (e instanceof TooComplex) return { root: null, errors: ['Build spec is too large or nests too deeply'] };
    throw e;
  }
}

class TooComplex extends Error {}

/**
 * Collects validation messages with a location prefix (`line 7: jobs[0] "CI" › steps[1]: …`).
 */
export class Problems {
  readonly messages: string[] = [];

  /** Records one message about the node at `where`. */
  add(where: string, node: SpecNode | null | undefined, message: string): void {
    const loc = node && node.line > 0 ? `line ${node.line}: ` : '';
    this.messages.push(`${loc}${where ? where + ': ' : ''}${message}`);
  }
}

/** Typed, validating access to one map node. Missing keys give defaults; wrong types add problems. */
export class MapReader {
  private readonly seen = new Set<string>();

  constructor(
    readonly node: Extract<SpecNode, { kind: 'map' }>,
    readonly where: string,
    readonly problems: Problems,
  ) {}

  /** The raw child node, or undefined when absent or explicitly null. */
  raw(key: string): SpecNode | undefined {
    this.seen.add(key);
    const child = this.node.entries.get(key);
    if (!child || (child.kind === 'scalar' && child.value === null && child.tag === null)) return undefined;
    return child;
  }

  /** Marks keys OneDev knows but Gitloom ignores (accepted without effect). */
  ignore(...keys: string[]): void {
    for (const k of keys) this.seen.add(k);
  }

  private at(key: string): string {
    return `${this.where} › ${key}`;
  }

  /** A string value (numbers/booleans keep their source text). Empty strings count as absent. */
  string(key: string, opts: { required?: boolean } = {}): string | null {
    const n = this.raw(key);
    if (!n) {
      if (opts.required) this.problems.add(this.where, this.node, `'${key}' is required`);
      return null;
    }
    if (n.kind !== 'scalar') {
      this.problems.add(this.at(key), n, `expected a text value`);
      return null;
    }
    if (n.text === '') {
      if (opts.required) this.problems.add(this.where, n, `'${key}' must not be empty`);
      return null;
    }
    return n.text;
  }

  /** A boolean (YAML true/false or the strings `true`/`false`). */
  boolean(key: string, dflt: boolean): boolean {
    const n = this.raw(key);
    if (!n) return dflt;
    if (n.kind === 'scalar') {
      if (typeof n.value === 'boolean') return n.value;
      if (n.text === 'true' || n.text === 'false') return n.text === 'true';
    }
    this.problems.add(this.at(key), n, `expected true or false`);
    return dflt;
  }

  /** An integer ≥ `min`, or `dflt` when absent. */
  integer(key: string, dflt: number, min: number): number {
    return this.optionalInteger(key, min) ?? dflt;
  }

  /** An integer ≥ `min`, or null when absent (or invalid, with a problem recorded). */
  optionalInteger(key: string, min: number): number | null {
    const n = this.raw(key);
    if (!n) return null;
    const v = n.kind === 'scalar' ? (typeof n.value === 'number' ? n.value : /^-?\d+$/.test(n.text) ? Number(n.text) : NaN) : NaN;
    if (!Number.isSafeInteger(v) || v < min) {
      this.problems.add(this.at(key), n, `expected an integer ≥ ${min}`);
      return null;
    }
    return v;
  }

  /** The items of a list (absent → empty). */
  list(key: string): readonly SpecNode[] {
    const n = this.raw(key);
    if (!n) return [];
    if (n.kind !== 'seq') {
      this.problems.add(this.at(key), n, `expected a list`);
      return [];
    }
    return n.items;
  }

  /** A nested map reader, or null when absent/wrong type. */
  map(key: string, opts: { required?: boolean } = {}): MapReader | null {
    const n = this.raw(key);
    if (!n) {
      if (opts.required) this.problems.add(this.where, this.node, `'${key}' is required`);
      return null;
    }
    return asMap(n, this.at(key), this.problems);
  }

  /** Reports every key that was neither read nor ignored. Call last. */
  finish(): void {
    for (const key of this.node.entries.keys()) {
      if (!this.seen.has(key)) this.problems.add(this.where, this.node.entries.get(key), `unknown property '${key}'`);
    }
  }
}

/** Wraps a node as a map reader, reporting a problem when it is not a map. */
export function asMap(node: SpecNode, where: string, problems: Problems): MapReader | null {
  if (node.kind !== 'map') {
    problems.add(where, node, `expected a mapping`);
    return null;
  }
  return new MapReader(node, where, problems);
}
