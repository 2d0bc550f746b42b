/**
 * Cursor pagination. Every list of the API answers `{data, has_more, next_cursor, total}` and
 * takes the previous page's `next_cursor` as `cursor` (with the same filters and order: a
 * cursor is bound to them). A `PaginatedList` walks those pages for you:
 *
 *   for await (const call of client.calls.list({ status: "completed" })) { ... }  // every item
 *   for await (const page of client.calls.list({ limit: 100 }).pages()) { ... }   // page by page
 *   const first = await client.calls.list({ limit: 10 }).firstPage();            // one request
 *
 * Nothing is requested until you iterate; each iteration starts again from the first page.
 * Pages are fetched one at a time, as the loop asks for them (a `break` stops fetching).
 */

/** One page, as the API sends it. */
export interface ListPage<Item> {
  data: Item[];
  has_more: boolean;
  next_cursor: string | null;
  /** How many items match the filters, on every page. */
  total: number;
}

export type FetchPage<Item> = (cursor: string | undefined) => Promise<ListPage<Item>>;

export class PaginatedList<Item> implements AsyncIterable<Item> {
  constructor(private readonly fetchPage: FetchPage<Item>) {}

  /** The first page only (a single request). */
  firstPage(): Promise<ListPage<Item>> {
    return this.fetchPage(undefined);
  }

  /** Every page, following `next_cursor` while `has_more` is true. */
  async *pages(): AsyncGenerator<ListPage<Item>, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.has_more || page.next_cursor === null) return;
      // A server that handed the same cursor back would loop forever: stop loudly instead.
      if (page.next_cursor === cursor) throw new Error(`pagination: the API returned the cursor it was given (${cursor}); stopping`);
      cursor = page.next_cursor;
    }
  }

  /** Every item of every page, in the API's order. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item in an array (each page is a request: mind the size of what you list). */
  async toArray(): Promise<Item[]> {
    const items: Item[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
