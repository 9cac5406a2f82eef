/** Timestamps on the wire: ISO 8601 UTC with milliseconds. */
export function iso(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  return new Date(d).toISOString();
}
