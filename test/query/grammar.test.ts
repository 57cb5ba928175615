import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateParser, parserPath } from '../../scripts/grammar.js';

/**
 * src/query/query-parser.generated.ts is query.peggy compiled by peggy (start rules `Query` for
 * the five criteria languages and `CommitQuery`), committed so that loading the parser costs no
 * grammar compilation. After editing the grammar, regenerate it with `npm run grammar`.
 */
describe('generated query parser', () => {
  it('is query.peggy compiled by peggy', () => {
    expect(readFileSync(parserPath, 'utf8')).toBe(generateParser());
  });
});
