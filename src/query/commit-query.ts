/**
 * The commit query language of OneDev 8.6 (the repository API's `GET
 * /repositories/{projectId}/commits?query=…`, docs/compatibility.md#gitloom-differs-additions-to-the-interface): the `CommitQuery` start rule of
 * the peggy grammar query.peggy, compiled ahead of time into query-parser.generated.ts
 * (test/query/grammar.test.ts keeps the two in step). This module only reads the syntax;
 * src/domain/repositories/commit-query.ts resolves revisions, users and dates and runs git.
 */
import { parseWithGrammar } from './parser.js';

/** Kinds of revision a criterion names. */
export type CommitRevisionKind = 'default-branch' | 'branch' | 'tag' | 'commit' | 'build';

/** Criteria with a parenthesised value other than revisions. */
export type CommitValueCriterionType = 'before' | 'after' | 'author' | 'committer' | 'message' | 'path';

/** One criterion of a commit query; `column` is the 1-based position of its value (or keyword). */
export type CommitCriterion =
  | {
      readonly type: 'revision';
      /** `since` (leave out its history), `until` (up to it) or null (include it). */
      readonly scope: 'since' | 'until' | null;
      readonly kind: CommitRevisionKind;
      /** The branch, tag, commit or build reference; null for `default-branch`. */
      readonly value: string | null;
      readonly column: number;
    }
  | { readonly type: 'authored-by-me' | 'committed-by-me'; readonly column: number }
  | { readonly type: CommitValueCriterionType; readonly value: string; readonly column: number };

interface RawCriterion {
  type: string;
  scope?: 'since' | 'until' | null;
  kind?: CommitRevisionKind;
  value?: { text: string; offset: number } | null;
  offset: number;
}

/**
 * Parses a commit query into its criteria, in the order written:
 * `parseCommitQuery('since tag(v1) until tag(v2) author(alice*)')` →
 * `[{ type: 'revision', scope: 'since', kind: 'tag', value: 'v1', column: 11 }, …,
 * { type: 'author', value: 'alice*', column: 36 }]`. An empty query has no criteria.
 *
 * Syntax: criteria separated by whitespace; `[since|until] (branch|tag|commit|build)(value)`,
 * `default-branch`, `authored-by-me`, `committed-by-me`,
 * `(before|after|author|committer|message|path)(value)`; values are trimmed and `\` escapes
 * the next character; keywords are case-insensitive.
 *
 * @throws QuerySyntaxError (400) `Unexpected 'xyz' at column 17`, `Unexpected end of query at
 *   column N`, `Empty value at column N`, `Unterminated value at column N`.
 */
export function parseCommitQuery(text: string): CommitCriterion[] {
  const raw = parseWithGrammar(text, 'CommitQuery') as RawCriterion[];
  return raw.map((c): CommitCriterion => {
    const column = (c.value?.offset ?? c.offset) + 1;
    if (c.type === 'revision') return { type: 'revision', scope: c.scope ?? null, kind: c.kind!, value: c.value?.text ?? null, column };
    if (c.type === 'authored-by-me' || c.type === 'committed-by-me') return { type: c.type, column };
    return { type: c.type as CommitValueCriterionType, value: c.value!.text, column };
  });
}
