/**
 * The door of the query area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export {
  allWords,
  always,
  compileCriteria,
  compileOrders,
  type Condition,
  currentUserOrFail,
  equals,
  inIds,
  type LeafCompiler,
  likeCondition,
  mentioned,
  never,
} from './compile.js';
export { type JobMatch, jobMatches, type JobMatchSubject, namesIn, parseJobMatch, patternsIn } from './job-match.js';
export { assertNameFree, namedEntity, queryByName } from './named.js';
