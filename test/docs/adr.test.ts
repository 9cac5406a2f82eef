/**
 * The decision records in docs/adr: each in the conventional form, statuses that point at live
 * records, an index that lists every record and links only to files that exist, and no names of
 * work items (the records say what holds and why, not which piece of work decided it).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectPath } from '../../src/lib/projectRoot';

const DIR = projectPath('docs', 'adr');
const INDEX = 'README.md';
const TEMPLATE = '0000-template.md';
/** A record's file: its number, then a short title in lowercase words joined by hyphens. */
const RECORD_FILE = /^\d{4}-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;
const SECTIONS = ['Status', 'Context', 'Decision', 'Consequences'];
const STATUS = /^(?:Accepted|Superseded by \[(\d{4})\]\(((\d{4})-[a-z0-9-]+\.md)\))$/;
const WORK_ITEM = [/\bissue\s*#?\d+/i, /\bthis session\b/i];

interface AdrRecord {
  file: string;
  number: string;
  title: string;
  status: string;
  /** The file of the record that replaced this one, when superseded. */
  supersededBy: string | null;
  sections: string[];
  text: string;
}

const read = (file: string) => readFileSync(path.join(DIR, file), 'utf8');
const recordFiles = () => readdirSync(DIR).filter((f) => /^\d{4}-.*\.md$/.test(f) && f !== TEMPLATE).sort();

function parse(file: string): AdrRecord {
  const text = read(file);
  const lines = text.split('\n');
  const heading = /^# (\d{4})\. (\S.*)$/.exec(lines[0]);
  const statusAt = lines.indexOf('## Status');
  const statusLine = statusAt < 0 ? '' : (lines.slice(statusAt + 1).find((l) => l.trim() !== '') ?? '');
  const status = STATUS.exec(statusLine);
  return {
    file,
    number: heading?.[1] ?? '',
    title: heading?.[2] ?? '',
    status: statusLine,
    supersededBy: status?.[2] ?? null,
    sections: lines.filter((l) => l.startsWith('## ')).map((l) => l.slice(3)),
    text,
  };
}

const records = () => recordFiles().map(parse);

/** The index's table rows: `| [NNNN](file) | title | status |`. */
function indexRows(): { number: string; file: string; title: string; status: string }[] {
  return read(INDEX)
    .split('\n')
    .map((l) => /^\| \[(\d{4})\]\(([^)]+)\) \| (.+?) \| (.+) \|$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ number: m[1], file: m[2], title: m[3], status: m[4] }));
}

describe('decision records (docs/adr)', () => {
  it('exist, with the template beside them', () => {
    expect(existsSync(path.join(DIR, TEMPLATE))).toBe(true);
    expect(recordFiles().length).toBeGreaterThan(50);
  });

  it('each has a "# NNNN. Title" heading with its file number, the four sections in order, and a Status line', () => {
    const wrong = records().flatMap((r) => {
      const problems: string[] = [];
      if (!RECORD_FILE.test(r.file)) problems.push('file name is not "NNNN-short-title.md"');
      if (r.number !== r.file.slice(0, 4) || !r.title) problems.push('heading is not "# <its number>. <title>"');
      if (JSON.stringify(r.sections) !== JSON.stringify(SECTIONS)) problems.push(`sections are ${JSON.stringify(r.sections)}`);
      if (!STATUS.test(r.status)) problems.push(`status line is "${r.status}"`);
      return problems.map((p) => `${r.file}: ${p}`);
    });
    expect(wrong).toEqual([]);
  });

  it('have unique numbers', () => {
    const numbers = recordFiles().map((f) => f.slice(0, 4));
    expect(numbers.filter((n, i) => numbers.indexOf(n) !== i)).toEqual([]);
  });

  it('a superseded record links to an existing record that is not superseded by it, and its chain ends in an accepted one', () => {
    const byFile = new Map(records().map((r) => [r.file, r]));
    const wrong: string[] = [];
    for (const r of byFile.values()) {
      if (!r.supersededBy) continue;
      const [, linkedNumber] = STATUS.exec(r.status)!;
      const next = byFile.get(r.supersededBy);
      if (!next) wrong.push(`${r.file}: superseded by ${r.supersededBy}, which is not a record`);
      else if (linkedNumber !== next.number) wrong.push(`${r.file}: link text ${linkedNumber} names another record than ${next.file}`);
      else if (next.file === r.file || next.supersededBy === r.file) wrong.push(`${r.file}: superseded by ${next.file}, which is superseded by it`);
      else {
        const seen = new Set([r.file]);
        let at: AdrRecord | undefined = next;
        while (at?.supersededBy && !seen.has(at.file)) {
          seen.add(at.file);
          at = byFile.get(at.supersededBy);
        }
        if (!at || at.status !== 'Accepted') wrong.push(`${r.file}: its chain of replacements ends in ${at?.file ?? 'a missing record'}, not an accepted record`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('are each listed once in the index, with their title and status', () => {
    const rows = indexRows();
    const wrong: string[] = [];
    for (const r of records()) {
      const listed = rows.filter((row) => row.file === r.file);
      if (listed.length !== 1) wrong.push(`${r.file}: listed ${listed.length} times`);
      else if (listed[0].number !== r.number || listed[0].title !== r.title || listed[0].status !== r.status) {
        wrong.push(`${r.file}: index row ${JSON.stringify(listed[0])} differs from the record`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the index links only to files that exist', () => {
    const links = [...read(INDEX).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/i.test(l));
    expect(links.length).toBeGreaterThan(50);
    expect(links.filter((l) => !existsSync(path.resolve(DIR, l)))).toEqual([]);
  });

  it('name no work items', () => {
    const files = [INDEX, TEMPLATE, ...recordFiles()];
    const found = files.flatMap((f) => {
      const text = read(f);
      return WORK_ITEM.flatMap((re) => {
        const m = re.exec(text);
        return m ? [`${f}: "${m[0]}"`] : [];
      });
    });
    expect(found).toEqual([]);
  });
});
