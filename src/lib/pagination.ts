/** The one list shape: `{<key>: [...], pagination: {page, pages, count}}`, 25 per page. */
export const PAGE_SIZE = 25;

export interface Pagination {
  page: number;
  pages: number;
  count: number;
}

export function pagination(page: number, count: number): Pagination {
  return { page, pages: Math.ceil(count / PAGE_SIZE), count };
}

export function pageWindow(page: number): { skip: number; limit: number } {
  return { skip: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE };
}
