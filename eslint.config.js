// The dependency rules of docs/architecture.md#dependency-rules, checked: http → domain → db | git | ci | query | wire;
// src/ops (health, metrics, backup) sits beside domain and never imports http.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const layer = (files, forbidden, more = []) => ({
  files,
  rules: {
    'no-restricted-imports': ['error', {
      patterns: [
        ...forbidden.map((area) => ({
          group: [`**/${area}/*`, `**/${area}/**`, `**/${area}.js`],
          message: `${files[0].split('/')[1]} may not depend on src/${area} (docs/architecture.md#dependency-rules).`,
        })),
        ...more,
      ],
    }],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/query/query-parser.generated.ts'] },
  // the recommended rules of ESLint and typescript-eslint
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // the web UI's client modules run in the browser
  { files: ['src/web/assets/**/*.js'], languageOptions: { globals: globals.browser } },
  {
    rules: {
      // Kysely's builders over tables chosen at run time (ExpressionBuilder<any, any> of the query
      // languages, the personalization tables, migrations seeing the database as it was then)
      // are typed with `any` by Kysely's own convention
      '@typescript-eslint/no-explicit-any': 'off',
      // input checks refuse control characters on purpose (ref names, paths, git log values)
      'no-control-regex': 'off',
      // `{ dropped, ...rest }` leaves a field out of a copy
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  // routes call domain functions only: no SQL, git or CI work of their own; the API and the
  // pages share src/plugins, never each other (src/app.ts registers both)
  layer(['src/http/**/*.ts'], ['db', 'git', 'ci', 'web']),
  layer(['src/plugins/**/*.ts'], ['db', 'git', 'ci', 'http', 'web']),
  // domain functions take dates as epoch milliseconds: reading the wire's date formats is the routes' work
  layer(['src/domain/**/*.ts'], ['http'], [{
    group: ['**/wire/dates.js'], importNames: ['fromWireDate'],
    message: 'domain inputs are not wire formats: the route reads the date (docs/architecture.md#dependency-rules).',
  }]),
  layer(['src/db/**/*.ts'], ['domain', 'http']),
  layer(['src/git/**/*.ts'], ['domain', 'http']),
  layer(['src/ci/**/*.ts'], ['domain', 'http']),
  layer(['src/query/**/*.ts'], ['domain', 'http']),
  layer(['src/wire/**/*.ts'], ['domain', 'http']),
  // pages call domain functions only, like the API's routes
  layer(['src/web/**/*.ts', 'src/web/**/*.tsx'], ['db', 'git', 'ci', 'http']),
  layer(['src/ops/**/*.ts'], ['http']),
);
