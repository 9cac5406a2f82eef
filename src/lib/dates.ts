/** Parsing of dates and instants given in API input: the one place their formats are checked. */
import { ApiError } from './errors';

const DATE_TIME_PREFIX = /^\d{4}-\d{2}-\d{2}T/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** An ISO 8601 date-time (`YYYY-MM-DDT...`); a 400 on `param` otherwise. */
export function parseDateTime(value: string, param: string): Date {
  const d = new Date(value);
  if (!DATE_TIME_PREFIX.test(value) || Number.isNaN(d.getTime())) throw ApiError.validation(param, 'must be an ISO 8601 date-time');
  return d;
}

/** `YYYY-MM-DD` (midnight UTC) or a full ISO 8601 instant; a 400 on `param` otherwise. */
export function parseInstant(value: string, param: string): Date {
  const ok = DATE_ONLY.test(value) || ISO.test(value);
  const d = new Date(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  if (!ok || Number.isNaN(d.getTime()) || (DATE_ONLY.test(value) && d.toISOString().slice(0, 10) !== value)) {
    throw ApiError.invalid(`${param} must be a date (YYYY-MM-DD) or an ISO 8601 timestamp`, param, { [param]: ['is not a valid date'] });
  }
  return d;
}
