import { Schema, model } from 'mongoose';

/**
 * Counters of bucketed lists (src/services/writes/listing.ts), every one read and written by `_id`
 * except the per-scope read of a list's bucket counts (`key` equality, pushed down):
 * - head `h|<collection>|<account>|<sandbox or ''>`: `seq` (last creation sequence number
 *   handed out), `size` (bucket size, fixed when the scope's first document is listed),
 *   `counted_through` (the highest bucket whose count is kept; pages count the ones above) and
 *   `key` (so that the read of a list's counts finds the head too);
 * - bucket `b|<collection>|<account>|<sandbox or ''>|<bucket>`: `key` (the same without `b|`
 *   and bucket), `bucket`, `count` (documents in it);
 * - `backfill|<collection>`: the start-up backfill of that collection is done.
 */
const listCounterSchema = new Schema(
  {
    _id: { type: String, required: true },
    key: { type: String },
    bucket: { type: Number },
    count: { type: Number },
    seq: { type: Number },
    size: { type: Number },
    counted_through: { type: Number },
  },
  { versionKey: false },
);
listCounterSchema.index({ key: 1 });

export interface ListCounterDoc {
  _id: string;
  key?: string;
  bucket?: number;
  count?: number;
  seq?: number;
  size?: number;
  counted_through?: number;
}
export const ListCounter = model('ListCounter', listCounterSchema, 'list_counters');

/** Fields of every bucketed (listed) document: `<account>|<sandbox or ''>` and its bucket. */
export const listSlotFields = {
  list_scope: { type: String },
  list_bucket: { type: Number },
} as const;

/** The indexes a bucket read uses (FerretDB pushes both equalities; each gets a GIN companion). */
export function indexListSlots(schema: Schema): void {
  schema.index({ list_scope: 1, list_bucket: 1 });
  schema.index({ list_bucket: 1 });
}
