/**
 * One writer at a time for a document that several actors write (an endpoint: the API's changes
 * and the worker's auto-disable; a subscription: the API's changes and its workflow's state).
 * FerretDB v1 runs an update as a read of the whole document and a write of the whole document,
 * with nothing held in between, so a write of one field landing with a write of another could
 * undo it (a rotated signing secret put back by an auto-disable). Each such document carries
 * `write_version`; a writer inserts the hold `<collection>:<id>#<version>` (an atomic insert on
 * `_id`), reads the document again, writes from that read with the version stepped, and lets the
 * hold go. A hold whose writer died is taken over once stale.
 */
import type { Model } from 'mongoose';
import { WriteHold } from '../models/writeHold';
import { isDuplicateKey } from '../models/errors';

/** Writers hold a document for milliseconds: tries with a short backoff before giving up. */
const HOLD_TRIES = 8;
const HOLD_BACKOFF_MS = 10;
/** A hold this old belongs to a writer that died. */
const STALE_HOLD_MS = 60_000;

export type HeldWrite<D> = { result: 'written'; before: D; after: D } | { result: 'unchanged'; before: D } | { result: 'missing' } | { result: 'busy' };

type Versioned = { _id: string; write_version?: number | null };

/**
 * Writes `plan(document)` (a `$set`, or null for nothing to write) as the document's only writer;
 * `plan` sees the document as read under the hold and may throw to refuse. `busy` when other
 * writers kept it for every try.
 */
export async function writeHeld<D extends Versioned>(
  model: Model<any>,
  id: string,
  plan: (doc: D) => Record<string, unknown> | null,
  opts: { tries?: number; seen?: Versioned | null } = {},
): Promise<HeldWrite<D>> {
  const tries = opts.tries ?? HOLD_TRIES;
  for (let attempt = 0; attempt < tries; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, HOLD_BACKOFF_MS * 2 ** (attempt - 1)));
    // The caller's own read names the version to hold at first (one read less); a stale one is found under the hold.
    const seen = attempt === 0 && opts.seen ? opts.seen : await model.collection.findOne({ _id: id } as never, { projection: { write_version: 1 } });
    if (!seen) return { result: 'missing' };
    const version = (seen as unknown as Versioned).write_version ?? 0;
    const holdId = `${model.collection.collectionName}:${id}#${version}`;
    try {
      await WriteHold.collection.insertOne({ _id: holdId, created_at: new Date() } as never);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await WriteHold.collection.deleteOne({ _id: holdId, created_at: { $lt: new Date(Date.now() - STALE_HOLD_MS) } } as never);
      continue;
    }
    try {
      const before = (await model.collection.findOne({ _id: id } as never)) as D | null;
      if (!before) return { result: 'missing' };
      // Another writer stepped the version between the read and the hold: read again.
      if ((before.write_version ?? 0) !== version) continue;
      const set = plan(before);
      if (!set) return { result: 'unchanged', before };
      const stamp = model.schema.path('updated_at') ? { updated_at: new Date() } : {};
      const after = (await model.collection.findOneAndUpdate({ _id: id } as never, { $set: { ...stamp, ...set, write_version: version + 1 } }, { returnDocument: 'after' })) as D | null;
      return after ? { result: 'written', before, after } : { result: 'missing' };
    } finally {
      await WriteHold.collection.deleteOne({ _id: holdId } as never);
    }
  }
  return { result: 'busy' };
}
