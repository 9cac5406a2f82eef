/** Invoice due dates are calendar days (YYYY-MM-DD, UTC). Pure. */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date in YYYY-MM-DD form. */
export function isCalendarDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
}

/** An invoice is overdue from the end of its due date: the next day at 00:00 UTC (ms). */
export function overdueAt(dueDate: string): number {
  const m = DATE.exec(dueDate);
  if (!m) throw new Error(`not a due date: ${dueDate}`);
  return Date.UTC(+m[1], +m[2] - 1, +m[3] + 1);
}

/** The calendar day (UTC) of an instant plus `days`. */
export function dayAfter(instant: Date, days: number): string {
  const d = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate() + days));
  return d.toISOString().slice(0, 10);
}
