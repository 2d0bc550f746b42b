import type { Db } from "../db/database.js";
import { EventsRepository, type EventFilters, type EventRecord } from "../db/repositories/events.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import { findOwned } from "./ownership.js";

const NOT_FOUND = { code: "event_not_found", message: "No event with this id" };

/** The account's stored events, read back: a receiver that was down catches up from here. */
export class EventLog {
  private readonly events: EventsRepository;

  constructor(
    db: Db,
    private readonly deps: { cursors: CursorCodec },
  ) {
    this.events = new EventsRepository(db);
  }

  list(accountId: string, filters: EventFilters, query: ListQuery) {
    return listPage({
      codec: this.deps.cursors,
      list: "events",
      filters: { ...filters },
      query,
      fetch: (page) => this.events.page(accountId, filters, page),
      count: () => this.events.count(accountId, filters),
      present: (row: EventRecord) => row,
    });
  }

  async get(accountId: string, id: string): Promise<EventRecord> {
    return findOwned(await this.events.findById(id), accountId, NOT_FOUND);
  }
}
