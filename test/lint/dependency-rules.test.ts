import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

/** Runs a tool of node_modules/.bin from the repository root; resolves to its exit code and output. */
async function tool(name: string, args: string[], input?: string): Promise<{ code: number; output: string }> {
  const child = run(path.join(root, 'node_modules/.bin', name), args, { cwd: root });
  if (input !== undefined) {
    child.child.stdin!.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

/** The dependency rules of docs/architecture.md#dependency-rules report deliberate violations. */
describe('dependency rules (npm run lint)', () => {
  let fixtures: string;

  beforeAll(async () => {
    fixtures = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-lint-'));
    const write = (dir: string, file: string, text: string) =>
      fs.mkdir(path.join(fixtures, dir), { recursive: true }).then(() => fs.writeFile(path.join(fixtures, dir, file), text));
    await write('cycle', 'a.ts', "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n");
    await write('cycle', 'b.ts', "import { a } from './a.js';\nexport const b = (): number => (a.length > 0 ? 1 : 0);\n");
    // a cycle of type-only imports is erased by the compiler: none at run time
    await write('types', 'a.ts', "import type { B } from './b.js';\nexport interface A { b?: B }\n");
    await write('types', 'b.ts', "import type { A } from './a.js';\nexport interface B { a?: A }\n");
  });
  afterAll(async () => {
    await fs.rm(fixtures, { recursive: true, force: true });
  });

  const cruise = (dir: string) => tool('depcruise', [path.join(fixtures, dir), '--config', '.dependency-cruiser.cjs']);

  it('reports an import cycle, naming its modules', async () => {
    const { code, output } = await cruise('cycle');
    expect(code).not.toBe(0);
    expect(output).toMatch(/no-circular: \S*cycle\/a\.ts/);
  });

  it('control: a cycle of type-only imports passes', async () => {
    const { code, output } = await cruise('types');
    expect(code, output).toBe(0);
  });

  it('reports a domain module that imports the HTTP layer; control: the same import from a route passes', async () => {
    const source = "import { apiRoutes } from '../http/routes/index.js';\nexport const routes = apiRoutes;\n";
    const refused = await tool('eslint', ['--stdin', '--stdin-filename', 'src/domain/lint-fixture.ts'], source);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('domain may not depend on src/http');
    const allowed = await tool(
      'eslint',
      ['--stdin', '--stdin-filename', 'src/http/lint-fixture.ts'],
      source.replace('../http/routes/index.js', './routes/index.js'),
    );
    expect(allowed.code, allowed.output).toBe(0);
  });
});
