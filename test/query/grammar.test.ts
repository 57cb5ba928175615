import { readFileSync } from 'node:fs';
import peggy from 'peggy';
import { describe, expect, it } from 'vitest';

const grammarUrl = new URL('../../src/query/query.peggy', import.meta.url);

/**
 * src/query/query-parser.generated.ts is query.peggy compiled by peggy, committed so that
 * loading the parser costs no grammar compilation. After editing the grammar, regenerate it
 * with `npx vitest run test/query/grammar.test.ts -u`.
 */
describe('generated query parser', () => {
  it('is query.peggy compiled by peggy', async () => {
    const source = peggy.generate(readFileSync(grammarUrl, 'utf8'), {
      output: 'source',
      format: 'es',
      grammarSource: 'query.peggy',
    });
    const header =
      '// @ts-nocheck\n/* eslint-disable */\n' +
      '// Generated from query.peggy by peggy; regenerate with\n' +
      '// `npx vitest run test/query/grammar.test.ts -u`. Do not edit.\n';
    await expect(header + source).toMatchFileSnapshot('../../src/query/query-parser.generated.ts');
  });
});
