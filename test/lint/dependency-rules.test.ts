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

  // a project of its own with src/ laid out like ours, checked by our .dependency-cruiser.cjs
  beforeAll(async () => {
    fixtures = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-lint-'));
    const write = async (file: string, text: string) => {
      await fs.mkdir(path.dirname(path.join(fixtures, file)), { recursive: true });
      await fs.writeFile(path.join(fixtures, file), text);
    };
    await fs.copyFile(path.join(root, '.dependency-cruiser.cjs'), path.join(fixtures, '.dependency-cruiser.cjs'));
    await write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', verbatimModuleSyntax: true } }));
    await write('src/cycle/a.ts', "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n");
    await write('src/cycle/b.ts', "import { a } from './a.js';\nexport const b = (): number => (a.length > 0 ? 1 : 0);\n");
    // a cycle of type-only imports is erased by the compiler: none at run time
    await write('src/types/a.ts', "import type { B } from './b.js';\nexport interface A { b?: B }\n");
    await write('src/types/b.ts', "import type { A } from './a.js';\nexport interface B { a?: A }\n");
    // two domain areas with doors
    await write('src/domain/beta/index.ts', "export { shared } from './shared.js';\n");
    await write('src/domain/beta/shared.ts', 'export const shared = 1;\nexport interface Row { id: number }\n');
    await write('src/domain/beta/private.ts', 'export const hidden = 2;\n');
    await write('src/domain/alpha/index.ts', "export { viaDoor } from './via-door.js';\n");
    await write('src/domain/alpha/via-door.ts', "import { shared } from '../beta/index.js';\nexport const viaDoor = shared;\n");
    await write('src/domain/alpha/past-door.ts', "import { hidden } from '../beta/private.js';\nexport const pastDoor = hidden;\n");
    await write('src/domain/alpha/type-past-door.ts', "import type { Row } from '../beta/shared.js';\nexport const rows: Row[] = [];\n");
    await write('src/http/route.ts', "import { hidden } from '../domain/beta/private.js';\nexport const route = hidden;\n");
    await write('src/http/door-route.ts', "import { shared } from '../domain/beta/index.js';\nexport const route = shared;\n");
    await write('src/domain/kernel.ts', "import { shared } from './beta/index.js';\nexport const kernel = shared;\n");
    // areas that reach each other through their doors: a cycle
    await write('src/domain/gamma/index.ts', "export { g } from './g.js';\n");
    await write('src/domain/gamma/g.ts', "import { d } from '../delta/index.js';\nexport const g = (): number => d() + 1;\n");
    await write('src/domain/delta/index.ts', "export { d } from './d.js';\n");
    await write('src/domain/delta/d.ts', "import { g } from '../gamma/index.js';\nexport const d = (): number => (g.length > 0 ? 1 : 0);\n");
  });
  afterAll(async () => {
    await fs.rm(fixtures, { recursive: true, force: true });
  });

  const cruise = async (...files: string[]) => {
    const child = run(path.join(root, 'node_modules/.bin/depcruise'), [...files, '--config', '.dependency-cruiser.cjs'], { cwd: fixtures });
    try {
      const { stdout, stderr } = await child;
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, output: e.stdout + e.stderr };
    }
  };

  it('reports an import cycle, naming its modules', async () => {
    const { code, output } = await cruise('src/cycle');
    expect(code).not.toBe(0);
    expect(output).toMatch(/no-circular: src\/cycle\/a\.ts/);
  });

  it('control: a cycle of type-only imports passes', async () => {
    const { code, output } = await cruise('src/types');
    expect(code, output).toBe(0);
  });

  it("reports an area importing past another area's door, a value or a type; control: through the door passes", async () => {
    const { code, output } = await cruise('src/domain/alpha/past-door.ts', 'src/domain/alpha/type-past-door.ts', 'src/domain/alpha/via-door.ts');
    expect(code).not.toBe(0);
    expect(output).toMatch(/area-door: src\/domain\/alpha\/past-door\.ts → src\/domain\/beta\/private\.ts/);
    expect(output).toMatch(/area-door: src\/domain\/alpha\/type-past-door\.ts → src\/domain\/beta\/shared\.ts/);
    expect(output).not.toMatch(/via-door\.ts →/);
  });

  it("reports a route importing past an area's door; control: through the door passes", async () => {
    const refused = await cruise('src/http/route.ts');
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/domain-door: src\/http\/route\.ts → src\/domain\/beta\/private\.ts/);
    const allowed = await cruise('src/http/door-route.ts');
    expect(allowed.code, allowed.output).toBe(0);
  });

  it('reports the domain kernel importing an area', async () => {
    const { code, output } = await cruise('src/domain/kernel.ts');
    expect(code).not.toBe(0);
    expect(output).toMatch(/kernel-below-areas: src\/domain\/kernel\.ts → src\/domain\/beta\/index\.ts/);
  });

  it('reports areas that reach each other through their doors', async () => {
    const { code, output } = await cruise('src/domain/gamma', 'src/domain/delta');
    expect(code).not.toBe(0);
    expect(output).toMatch(/no-circular: src\/domain\/(gamma|delta)\//);
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
  it("reports a query of another area's table, by a builder or a row helper; control: the owning area's query passes", async () => {
    const source = [
      "import type { Db } from '../../../db/database.js';",
      "import { loadRow } from '../../entities.js';",
      "export const open = (db: Db) => db.selectFrom('pullRequests as pr').select('pr.id').execute();",
      "export const one = (db: Db) => loadRow(db, 'pullRequests', 1, 'Pull request');",
      '',
    ].join('\n');
    const refused = await tool('eslint', ['--stdin', '--stdin-filename', 'src/domain/issues/lint-fixture.ts'], source);
    expect(refused.code).not.toBe(0);
    expect(refused.output.match(/the tables of pulls are read and written by src\/domain\/pulls only/g)).toHaveLength(2);
    const owner = await tool('eslint', ['--stdin', '--stdin-filename', 'src/domain/pulls/lint-fixture.ts'], source);
    expect(owner.code, owner.output).toBe(0);
  });
});
