/**
 * One writer at a time for a document that several actors write (an endpoint: the API's changes
 * and the worker's auto-disable; a subscription: the API's changes and its workflow's state).
 * FerretDB v1 runs an update as a read of the whole document and a write of the whole document,
 * with nothing held in between, so a write of one field landing with a write of another could
 * undo it (a rotated signing secret put back by an auto-disable). Each such document carries
 * `write_version`; a writer inserts the hold `<collection>:<id>#<version>` (an atomic insert on
 * `_id`), reads the document again, writes from that read with the version stepped, and lets the
 * hold go. A hold whose writer died is taken over once stale. Invoices are held the same way,
 * by their next allocation slot (services/billing/invoiceWrites.ts).
 */
import type { Model } from 'mongoose';
import { WriteHold } from '../../models/writeHold';
import { isDuplicateKey } from '../../models/errors';
import { ApiError } from '../../lib/errors';

/** Writers hold a document for milliseconds: tries with a short backoff before giving up. */
const HOLD_TRIES = 8;
const HOLD_BACKOFF_MS = 10;
/** A hold this old belongs to a writer that died. */
const STALE_HOLD_MS = 60_000;

export type HeldWrite<D> = { result: 'written'; before: D; after: D } | { result: 'unchanged'; before: D } | { result: 'missing' } | { result: 'busy' };

type Versioned = { _id: string; write_version?: number | null };

/** How a kind of document is held: which version a read shows, and the hold of that version. */
export interface Holds {
  /** The fields a version is read from (a projection). */
  versionFields: Record<string, 1>;
  versionOf(doc: object): number;
  /** Takes the hold of `version` (an atomic insert); null when another writer has it (one that died is settled first). */
  take(id: string, version: number): Promise<string | null>;
  release(hold: string): Promise<void>;
  /** What a write sets besides the change (the version stepped, where changes make the version). */
  stepped(version: number): Record<string, unknown>;
  /** A write's filter that matches the document only at `version`, where the version is a stored field. */
  atVersion?(version: number): Record<string, unknown>;
}

/** The default: the document's own `write_version`, held in `write_holds`. */
export function versionHolds(model: Model<any>): Holds {
  return {
    versionFields: { write_version: 1 },
    versionOf: (doc) => (doc as Versioned).write_version ?? 0,
    take: async (id, version) => {
      const hold = `${model.collection.collectionName}:${id}#${version}`;
      try {
        await WriteHold.collection.insertOne({ _id: hold, created_at: new Date() } as never);
        return hold;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        await WriteHold.collection.deleteOne({ _id: hold, created_at: { $lt: new Date(Date.now() - STALE_HOLD_MS) } } as never);
        return null;
      }
    },
    release: async (hold) => {
      await WriteHold.collection.deleteOne({ _id: hold } as never);
    },
    stepped: (version) => ({ write_version: version + 1 }),
    atVersion: (version) => ({ write_version: version }),
  };
}

/**
 * Writes `plan(document)` (a `$set`, or null for nothing to write) as the document's only writer;
 * `plan` sees the document as read under the hold and may throw to refuse. `busy` when other
 * writers kept it for every try. `seen`: the caller's own read, which names the version to hold
 * at first (one read less; a stale one is found under the hold). `seenWhole`: `seen` is the whole
 * document, so under its hold it is written from without a second read, by a write that matches
 * only at that version: no writer moves a version without its hold, so the write cannot meet
 * another, and a stale `seen` matches nothing and is read again.
 */
export async function writeHeld<D extends { _id: string }>(
  model: Model<any>,
  id: string,
  plan: (doc: D) => Record<string, unknown> | null,
  opts: { tries?: number; seen?: object | null; seenWhole?: boolean; holds?: Holds } = {},
): Promise<HeldWrite<D>> {
  const holds = opts.holds ?? versionHolds(model);
  const tries = opts.tries ?? HOLD_TRIES;
  for (let attempt = 0; attempt < tries; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, HOLD_BACKOFF_MS * 2 ** (attempt - 1)));
    const seen = attempt === 0 && opts.seen ? opts.seen : await model.collection.findOne({ _id: id } as never, { projection: holds.versionFields });
    if (!seen) return { result: 'missing' };
    const version = holds.versionOf(seen);
    // Only a stored version can be matched by the write (documents from before `write_version` have none).
    const atVersion = attempt === 0 && opts.seenWhole && holds.atVersion && typeof (seen as Versioned).write_version === 'number' ? holds.atVersion(version) : null;
    const hold = await holds.take(id, version);
    if (!hold) continue;
    try {
      const before = atVersion ? (seen as D) : ((await model.collection.findOne({ _id: id } as never)) as D | null);
      if (!before) return { result: 'missing' };
      // Another writer moved the version between the read and the hold: read again.
      if (holds.versionOf(before) !== version) continue;
      const set = plan(before);
      if (!set) return { result: 'unchanged', before };
      const stamp = model.schema.path('updated_at') ? { updated_at: new Date() } : {};
      const after = (await model.collection.findOneAndUpdate({ _id: id, ...atVersion } as never, { $set: { ...stamp, ...set, ...holds.stepped(version) } }, { returnDocument: 'after' })) as D | null;
      // Written from `seen` and matched nothing: moved on (or gone) since; the next try reads it.
      if (!after && atVersion) continue;
      return after ? { result: 'written', before, after } : { result: 'missing' };
    } finally {
      await holds.release(hold);
    }
  }
  return { result: 'busy' };
}

/**
 * An API write's answer: the document as written (or as it was, when nothing needed writing);
 * 404 once gone, 409 `resource_changed` while other writers kept it.
 */
export function heldForApi<D>(held: HeldWrite<D>, what: string, param: string): D {
  if (held.result === 'missing') throw ApiError.notFound(`${what} not found`, param);
  if (held.result === 'busy') throw ApiError.conflict('resource_changed', `The ${what.toLowerCase()} changed while updating; retry`, param);
  return held.result === 'written' ? held.after : held.before;
}
