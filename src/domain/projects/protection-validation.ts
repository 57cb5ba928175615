/**
 * Validation of the branch and tag protection fields that the push and merge checks read
 * (docs/compatibility.md#projects-settings): the branch, tag and file path patterns, commit message rules and
 * file protections. A setting that could never be applied (a malformed or over-long pattern, a
 * footer pattern that does not compile, a line limit under OneDev's minimum of 40, a file
 * protection without paths) is refused when stored rather than ignored when enforced — the
 * matchers treat a pattern they cannot read as matching nothing, so the protection would
 * silently do nothing.
 */
import { validatePatternSet } from '../pattern-sets.js';
import { BadRequest } from '../../errors.js';
import { compileUserRegex, UserPatternError } from '../../query/index.js';

const isStringArray = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string');

/**
 * Checks one tag protection (defaults already filled in): its `tags` pattern set.
 *
 * @param protection the rule as it will be stored.
 * @param what its position for messages, e.g. `tagProtections[0]`.
 * @throws BadRequest naming the field, as {@link validatePatternSet}.
 */
export function validateTagProtectionRules(protection: Record<string, unknown>, what: string): void {
  validatePatternSet(String(protection.tags), `${what}.tags`);
}

/**
 * Checks one branch protection (defaults already filled in).
 *
 * @param protection the rule as it will be stored.
 * @param what its position for messages, e.g. `branchProtections[0]`.
 * @throws BadRequest naming the field: a malformed or over-long `branches` pattern (as
 *   {@link validatePatternSet}), string lists that hold other values,
 *   `maxCommitMessageLineLength` not null nor an integer ≥ 40, `commitMessageFooterPattern` not a
 *   string or null, missing, not a valid regular expression (RE2 syntax), longer than 1,000
 *   characters or too complex while `checkCommitMessageFooter` is on (src/query/user-patterns.ts),
 *   `fileProtections` items that are not `{paths, reviewRequirement, jobNames}` with
 *   non-empty, well-formed `paths`.
 */
export function validateBranchProtectionRules(protection: Record<string, unknown>, what: string): void {
  validatePatternSet(String(protection.branches), `${what}.branches`);
  for (const key of ['commitTypes', 'commitScopes', 'commitTypesForFooterCheck', 'jobNames']) {
    if (!isStringArray(protection[key])) throw new BadRequest(`${what}.${key} must be an array of strings`);
  }
  const max = protection.maxCommitMessageLineLength;
  if (max !== null && !(typeof max === 'number' && Number.isInteger(max) && max >= 40)) {
    throw new BadRequest(`${what}.maxCommitMessageLineLength must be null or an integer of at least 40`);
  }
  const pattern = protection.commitMessageFooterPattern;
  if (pattern !== null && typeof pattern !== 'string') throw new BadRequest(`${what}.commitMessageFooterPattern must be a string or null`);
  if (protection.checkCommitMessageFooter === true) {
    if (typeof pattern !== 'string' || pattern.trim() === '') throw new BadRequest(`${what}.commitMessageFooterPattern is required to check footers`);
    try {
      compileUserRegex(pattern);
    } catch (error) {
      if (!(error instanceof UserPatternError)) throw error;
      if (error.problem === 'invalid') throw new BadRequest(`${what}.commitMessageFooterPattern is not a valid regular expression: ${pattern}`);
      throw new BadRequest(`${what}.commitMessageFooterPattern ${error.reason}`);
    }
  }
  const files = protection.fileProtections;
  if (!Array.isArray(files)) throw new BadRequest(`${what}.fileProtections must be an array`);
  files.forEach((item: unknown, i) => {
    const where = `${what}.fileProtections[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new BadRequest(`${where} must be an object`);
    const { paths, reviewRequirement, jobNames, ...rest } = item as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) throw new BadRequest(`${where}: unknown field ${unknown}`);
    if (typeof paths !== 'string' || paths.trim() === '') throw new BadRequest(`${where}.paths is required`);
    validatePatternSet(paths, `${where}.paths`);
    if (reviewRequirement !== undefined && reviewRequirement !== null && typeof reviewRequirement !== 'string') {
      throw new BadRequest(`${where}.reviewRequirement must be a string or null`);
    }
    if (jobNames !== undefined && !isStringArray(jobNames)) throw new BadRequest(`${where}.jobNames must be an array of strings`);
  });
}
