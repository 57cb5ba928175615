import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errorCode } from '../../src/error-codes.js';
import { RangeNotSatisfiable } from '../../src/errors.js';
import { TITLES } from '../../src/plugins/errors.js';

const root = path.resolve(import.meta.dirname, '../..');

/** The registry of error codes (src/error-codes.ts) is the one list: code, docs and statuses agree. */
describe('error codes', () => {
  it('docs/compatibility.md lists every registered code with its status and meaning, and no other', async () => {
    const docs = await readFile(path.join(root, 'docs/compatibility.md'), 'utf8');
    const section = docs.slice(docs.indexOf('### Gitloom differs: error codes'));
    const rows = [...section.matchAll(/^\| `(GITLOOM_ERR_[A-Z_]+)` \| (\d+) \| (.+) \|$/gm)].map((m) => [m[1], Number(m[2]), m[3]]);
    expect(rows).toEqual(Object.entries(ERROR_CODES).map(([code, { status, description }]) => [code, status, description]));
  });

  it('every code named in the sources is registered', async () => {
    const named = new Set<string>();
    for (const file of await readdir(path.join(root, 'src'), { recursive: true })) {
      if (!/\.tsx?$/.test(file)) continue;
      // a family named with a wildcard (`GITLOOM_ERR_MERGE_*`) is no code
      for (const [code] of (await readFile(path.join(root, 'src', file), 'utf8')).matchAll(/GITLOOM_ERR_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_]*\*)/g)) named.add(code);
    }
    expect(named.size).toBeGreaterThan(20);
    expect([...named].filter((code) => !(code in ERROR_CODES))).toEqual([]);
  });

  it('the generic code of each status answered is registered with that status', () => {
    const answered = { ...TITLES, 416: new RangeNotSatisfiable(0).title };
    for (const [status, title] of Object.entries(answered)) {
      if (status === '500') expect(errorCode(title)).toBe('GITLOOM_ERR_INTERNAL');
      else expect(ERROR_CODES[errorCode(title)].status).toBe(Number(status));
    }
  });
});
