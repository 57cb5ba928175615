/**
 * The one parser of the OneDev query languages: the peggy grammar in query.peggy reads the
 * shared syntax, then src/query/validate.ts checks the result against the language
 * definition. The grammar is compiled ahead of time into query-parser.generated.ts
 * (test/query/grammar.test.ts keeps the two in step), so loading costs no compilation.
 */
import type { ParsedQuery } from './ast.js';
import { QuerySyntaxError } from './errors.js';
import { QUERY_LANGUAGES, type FieldDefinition, type LanguageDefinition, type QueryLanguage } from './languages.js';
import * as generated from './query-parser.generated.js';
import { compileLanguage, unexpectedAt, validateQuery, type CompiledLanguage, type RawQuery } from './validate.js';

/** The parts of peggy's generated parser used here. */
interface GrammarSyntaxError extends Error {
  expected: unknown[] | null;
  location: { start: { offset: number } };
}
const grammar = generated as unknown as {
  parse(input: string, options?: { startRule?: GrammarStartRule }): unknown;
  SyntaxError: new (...args: never[]) => GrammarSyntaxError;
};

/** The start rules of query.peggy: the five criteria languages, and the commit query. */
export type GrammarStartRule = 'Query' | 'CommitQuery';

const builtIn = new Map<LanguageDefinition, CompiledLanguage>();

function compiled(definition: LanguageDefinition, extraFields: readonly (string | FieldDefinition)[]): CompiledLanguage {
  if (extraFields.length > 0) return compileLanguage(definition, extraFields);
  let language = builtIn.get(definition);
  if (language === undefined) {
    language = compileLanguage(definition);
    builtIn.set(definition, language);
  }
  return language;
}

/** Options of `parseQuery`. */
export interface ParseQueryOptions {
  /**
   * Fields beyond the built-in ones: issue custom fields, build job params. A name gets
   * the language's extra-field policy (`LanguageDefinition.extraFields`); a full
   * `FieldDefinition` is used as given. Built-in fields win on a name clash.
   */
  readonly extraFields?: readonly (string | FieldDefinition)[];
  /** Reference time for checking relative dates (`yesterday`); defaults to now. */
  readonly now?: Date;
}

function isGrammarError(error: unknown): error is GrammarSyntaxError {
  return error instanceof grammar.SyntaxError;
}

/**
 * Parses a query of one language (see languages.ts) into its AST:
 * `parseQuery('pulls', 'open and "Target Branch" is "main" order by "Number" desc')` →
 * `{ criteria: { kind: 'and', left: { kind: 'operator', operator: 'open', value: null, column: 1 },
 * right: { kind: 'field', field: 'Target Branch', operator: 'is', value: 'main', column: 10 } },
 * orders: [{ field: 'Number', direction: 'desc' }] }`.
 *
 * Syntax: `[criteria] [order by "Field" [asc|desc] (and "Field" [asc|desc])*]`; criteria
 * are `a and b`, `a or b` (`and` binds tighter), `not(c)`, `(c)`, `~fuzzy~`, `#123`/`123`
 * (where the language allows), `"Field" operator "value"`, `operator "value"` and bare
 * operators. Keywords are case-insensitive and any whitespace separates tokens
 * (docs/compatibility.md#gitloom-differs-pagination-and-query-parameters); quoted strings are non-empty and `\` escapes the next character.
 * Dates and integers of date and count fields are checked (not converted) here.
 *
 * Implements docs/compatibility.md#projects-query-language, docs/compatibility.md#pull-requests-query-language, docs/compatibility.md#builds-query-language,
 * docs/compatibility.md#code-comments-query-language and docs/compatibility.md#issues-query-language, and OneDev's job match language (JOB_MATCH).
 *
 * @param language a built-in language name or a definition
 * @throws QuerySyntaxError (400) `Unexpected 'xyz' at column 17`, `Unexpected end of query
 *   at column N`, `Unterminated quoted string at column N`, `Empty quoted string at column N`,
 *   `Field not found: X`, `Field 'X' is not applicable for operator 'y'`,
 *   `Can not order by field: X`, `Unrecognized date: X`, `Invalid integer for field 'X': y`,
 *   `Query is nested too deeply`; a language's `noun` replaces `query` in these
 *   (`Unexpected end of job match at column N`). In a language without sort fields,
 *   `order by` is refused as `Unexpected 'order' at column N`; likewise fuzzy and number
 *   criteria where the language has none.
 */
export function parseQuery(language: QueryLanguage | LanguageDefinition, text: string, options: ParseQueryOptions = {}): ParsedQuery {
  const definition = typeof language === 'string' ? QUERY_LANGUAGES[language] : language;
  const compiledLanguage = compiled(definition, options.extraFields ?? []);
  const noun = definition.noun ?? 'query';
  const raw = parseWithGrammar(text, 'Query', noun) as RawQuery;
  try {
    return validateQuery(raw, compiledLanguage, text, options.now ?? new Date());
  } catch (error) {
    // a long `a or b or …` chain is a left-deep tree the grammar reads in a loop but the check walks recursively
    if (error instanceof RangeError && /call stack/i.test(error.message)) throw nestedTooDeeply(noun);
    throw error;
  }
}

function nestedTooDeeply(noun: string): QuerySyntaxError {
  return new QuerySyntaxError(`${noun.charAt(0).toUpperCase()}${noun.slice(1)} is nested too deeply`);
}

/**
 * Runs the generated parser of query.peggy from one start rule and returns the grammar's raw
 * result (shapes are the rule's; see query.peggy). `noun` names the text in messages
 * (`query`, `job match`).
 *
 * @throws QuerySyntaxError (400) `Unexpected 'xyz' at column 17`, `Unexpected end of query at
 *   column N`, messages raised by the grammar itself with their column (`Unterminated quoted
 *   string at column N`), `Query is nested too deeply`.
 */
export function parseWithGrammar(text: string, startRule: GrammarStartRule, noun = 'query'): unknown {
  try {
    return grammar.parse(text, { startRule });
  } catch (error) {
    if (error instanceof RangeError) throw nestedTooDeeply(noun);
    if (!isGrammarError(error)) throw error;
    const offset = error.location.start.offset;
    if (error.expected === null) {
      // A message raised by the grammar itself (unterminated or empty string or fuzzy text).
      throw new QuerySyntaxError(`${error.message} at column ${offset + 1}`, offset + 1);
    }
    unexpectedAt(text, offset, noun);
  }
}
