/**
 * CSV (RFC 4180): comma-separated, CRLF line ends, a field quoted when it holds a comma, a quote
 * or a line break. A text field starting with `=`, `+`, `-` or `@` (and not a number) gets a
 * leading `'`, so a spreadsheet does not run it as a formula.
 */
export type CsvValue = string | number | boolean | null | undefined;

const NUMBER = /^-?\d+(\.\d+)?$/;

export function csvField(v: CsvValue): string {
  if (v === null || v === undefined) return '';
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s) && !NUMBER.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(header: readonly string[], rows: readonly CsvValue[][]): string {
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}
