/**
 * Citations of the project's docs (docs/architecture.md#layers): every `docs/<name>.md` and
 * `docs/<name>.md#<anchor>` that code, tests, scripts and benchmarks cite names a file of docs/
 * and, with an anchor, one of its headings; links between the docs resolve the same way; and
 * nothing cites the design notes that are not in the repository. Anchors follow GitHub's rule for headings (no slugger library is installed, so
 * the rule is written out in `slug` below, as github-slugger implements it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { marked, type Token } from 'marked';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCANNED = ['src', 'test', 'scripts', 'bench'];
const TEXT_FILE = /\.(ts|tsx|js|mjs|cjs|py|sh|css|peggy)$/;
const THIS_FILE = path.relative(ROOT, import.meta.filename);

/**
 * A citation: `docs/<name>.md`, optionally `#<anchor>`, standing on its own — not the tail of a
 * longer path, not a quoted file name (test data), not a markdown link target (test data).
 */
const CITATION = /(?<![\w/.'"`-])(?<!\]\()docs\/([\w.-]+\.md)(?:#([\w-]+))?/g;
/** The design notes that lived outside the repository, in each form the code used to cite them. */
const OUT_OF_REPO = /\b(?:ARCHITECTURE|CONTRACT|STYLE)\.md\b|\bCONTRACT §|(?<![\w/.-])reference\/[a-z-]+\.md\b|\b(?:[Rr]eference|seed) §\d/g;

/** GitHub's anchor of a heading text: lower case, punctuation and symbols dropped, spaces to `-`. */
function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The plain text of inline tokens, as the rendered heading shows it. */
function plainText(tokens: Token[]): string {
  return tokens.map((t) => ('tokens' in t && t.tokens ? plainText(t.tokens) : 'text' in t ? String(t.text) : '')).join('');
}

/** The anchors of a markdown file's headings; repeated headings get `-1`, `-2`, … as on GitHub. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const token of marked.lexer(markdown)) {
    if (token.type !== 'heading') continue;
    const base = slug(plainText(token.tokens ?? []));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

function* files(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else if (TEXT_FILE.test(entry.name)) yield full;
  }
}

interface Hit {
  where: string;
  text: string;
  file: string;
  anchor: string | undefined;
}

/** Every citation and every out-of-repository citation in the scanned folders, with its place. */
function scan(): { hits: Hit[]; stale: string[] } {
  const hits: Hit[] = [];
  const stale: string[] = [];
  for (const top of SCANNED) {
    for (const full of files(path.join(ROOT, top))) {
      const rel = path.relative(ROOT, full);
      if (rel === THIS_FILE) continue;
      fs.readFileSync(full, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const where = `${rel}:${i + 1}`;
          for (const m of line.matchAll(CITATION)) hits.push({ where, text: m[0], file: m[1], anchor: m[2] });
          for (const m of line.matchAll(OUT_OF_REPO)) stale.push(`${where}: ${m[0]}`);
        });
    }
  }
  return { hits, stale };
}

describe('citations of docs/', () => {
  const { hits, stale } = scan();

  it('finds the citations it checks', () => {
    const cited = new Set(hits.map((h) => h.file));
    expect(cited).toContain('architecture.md');
    expect(cited).toContain('compatibility.md');
  });

  it('cites only files and headings that exist', () => {
    const headings = new Map<string, Set<string> | null>();
    const broken: string[] = [];
    for (const hit of hits) {
      if (!headings.has(hit.file)) {
        const doc = path.join(ROOT, 'docs', hit.file);
        headings.set(hit.file, fs.existsSync(doc) ? anchors(fs.readFileSync(doc, 'utf8')) : null);
      }
      const known = headings.get(hit.file);
      if (!known) broken.push(`${hit.where}: ${hit.text} (no such file)`);
      else if (hit.anchor !== undefined && !known.has(hit.anchor)) broken.push(`${hit.where}: ${hit.text} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });

  it('cites none of the notes kept outside the repository', () => {
    expect(stale).toEqual([]);
  });

  it('links inside docs/ to files and headings that exist', () => {
    const broken: string[] = [];
    const docsDir = path.join(ROOT, 'docs');
    const headingsOf = new Map<string, Set<string>>();
    const headings = (file: string) => headingsOf.get(file) ?? headingsOf.set(file, anchors(fs.readFileSync(file, 'utf8'))).get(file)!;
    for (const name of fs.readdirSync(docsDir).filter((n) => n.endsWith('.md'))) {
      marked.walkTokens(marked.lexer(fs.readFileSync(path.join(docsDir, name), 'utf8')), (token) => {
        if (token.type !== 'link' || /^[a-z]+:|^\//i.test(token.href)) return;
        const [file, anchor] = token.href.split('#');
        const target = path.join(docsDir, file || name);
        if (!fs.existsSync(target)) broken.push(`docs/${name}: ${token.href} (no such file)`);
        else if (anchor && !headings(target).has(anchor)) broken.push(`docs/${name}: ${token.href} (no such heading)`);
      });
    }
    expect(broken).toEqual([]);
  });

  it('computes anchors as GitHub does', () => {
    expect([
      ...anchors('# Platform: URLs and requests\n## Gitloom differs: SSH and LFS\n### `code` and *emphasis*\n## Fixed-issue references\n## Git\n## Git\n'),
    ]).toEqual(['platform-urls-and-requests', 'gitloom-differs-ssh-and-lfs', 'code-and-emphasis', 'fixed-issue-references', 'git', 'git-1']);
  });
});
