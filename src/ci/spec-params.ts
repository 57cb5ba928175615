/**
 * Build-spec readers for job parameters (docs/compatibility.md#builds-build-spec "Param specs") and param
 * supplies (`jobParams` of dependencies and `!RunJobAction`, `params` of triggers). Used by
 * src/ci/build-spec.ts; problems are collected, not thrown.
 */
import { compileUserRegex, UserPatternError } from '../query/index.js';
import { asMap, MapReader, Problems, type SpecNode } from './spec-reader.js';
import type { ParamSpec, ParamSupply, ValuesProvider } from './spec-types.js';

const SUPPORTED_PARAMS = '!TextParam, !BooleanParam, !ChoiceParam';

function tagOf(node: SpecNode, where: string, problems: Problems): string | null {
  if (!node.tag) {
    problems.add(where, node, 'param spec needs a type tag such as !TextParam');
    return null;
  }
  return node.tag.slice(1);
}

/**
 * Reads one `paramSpecs` item (`!TextParam`, `!BooleanParam`, `!ChoiceParam`) with its default.
 * A TextParam `pattern` must compile as a user regular expression (src/query/user-patterns.ts:
 * RE2 syntax, at most 1,000 characters, bounded size), else a problem.
 *
 * @returns the spec, or null when it is unusable (problems recorded).
 */
export function readParamSpec(node: SpecNode, where: string, problems: Problems): ParamSpec | null {
  const type = tagOf(node, where, problems);
  if (!type) return null;
  const r = asMap(node, where, problems);
  if (!r) return null;
  const name = r.string('name', { required: true }) ?? '';
  const description = r.string('description');
  const allowEmpty = r.boolean('allowEmpty', false);
  r.ignore('showCondition');
  let spec: ParamSpec;
  switch (type) {
    case 'TextParam': {
      if (r.boolean('allowMultiple', false)) problems.add(where, node, 'a text param cannot allow multiple values');
      const pattern = r.string('pattern');
      if (pattern !== null) {
        try {
          compileUserRegex(pattern);
        } catch (error) {
          if (!(error instanceof UserPatternError)) throw error;
          problems.add(
            `${where} › pattern`,
            r.raw('pattern'),
            error.problem === 'invalid' ? `invalid regular expression '${pattern}'` : `regular expression ${error.reason}`,
          );
        }
      }
      const dflt = specifiedDefault(r, where, problems);
      spec = { type, name, description, allowMultiple: false, allowEmpty, defaultValue: dflt, pattern, multiline: r.boolean('multiline', false) };
      break;
    }
    case 'BooleanParam': {
      r.boolean('allowMultiple', false);
      const p = r.raw('defaultValueProvider');
      let dflt = 'false';
      if (p?.tag === '!TrueDefaultValue') dflt = 'true';
      else if (p && p.tag !== '!FalseDefaultValue') {
        problems.add(`${where} › defaultValueProvider`, p, 'expected !TrueDefaultValue {} or !FalseDefaultValue {}');
      }
      spec = { type, name, description, allowMultiple: false, allowEmpty: false, defaultValue: [dflt] };
      break;
    }
    case 'ChoiceParam': {
      const allowMultiple = r.boolean('allowMultiple', false);
      const choices = readChoices(r, where, problems);
      let dflt: string[] | null;
      if (allowMultiple) {
        r.ignore('defaultValueProvider');
        const p = r.raw('defaultMultiValueProvider');
        dflt = null;
        if (p) {
          const pr = p.tag === '!SpecifiedDefaultMultiValue' ? asMap(p, `${where} › defaultMultiValueProvider`, problems) : null;
          if (!pr) problems.add(`${where} › defaultMultiValueProvider`, p, 'expected !SpecifiedDefaultMultiValue {value: [...]}');
          else {
            dflt = pr.list('value').map((v) => (v.kind === 'scalar' ? v.text : ''));
            pr.finish();
          }
        }
      } else {
        r.ignore('defaultMultiValueProvider');
        dflt = specifiedDefault(r, where, problems);
      }
      for (const v of dflt ?? []) {
        if (!choices.includes(v)) problems.add(where, node, `default value '${v}' is not one of the choices`);
      }
      spec = { type, name, description, allowMultiple, allowEmpty, defaultValue: dflt, choices };
      break;
    }
    default:
      problems.add(where, node, `unsupported param type '!${type}' (supported: ${SUPPORTED_PARAMS})`);
      return null;
  }
  r.finish();
  return spec;
}

function specifiedDefault(r: MapReader, where: string, problems: Problems): string[] | null {
  const p = r.raw('defaultValueProvider');
  if (!p) return null;
  const pr = p.tag === '!SpecifiedDefaultValue' ? asMap(p, `${where} › defaultValueProvider`, problems) : null;
  if (!pr) {
    problems.add(`${where} › defaultValueProvider`, p, 'expected !SpecifiedDefaultValue {value: ...}');
    return null;
  }
  const value = pr.string('value', { required: true });
  pr.finish();
  return value === null ? null : [value];
}

function readChoices(r: MapReader, where: string, problems: Problems): string[] {
  const p = r.raw('choiceProvider');
  const w = `${where} › choiceProvider`;
  const pr = p && p.tag === '!SpecifiedChoices' ? asMap(p, w, problems) : null;
  if (!pr) {
    problems.add(w, p ?? r.node, 'expected !SpecifiedChoices {choices: [{value: ...}]}');
    return [];
  }
  const choices = pr.list('choices').flatMap((n, i) => {
    const cr = asMap(n, `${w} › choices[${i}]`, problems);
    if (!cr) return [];
    const v = cr.string('value', { required: true });
    cr.ignore('color');
    cr.finish();
    return v === null ? [] : [v];
  });
  pr.finish();
  if (choices.length === 0) problems.add(w, p ?? r.node, 'at least one choice is required');
  return choices;
}

/**
 * Reads a list of param supplies (`{name, secret, valuesProvider}`) under `key`. Secret names
 * of `secret: true` specified values are added to `secrets`.
 *
 * @param allowPassthrough whether `!PassthroughValues` is allowed (dependencies and actions).
 */
export function readSupplies(r: MapReader, key: string, where: string, problems: Problems, secrets: Set<string>, allowPassthrough: boolean): ParamSupply[] {
  const result: ParamSupply[] = [];
  r.list(key).forEach((n, i) => {
    const w = `${where} › ${key}[${i}]`;
    const pr = asMap(n, w, problems);
    if (!pr) return;
    const name = pr.string('name', { required: true });
    const secret = pr.boolean('secret', false);
    const vp = pr.raw('valuesProvider');
    let valuesProvider: ValuesProvider | null = null;
    if (!vp) problems.add(w, n, "'valuesProvider' is required");
    else if (vp.tag === '!SpecifiedValues') {
      const vr = asMap(vp, `${w} › valuesProvider`, problems);
      if (vr) {
        const values = vr
          .list('values')
          .map((item) => (item.kind === 'seq' ? item.items.map((v) => (v.kind === 'scalar' ? v.text : '')) : item.kind === 'scalar' ? [item.text] : []));
        vr.finish();
        valuesProvider = { type: 'SpecifiedValues', values };
        if (secret) for (const set of values) for (const v of set) secrets.add(v);
      }
    } else if (vp.tag === '!PassthroughValues' && allowPassthrough) {
      const vr = asMap(vp, `${w} › valuesProvider`, problems);
      const paramName = vr?.string('paramName', { required: true });
      vr?.finish();
      if (paramName) valuesProvider = { type: 'PassthroughValues', paramName };
    } else if (vp.tag === '!Ignore') {
      valuesProvider = { type: 'Ignore' };
    } else {
      problems.add(
        `${w} › valuesProvider`,
        vp,
        `unsupported values provider '${vp.tag ?? '(no tag)'}' (supported: !SpecifiedValues${allowPassthrough ? ', !PassthroughValues' : ''}, !Ignore)`,
      );
    }
    pr.finish();
    if (name === null || !valuesProvider) return;
    if (result.some((s) => s.name === name)) problems.add(w, n, `param '${name}' is supplied twice`);
    result.push({ name, secret, valuesProvider });
  });
  return result;
}
