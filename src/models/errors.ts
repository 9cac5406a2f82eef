/** True for a unique-index violation (MongoDB and FerretDB both answer code 11000). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}
