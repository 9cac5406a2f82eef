/**
 * The README and docs/ stay true to the code: every relative link resolves (to a file, and an
 * `#anchor` to a heading of that file), every variable src/config reads has a row in
 * docs/configuration.md, the README stays a short guide, and the commands, API paths and source
 * paths the pages name exist. Pure file reads: no server.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { CONFIG_VARIABLES } from '../../src/config';
import { openapiDocument } from '../../src/api/openapi/document';

const ROOT = join(__dirname, '..', '..');
const README_MAX_LINES = 250;

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : path.endsWith('.md') ? [path] : [];
  });
}

/** README.md and every page under docs/, as absolute paths; templates (placeholders by design) left out. */
function documents(): string[] {
  return [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))].filter((path) => !/template/i.test(path.split('/').pop()!));
}

const read = (path: string) => readFileSync(path, 'utf8');
const rel = (path: string) => relative(ROOT, path);

/** The text with fenced code blocks blanked (their lines kept, so line numbers stay right). */
export function withoutFences(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const m = /^\s*(```+|~~~+)/.exec(line);
      if (m && (fence === null || m[1].startsWith(fence))) {
        fence = fence === null ? m[1] : null;
        return '';
      }
      return fence === null ? line : '';
    })
    .join('\n');
}

/** GitHub's anchor of a heading: inline markup dropped, lowercased, punctuation removed, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*~]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a markdown text defines: its headings (repeats numbered as GitHub does) and explicit ids. */
export function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) found.add(m[1]);
  return found;
}

/** Inline link targets of a markdown text (outside code), with their line numbers. */
export function linkTargets(text: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  withoutFences(text)
    .split('\n')
    .forEach((line, i) => {
      const prose = line.replace(/`[^`]*`/g, '');
      for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1], line: i + 1 });
      const ref = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(prose);
      if (ref) out.push({ target: ref[1], line: i + 1 });
    });
  return out;
}

/** Why a relative link of `file` does not resolve, or null when it does (absolute URLs are not followed). */
const SHARED_SPEC = resolve(ROOT, '..', 'shared', 'spec');

export function brokenLink(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null;
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
  if (relative(ROOT, path).startsWith('..')) {
    // The contract sits beside the checkout (../shared/spec), not in it: links may leave the
    // repository only for it, and are checked only where it is there (not in a clone elsewhere).
    if (!path.startsWith(SHARED_SPEC + sep)) return `${target}: outside the repository`;
    if (!existsSync(SHARED_SPEC)) return null;
  }
  if (!existsSync(path)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return null;
  if (!path.endsWith('.md')) return null;
  return anchors(read(path)).has(anchor.toLowerCase()) ? null : `${target}: no heading #${anchor} in ${rel(path)}`;
}

/** Variables src/config reads: the exported list, and every `(env, 'NAME'` read in its sources. */
function configVariables(): { all: Set<string>; scanned: Set<string> } {
  const dir = join(ROOT, 'src', 'config');
  const scanned = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = read(join(dir, file));
    for (const m of text.matchAll(/\(\s*env\s*,\s*['"]([A-Z][A-Z0-9_]*)['"]/g)) scanned.add(m[1]);
    for (const m of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g)) scanned.add(m[1] ?? m[2]);
  }
  return { all: new Set([...CONFIG_VARIABLES, ...scanned]), scanned };
}

/** The variables a configuration page documents: backticked names in the first cell of its table rows. */
export function documentedVariables(page: string): Set<string> {
  const names = new Set<string>();
  for (const m of page.matchAll(/^\|([^|\n]*)\|/gm)) for (const v of m[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(v[1]);
  return names;
}

/** Shell commands of a text, continuation lines joined. */
function commands(text: string): string[] {
  return text.replace(/\\\n\s*/g, ' ').split('\n');
}

/** `npm start`, `npm test` and `npm run [--silent] <script>` named anywhere in a text. */
export function npmScripts(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/\bnpm (?:run(?:\s+--silent)?\s+([a-z][\w:-]*)|(start|test)\b)/g)) names.add(m[1] ?? m[2]);
  return names;
}

/** `cli -- <group> <action>` commands named in a text. */
function cliCommands(text: string): Set<string> {
  return new Set([...text.matchAll(/\bcli -- ([a-z-]+) ([a-z-]+)/g)].map((m) => `${m[1]} ${m[2]}`));
}

/**
 * The API calls of curl commands in a text: method and path under /v1, for `localhost:<port>/v1/...`
 * and the tour's `$API/...` (API=localhost:3000/v1). A `$VAR`, `…` or `<...>` segment stands for an id.
 */
export function curlCalls(text: string): { method: string; path: string; command: string }[] {
  const calls: { method: string; path: string; command: string }[] = [];
  for (const command of commands(text)) {
    if (!/\bcurl\b/.test(command)) continue;
    for (const m of command.matchAll(/(?:localhost:\d+\/v1|\$API)(\/[^\s'"?)]*)/g)) {
      const explicit = /\s-X\s*([A-Z]+)/.exec(command);
      const method = explicit ? explicit[1] : /\s(?:-d|--data(?:-raw)?)\s/.test(command) ? 'POST' : 'GET';
      calls.push({ method, path: m[1].replace(/\/+$/, ''), command: command.trim() });
    }
  }
  return calls;
}

function matchesTemplate(path: string, template: string): boolean {
  const a = path.split('/');
  const b = template.split('/');
  if (a.length !== b.length) return false;
  return a.every((seg, i) => seg === b[i] || (/^\{.+\}$/.test(b[i]) && seg !== ''));
}

/** Repository paths written as inline code under the repository's folders (`src/...`, `test/...`, ...), without placeholders. */
export function repoPaths(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of withoutFences(text).matchAll(/`([^`\n]+)`/g)) {
    const span = m[1].trim().replace(/:$/, '');
    if (!/^(src|test|scripts|deploy|bench|faults|docs|\.ci)\/[\w./-]*$/.test(span)) continue;
    out.add(span);
  }
  return out;
}

/** The recipes' example resource and workflow (docs/architecture.md), which are not meant to exist. */
const RECIPE_EXAMPLE = /refund/i;

describe('README and docs/', () => {
  const docs = documents();

  it('finds the pages it checks', () => {
    const names = docs.map(rel);
    expect(names).toEqual(expect.arrayContaining(['README.md', 'docs/configuration.md', 'docs/operations.md', 'docs/storage.md', 'docs/architecture.md']));
  });

  it('every relative link resolves to a file, and every #anchor into a markdown file to a heading of it', () => {
    const broken = docs.flatMap((file) =>
      linkTargets(read(file)).flatMap(({ target, line }) => {
        const why = brokenLink(file, target);
        return why === null ? [] : [`${rel(file)}:${line}: ${why}`];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('the link check finds links, anchors and breaks (checked on a sample)', () => {
    const sample = join(ROOT, 'docs', 'sample.md');
    expect(linkTargets('[a](configuration.md#metrics) `[b](x.md)`\n```\n[c](y.md)\n```\n[d]: other.md').map((l) => l.target)).toEqual(['configuration.md#metrics', 'other.md']);
    expect(brokenLink(sample, 'operations.md#metrics')).toBeNull();
    expect(brokenLink(sample, 'operations.md#no-such-heading')).toMatch(/no heading/);
    expect(brokenLink(sample, 'no-such-page.md')).toMatch(/no such file/);
    expect(brokenLink(sample, 'https://example.com/nowhere')).toBeNull();
    expect(slug("FerretDB's pool: 400 connections")).toBe('ferretdbs-pool-400-connections');
    expect(slug('Runtimes: Node and `Deno`')).toBe('runtimes-node-and-deno');
    expect([...anchors('# A\n## A\n```\n# not a heading\n```')]).toEqual(['a', 'a-1']);
  });

  it('every environment variable src/config reads has a row in docs/configuration.md', () => {
    const { all, scanned } = configVariables();
    // The scan of the sources works: it finds variables read through each kind of helper.
    expect([...scanned]).toEqual(expect.arrayContaining(['PORT', 'MONGODB_URI', 'TEMPORAL_TLS_CERT', 'TEMPORAL_UI_URL', 'WORKER_WORKFLOW_THREADS']));
    const documented = documentedVariables(read(join(ROOT, 'docs', 'configuration.md')));
    expect([...all].filter((v) => !documented.has(v)).sort()).toEqual([]);
  });

  it(`README.md is a guide of at most ${README_MAX_LINES} lines`, () => {
    const lines = read(join(ROOT, 'README.md')).replace(/\n$/, '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('the README opens with the two commands, npm start and npm test', () => {
    const readme = read(join(ROOT, 'README.md'));
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock.split('\n').slice(0, 2).map((l) => l.split(/\s+#/)[0].trim())).toEqual(['npm start', 'npm test']);
  });

  it('every npm script the pages name is in package.json', () => {
    const scripts = (JSON.parse(read(join(ROOT, 'package.json'))) as { scripts: Record<string, string> }).scripts;
    const named = docs.flatMap((file) => [...npmScripts(read(file))].map((name) => ({ file: rel(file), name })));
    expect(named.map((n) => n.name)).toEqual(expect.arrayContaining(['start', 'test', 'cli', 'bench']));
    expect(named.filter((n) => !(n.name in scripts))).toEqual([]);
  });

  it('every CLI command the pages name is one the CLI has', () => {
    const cli = read(join(ROOT, 'src', 'cli', 'index.ts'));
    const named = docs.flatMap((file) => [...cliCommands(read(file))].map((command) => ({ file: rel(file), command })));
    expect(named.map((n) => n.command)).toEqual(expect.arrayContaining(['accounts create']));
    expect(named.filter((n) => !cli.includes(`cli ${n.command}`))).toEqual([]);
  });

  it('every API call of a curl command in the pages (the tour included) is an operation of the API', () => {
    const paths = (openapiDocument() as { paths: Record<string, Record<string, unknown>> }).paths;
    const calls = docs.flatMap((file) => curlCalls(read(file)).map((c) => ({ file: rel(file), ...c })));
    const tour = curlCalls(read(join(ROOT, 'README.md'))).map((c) => `${c.method} ${c.path}`);
    // The tour's steps: a token, a customer, an invoice, an address, a payment, the paid invoice, a webhook endpoint.
    expect(tour).toEqual(
      expect.arrayContaining(['POST /auth', 'POST /customers', 'POST /invoices', 'POST /crypto_addresses', 'POST /crypto_transactions', 'GET /invoices/$INV', 'POST /webhook_endpoints']),
    );
    const unknown = calls.filter(({ method, path }) => {
      const normalized = path
        .split('/')
        .map((seg) => (/^\$|…|^<.*>$/.test(seg) ? '{id}' : seg))
        .join('/');
      return !Object.entries(paths).some(([template, ops]) => matchesTemplate(normalized, template) && method.toLowerCase() in ops);
    });
    expect(unknown.map((c) => `${c.file}: ${c.method} ${c.path}`)).toEqual([]);
  });

  it('every repository path the pages name in code exists', () => {
    const missing = docs.flatMap((file) =>
      [...repoPaths(read(file))].filter((p) => !RECIPE_EXAMPLE.test(p) && !existsSync(join(ROOT, p))).map((p) => `${rel(file)}: ${p}`),
    );
    expect(missing).toEqual([]);
  });
});
