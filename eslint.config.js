// The dependency rule of ARCHITECTURE.md, checked: http → domain → db | git | ci | query | wire.
import tseslint from 'typescript-eslint';

const layer = (files, forbidden) => ({
  files,
  rules: {
    'no-restricted-imports': ['error', {
      patterns: forbidden.map((area) => ({
        group: [`**/${area}/*`, `**/${area}/**`, `**/${area}.js`],
        message: `${files[0].split('/')[1]} may not depend on src/${area} (ARCHITECTURE.md "Layers").`,
      })),
    }],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/query/query-parser.generated.ts'] },
  { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
  layer(['src/domain/**/*.ts'], ['http']),
  layer(['src/db/**/*.ts'], ['domain', 'http']),
  layer(['src/git/**/*.ts'], ['domain', 'http']),
  layer(['src/ci/**/*.ts'], ['domain', 'http']),
  layer(['src/query/**/*.ts'], ['domain', 'http']),
  layer(['src/wire/**/*.ts'], ['domain', 'http']),
);
