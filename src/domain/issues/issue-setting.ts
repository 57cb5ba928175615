import { BadRequest } from '../../errors.js';
import type { Db } from '../../db/database.js';
import { findUserIdByName } from '../users/index.js';

/**
 * The issue setting of a fresh install (docs/compatibility.md#issues-default-settings): states in order,
 * the built-in fields and the default transitions.
 */
export const ISSUE_STATES = ['Open', 'Closed'] as const;
/** The initial state of new issues. */
export const INITIAL_STATE = ISSUE_STATES[0];
/** The state a fixing commit on the default branch moves an open issue to. */
export const CLOSED_STATE = 'Closed';

/** Index of a state in the state list, or -1 (docs/compatibility.md#issues `stateOrdinal`). */
export function stateOrdinal(state: string): number {
  return (ISSUE_STATES as readonly string[]).indexOf(state);
}

/** Canonical spelling of a state name given in any case; BadRequest when there is no such state. */
export function canonicalState(name: string): string {
  const state = ISSUE_STATES.find((s) => s.toLowerCase() === name.trim().toLowerCase());
  if (!state) throw new BadRequest(`Undefined state: ${name}`);
  return state;
}

export type IssueFieldType = 'Enumeration' | 'User' | 'Build';

/** A field of the issue setting. */
export interface IssueFieldSpec {
  name: string;
  type: IssueFieldType;
  /** Choice values of an enumeration (their index is the value's ordinal). */
  choices: readonly string[];
  multiple: boolean;
  /** Applied on create when the field is not given. */
  defaultValue: string | null;
}

/** The fields of a fresh install (docs/compatibility.md#issues-default-settings). */
export const ISSUE_FIELDS: readonly IssueFieldSpec[] = [
  { name: 'Type', type: 'Enumeration', choices: ['New Feature', 'Improvement', 'Bug', 'Task', 'Build Failure'], multiple: false, defaultValue: 'New Feature' },
  { name: 'Priority', type: 'Enumeration', choices: ['Minor', 'Normal', 'Major', 'Critical'], multiple: false, defaultValue: 'Normal' },
  { name: 'Assignees', type: 'User', choices: [], multiple: true, defaultValue: null },
  { name: 'Failed Build', type: 'Build', choices: [], multiple: false, defaultValue: null },
];

/** The field spec named `name` (exact, as OneDev's lookups are). */
export function fieldSpec(name: string): IssueFieldSpec | undefined {
  return ISSUE_FIELDS.find((f) => f.name === name);
}

/** A stored field value: one row of `issue_fields`. */
export interface FieldValueRow {
  name: string;
  value: string | null;
  type: string;
  ordinal: number;
}

/**
 * Validates `{name: value}` field input (value: a string, a list of strings for multi-value
 * fields, or null to clear) against the issue setting and turns it into rows: enumeration values
 * must be choices (ordinal = choice index); user values are existing login names (stored
 * lower-case); build values are build numbers. Throws BadRequest naming the field: an unknown
 * field (`Field not found: X`), an invalid value, several values for a single-value field.
 * Returns the rows per field name (an empty list clears the field).
 */
export async function fieldRows(db: Db, input: Record<string, unknown>): Promise<Map<string, FieldValueRow[]>> {
  const result = new Map<string, FieldValueRow[]>();
  for (const [name, raw] of Object.entries(input)) {
    const spec = fieldSpec(name);
    if (!spec) throw new BadRequest(`Field not found: ${name}`);
    const values = raw === null || raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    if (values.some((v) => typeof v !== 'string' || v.trim() === '')) throw new BadRequest(`Invalid value for field '${name}'`);
    const strings = [...new Set((values as string[]).map((v) => v.trim()))];
    if (!spec.multiple && strings.length > 1) throw new BadRequest(`Field '${name}' takes a single value`);
    const rows: FieldValueRow[] = [];
    for (const value of strings) {
      if (spec.type === 'Enumeration') {
        const ordinal = spec.choices.indexOf(value);
        if (ordinal < 0) throw new BadRequest(`Invalid value for field '${name}': ${value}`);
        rows.push({ name, value, type: spec.type, ordinal });
      } else if (spec.type === 'User') {
        const login = value.toLowerCase();
        if ((await findUserIdByName(db, login)) === undefined) throw new BadRequest(`Unable to find user with login: ${value}`);
        rows.push({ name, value: login, type: spec.type, ordinal: -1 });
      } else {
        if (!/^#?\d+$/.test(value)) throw new BadRequest(`Invalid value for field '${name}': ${value}`);
        rows.push({ name, value: value.replace(/^#/, ''), type: spec.type, ordinal: -1 });
      }
    }
    result.set(name, rows);
  }
  return result;
}
