/**
 * Commit message rules of branch protections (docs/compatibility.md#projects-branch-protection:
 * `enforceConventionalCommits`, `commitTypes`, `commitScopes`, `checkCommitMessageFooter`,
 * `commitMessageFooterPattern`, `commitTypesForFooterCheck`, `maxCommitMessageLineLength`), with
 * OneDev's messages. One module for both places that enforce them: pushes (the pre-receive check,
 * src/domain/projects/branch-protection.ts) and pull request merges (checkMerge,
 * docs/compatibility.md#pull-requests-merge-checks item 8).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { commitMessages } from '../../git/history.js';
import { compileUserRegex, type UserRegex } from '../../query/index.js';

/** The commit message settings of one branch protection rule. */
export interface CommitMessageRule {
  enforceConventionalCommits: boolean;
  /** Allowed conventional commit types; empty = any. */
  commitTypes: string[];
  /** Allowed conventional commit scopes; empty = any. */
  commitScopes: string[];
  checkCommitMessageFooter: boolean;
  /** A regular expression the last line (the footer) must match entirely (RE2 syntax, src/query/user-patterns.ts). */
  commitMessageFooterPattern: string | null;
  /** Types whose commits get the footer check; empty = all. */
  commitTypesForFooterCheck: string[];
  /** Longest allowed line, in UTF-16 code units (as OneDev counts); null = no limit. */
  maxCommitMessageLineLength: number | null;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/**
 * The commit message rule of a stored branch protection, or null when the protection checks no
 * commit messages (neither conventional commits nor a line length limit, as OneDev decides).
 * Values of a wrong type count as not set.
 *
 * @param protection a BranchProtection as stored (defaults filled in).
 */
export function commitMessageRuleOf(protection: Record<string, unknown>): CommitMessageRule | null {
  const max = protection.maxCommitMessageLineLength;
  const rule: CommitMessageRule = {
    enforceConventionalCommits: protection.enforceConventionalCommits === true,
    commitTypes: strings(protection.commitTypes),
    commitScopes: strings(protection.commitScopes),
    checkCommitMessageFooter: protection.checkCommitMessageFooter === true,
    commitMessageFooterPattern: typeof protection.commitMessageFooterPattern === 'string' ? protection.commitMessageFooterPattern : null,
    commitTypesForFooterCheck: strings(protection.commitTypesForFooterCheck),
    maxCommitMessageLineLength: typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null,
  };
  return rule.enforceConventionalCommits || rule.maxCommitMessageLineLength !== null ? rule : null;
}

/** `<type>[(scope)][!]: <description>` or a git revert subject (OneDev's pattern, case-insensitive). */
const CONVENTIONAL_SUBJECT = /^(?:((\p{L}+)(\((\p{L}+(?:[-/ ]\p{L}+)*)\))?!?: [^ ].+)|(revert ".*"))$/iu;

/** Footer patterns compiled for the rules being checked (rules are made per check and go with it). */
const footerPatterns = new WeakMap<CommitMessageRule, UserRegex | null>();

/**
 * Whether the footer matches the rule's whole pattern, in linear time (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input); an
 * unusable pattern or a footer too long to check against it does not match.
 */
function footerMatches(rule: CommitMessageRule, footer: string): boolean {
  const pattern = rule.commitMessageFooterPattern;
  if (pattern === null) return false;
  let regex = footerPatterns.get(rule);
  if (regex === undefined) {
    try {
      regex = compileUserRegex(pattern);
    } catch {
      regex = null;
    }
    footerPatterns.set(rule, regex);
  }
  try {
    return regex !== null && regex.matches(footer);
  } catch {
    return false;
  }
}

/**
 * Checks one commit message against one rule (OneDev's BranchProtection.checkCommitMessage):
 * - conventional commits (non-merge commits only): the subject must be `<type>[(scope)][!]:
 *   <description>` or a git revert subject; the type and scope must be among the allowed ones;
 *   with the footer check (for the listed types, or all), the last line must be a footer matching
 *   the pattern, preceded by exactly one blank line;
 * - exactly one blank line between the subject and a body;
 * - no line longer than the limit.
 * Lines are compared trimmed.
 *
 * @returns the first violation, e.g. `Line 1: Unexpected type 'chore': Should be one of [feat,fix]`,
 *   or null when the message satisfies the rule.
 * @example checkCommitMessage(rule, 'feat(api): add users', false) → null
 */
export function checkCommitMessage(rule: CommitMessageRule, message: string, merge: boolean): string | null {
  const lines = message.split('\n').map((l) => l.trim());
  if (!merge && rule.enforceConventionalCommits) {
    const match = CONVENTIONAL_SUBJECT.exec(lines[0]);
    if (!match) {
      return 'Line 1: Subject is expected of either a git revert message, or format: <type>[optional (scope)][!]: <description>';
    }
    if (match[1] !== undefined) {
      const type = match[2];
      if (rule.commitTypes.length > 0 && !rule.commitTypes.includes(type)) {
        return `Line 1: Unexpected type '${type}': Should be one of [${rule.commitTypes.join(',')}]`;
      }
      const scope = match[4];
      if (scope !== undefined && rule.commitScopes.length > 0 && !rule.commitScopes.includes(scope)) {
        return `Line 1: Unexpected scope '${scope}': Should be one of [${rule.commitScopes.join(',')}]`;
      }
      if (rule.checkCommitMessageFooter && (rule.commitTypesForFooterCheck.length === 0 || rule.commitTypesForFooterCheck.includes(type))) {
        const size = lines.length;
        if (size < 3 || lines[size - 1].length === 0 || lines[size - 2].length !== 0 || lines[size - 3].length === 0) {
          return 'A footer is expected as last line and exactly one blank line should precede the footer';
        }
        if (!footerMatches(rule, lines[size - 1])) {
          return `Unexpected footer format: Should match pattern '${rule.commitMessageFooterPattern ?? ''}'`;
        }
      }
    }
  }
  for (let i = 1; i < lines.length; i++) {
    if (lines[i].length !== 0) {
      if (i !== 2) return 'One and only one blank line is expected between subject and body/footer';
      break;
    }
  }
  if (rule.maxCommitMessageLineLength !== null) {
    const max = rule.maxCommitMessageLineLength;
    const long = lines.findIndex((l) => l.length > max);
    if (long >= 0) return `Line ${long + 1}: Length exceeds ${max}`;
  }
  return null;
}

/**
 * Checks the commits a ref update brings against every rule (all must hold), newest commit
 * first as OneDev does: for a created ref only its head commit, otherwise the commits reachable
 * from `newHash` but not from `oldHash` (for a pull request: base..head).
 *
 * @param repo absolute path of the bare repository holding the commits.
 * @param rules the rules of the matching branch protections; none = nothing to check.
 * @param oldHash the commit the ref pointed to (or the pull request's base); null for a new ref.
 * @param newHash the new head commit.
 * @param env extra git environment (the push's quarantine).
 * @returns `Error validating commit message of <abbreviated hash>: <violation>` for the first
 *   violating commit, or null.
 * @throws GitError when a commit does not exist.
 * @see docs/compatibility.md#pull-requests-merge-checks item 8
 */
export async function checkCommitMessages(
  repo: string,
  rules: readonly CommitMessageRule[],
  oldHash: string | null,
  newHash: string,
  env: Record<string, string> = {},
): Promise<string | null> {
  if (rules.length === 0) return null;
  const commits = oldHash === null ? await commitMessages(repo, [newHash], [], { max: 1, env }) : await commitMessages(repo, [newHash], [oldHash], { env });
  let turn = performance.now();
  for (const commit of commits) {
    // a push may bring thousands of commits: let other requests run between checks
    if (performance.now() - turn > 10) {
      await nextTurn();
      turn = performance.now();
    }
    for (const rule of rules) {
      const violation = checkCommitMessage(rule, commit.message, commit.merge);
      if (violation !== null) return `Error validating commit message of ${commit.hash.slice(0, 7)}: ${violation}`;
    }
  }
  return null;
}
