/**
 * The query-language front end: OneDev's five query languages (docs/compatibility.md#projects-query-language,
 * docs/compatibility.md#pull-requests-query-language, docs/compatibility.md#builds-query-language, docs/compatibility.md#code-comments-query-language and docs/compatibility.md#issues-query-language), its job match language and its
 * build condition language parsed to one AST, plus the date, integer and wildcard helpers
 * their SQL compilers need, and the one compiler of user-supplied regular expressions
 * (./user-patterns.ts).
 */
export type * from './ast.js';
export { chainOperands } from './ast.js';
export { QuerySyntaxError } from './errors.js';
export { parseIntegerValue, parseQueryDate } from './dates.js';
export {
  AGENT_QUERY,
  BUILD_CONDITION,
  BUILD_QUERY,
  CODE_COMMENT_QUERY,
  ISSUE_QUERY,
  JOB_MATCH,
  PROJECT_QUERY,
  PULL_REQUEST_QUERY,
  QUERY_LANGUAGES,
  type ExtraFieldPolicy,
  type FieldDefinition,
  type FieldValueType,
  type LanguageDefinition,
  type QueryLanguage,
} from './languages.js';
export { parseQuery, type ParseQueryOptions } from './parser.js';
export { LIKE_ESCAPE, antPathMatcher, antPathToLike, containsToLike, escapeLike, wildcardMatcher, wildcardToLike, type TextMatcher } from './wildcards.js';
export {
  MAX_MATCH_COST,
  MAX_PATTERN_LENGTH,
  MAX_PROGRAM_SIZE,
  UserPatternError,
  checkPatternLength,
  compileUserRegex,
  type UserPatternProblem,
  type UserRegex,
} from './user-patterns.js';
