/** Model-level checks shared by services; each failure is a 422 with the field-errors map. */
import { ApiError } from '../../lib/errors';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email === '') throw ApiError.validation('email', "can't be blank");
  if (!EMAIL.test(email)) throw ApiError.validation('email', 'is invalid');
  return email;
}

export function requireNonBlank(field: string, raw: string): string {
  const v = raw.trim();
  if (v === '') throw ApiError.validation(field, "can't be blank");
  return v;
}

/** Optional free-text name fields: trimmed, empty becomes null. */
export function optionalText(raw: string | null | undefined): string | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === null) return null;
  const v = raw.trim();
  return v === '' ? null : v;
}
