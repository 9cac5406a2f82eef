/**
 * `model.create(fields)` without mongoose's save machinery: the document is cast, given its
 * defaults and timestamps, and validated as `create` does (no model has save hooks or async
 * validators), then inserted through the driver. A duplicate key or an invalid document throws
 * the same errors. The save path's hooks and promise chain cost more CPU than the insert's own
 * round trip on the hottest writes (docs/adr/0818-statements-per-operation.md).
 */
import type { Document, Model } from 'mongoose';

export async function insertNew(model: Model<any>, fields: Record<string, unknown>): Promise<Document> {
  const doc = new model(fields) as Document & { initializeTimestamps?: () => void };
  doc.initializeTimestamps?.();
  const invalid = doc.validateSync();
  if (invalid) throw invalid;
  await model.collection.insertOne(doc.toObject({ depopulate: true }) as never);
  doc.isNew = false;
  return doc;
}
