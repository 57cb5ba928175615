// `npm run grammar`: compiles src/query/query.peggy with peggy into the committed parser
// src/query/query-parser.generated.ts (loading the parser then costs no grammar compilation).
// test/query/grammar.test.ts checks that the committed parser is this script's output.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import peggy from 'peggy';

const queryDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'query');

/** Path of the grammar, src/query/query.peggy. */
export const grammarPath = path.join(queryDir, 'query.peggy');
/** Path of the committed parser, src/query/query-parser.generated.ts. */
export const parserPath = path.join(queryDir, 'query-parser.generated.ts');

/**
 * The parser source compiled from the grammar: an ES module exporting `parse` with the start
 * rules `Query` (the five criteria languages) and `CommitQuery`, behind a header that keeps
 * the type checker and the linter out of it.
 */
export function generateParser(): string {
  const source = peggy.generate(readFileSync(grammarPath, 'utf8'), {
    output: 'source',
    format: 'es',
    grammarSource: 'query.peggy',
    allowedStartRules: ['Query', 'CommitQuery'],
  });
  return '// @ts-nocheck\n/* eslint-disable */\n' + '// Generated from query.peggy by peggy; regenerate with `npm run grammar`. Do not edit.\n' + source;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(parserPath, generateParser());
  process.stdout.write(`Wrote ${path.relative(process.cwd(), parserPath)}\n`);
}
