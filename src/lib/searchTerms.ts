/**
 * Search terms of a customer, for the console's search by name or email (pure).
 *
 * FerretDB v1 pushes down only an equality on a top-level field (no regex, range or sort), so a
 * search cannot scan names in the database. A customer instead stores `search_terms`: every
 * prefix (2 to 24 characters) of each word of its names and email, lowercased and without
 * accents, plus the whole email's prefixes. `{ list_scope, search_terms: term }` is then an
 * equality FerretDB hands to PostgreSQL (`@>` matches an array holding the value), served by the
 * field's GIN companion index: a search costs the matches, not the account's customers.
 */

/** Prefixes shorter than this are not stored: a one-letter search would match most customers. */
export const MIN_TERM = 2;
/** Longer query words are cut to this, and so are the stored prefixes. */
export const MAX_TERM = 24;

/** Lowercase, accents removed (NFKD, combining marks dropped): `José` and `jose` are one word. */
export function foldText(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/** The words of a text: runs of letters and digits, folded. */
export function wordsOf(s: string): string[] {
  return foldText(s).match(/[\p{L}\p{N}]+/gu) ?? [];
}

function prefixes(word: string): string[] {
  const out: string[] = [];
  for (let n = MIN_TERM; n <= Math.min(word.length, MAX_TERM); n++) out.push(word.slice(0, n));
  return out;
}

export interface Searchable {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
}

/** The terms a customer is found by. */
export function customerSearchTerms(c: Searchable): string[] {
  const words = [...wordsOf(c.first_name ?? ''), ...wordsOf(c.last_name ?? ''), ...wordsOf(c.email)];
  const email = foldText(c.email.trim());
  return [...new Set([...words.flatMap(prefixes), ...prefixes(email)])];
}

/**
 * A query as the term to look up (its longest word, cut to MAX_TERM) and a test of a candidate:
 * every word of the query starts a word of the customer's names or email, or the query starts
 * the email. Null when the query has no word of MIN_TERM characters.
 */
export function parseCustomerQuery(query: string): { term: string; matches: (c: Searchable) => boolean } | null {
  const qWords = wordsOf(query);
  const folded = foldText(query.trim());
  const longest = qWords.reduce((a, b) => (b.length > a.length ? b : a), '');
  if (longest.length < MIN_TERM) return null;
  const term = folded.includes('@') && folded.length <= MAX_TERM && !/\s/.test(folded) ? folded : longest.slice(0, MAX_TERM);
  return {
    term,
    matches: (c) => {
      const words = [...wordsOf(c.first_name ?? ''), ...wordsOf(c.last_name ?? ''), ...wordsOf(c.email)];
      return foldText(c.email).startsWith(folded) || qWords.every((q) => words.some((w) => w.startsWith(q)));
    },
  };
}
