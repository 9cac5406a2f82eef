/** The one list shape: `{<key>: [...], pagination: {page, pages, count}}`, 25 per page. */
import { ApiError } from './errors';

export const PAGE_SIZE = 25;
/** The highest `page` accepted: 25 million rows deep, far past any real list; above it 422. */
export const MAX_PAGE = 1_000_000;

export interface Pagination {
  page: number;
  pages: number;
  count: number;
}

export function pagination(page: number, count: number): Pagination {
  return { page, pages: Math.ceil(count / PAGE_SIZE), count };
}

export function pageWindow(page: number): { skip: number; limit: number } {
  // Every list passes here, so a query schema without the cap cannot reach the database with Infinity.
  if (!Number.isInteger(page) || page < 1 || page > MAX_PAGE) {
    const message = `must be an integer from 1 to ${MAX_PAGE}`;
    throw ApiError.invalid(`page ${message}`, 'page', { page: [message] });
  }
  return { skip: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE };
}
