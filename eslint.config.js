// The dependency rules of docs/architecture.md#dependency-rules, checked: http → domain → db | git | ci | query | wire;
// src/ops (health, metrics, backup) sits beside domain and never imports http.
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
  { files: ['**/*.ts', '**/*.tsx'], languageOptions: { parser: tseslint.parser } },
  // routes call domain functions only: no SQL, git or CI work of their own
  layer(['src/http/**/*.ts'], ['db', 'git', 'ci']),
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
  layer(['src/web/**/*.ts', 'src/web/**/*.tsx'], ['db', 'git', 'ci']),
  layer(['src/ops/**/*.ts'], ['http']),
);
