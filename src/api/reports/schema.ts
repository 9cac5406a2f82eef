import { compileQuery } from '../validation';

// Years 1000-2999: four digits the calendar code handles without JavaScript's two-digit-year rule.
const month = { type: 'string', pattern: '^[12][0-9]{3}-(0[1-9]|1[0-2])$', description: 'A month, `YYYY-MM`' };

/** `from`/`to` months; both optional (the 12 months ending with the current one). */
export const monthRangeQuery = compileQuery<{ from?: string; to?: string }>({
  type: 'object',
  properties: { from: month, to: month },
});

export const receivablesQuery = compileQuery<{ as_of?: string }>({
  type: 'object',
  properties: { as_of: { type: 'string', format: 'date', pattern: '^[12][0-9]{3}-[0-9]{2}-[0-9]{2}$', description: 'A day, `YYYY-MM-DD`; today (UTC) by default' } },
});
