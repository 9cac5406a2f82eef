-- GIN companions for FerretDB's indexes (FerretDB v1 PostgreSQL backend). Run by scripts/lib.sh on
-- every start of the embedded PostgreSQL, in FerretDB's database; idempotent.
--
-- FerretDB pushes an equality on a top-level scalar field down as `_jsonb->'f' @> '<json value>'`,
-- but its createIndex makes btree expression indexes `((_jsonb->'f'))`, which `@>` cannot use.
-- A GIN `jsonb_path_ops` index on the same expression can. FerretDB cannot create one itself, so
-- an event trigger adds one whenever FerretDB creates a btree index whose FIRST key is a top-level
-- field (the `_id_` index of every collection included: finds by _id are `@>` too), and drops it
-- again when the last btree index on that field goes (dropIndexes). One GIN per (table, field).
-- Names end in `_gin`; FerretDB's end in `_idx`, so FerretDB never picks one of ours. FerretDB's
-- btree indexes that are not unique serve none of its queries: each is swapped for an empty
-- placeholder of the same name, so that writes stop maintaining it.

SET client_min_messages = warning;

CREATE SCHEMA IF NOT EXISTS ferretdb$gin;  -- "$": no MongoDB database can have this name

-- For btree index `idx` that FerretDB made: the GIN index serving `@>` on its leading key, created
-- if missing; and, unless it is unique, the btree itself swapped for an empty placeholder.
CREATE OR REPLACE FUNCTION ferretdb$gin.ensure_for(idx oid) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  i record;
  expr text;
  placeholder text;
BEGIN
  SELECT ic.relname AS idxname, n.nspname, t.relname AS tblname, ix.indrelid, am.amname,
         ix.indisunique, ix.indpred IS NOT NULL AS partial
    INTO i
    FROM pg_index ix
    JOIN pg_class ic ON ic.oid = ix.indexrelid
    JOIN pg_am am ON am.oid = ic.relam
    JOIN pg_class t ON t.oid = ix.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
   WHERE ix.indexrelid = idx;
  IF NOT FOUND OR i.amname <> 'btree' OR i.idxname NOT LIKE '%\_idx' OR i.partial THEN
    RETURN;
  END IF;
  -- Leading key, as PostgreSQL prints it: ((_jsonb -> 'field'::text)). Nested paths (a.b) get no
  -- companion: FerretDB's pushdown of those (`#>`) matches no expression index.
  expr := pg_get_indexdef(idx, 1, false);
  IF expr ~ $re$^\(\(_jsonb -> '([^']|'')*'::text\)\)$$re$ AND NOT EXISTS (
    SELECT 1 FROM pg_index x
      JOIN pg_class xc ON xc.oid = x.indexrelid
      JOIN pg_am xam ON xam.oid = xc.relam
     WHERE x.indrelid = i.indrelid AND xam.amname = 'gin' AND pg_get_indexdef(x.indexrelid, 1, false) = expr
  ) THEN
    -- fastupdate=off: no pending list, so a lookup never has to scan one (measured: 2.5 ms instead
    -- of 0.1 ms with a full list); an insert costs ~15 us more on a low-cardinality field.
    EXECUTE format('CREATE INDEX %I ON %I.%I USING gin (%s jsonb_path_ops) WITH (fastupdate = off)',
                   regexp_replace(i.idxname, '_idx$', '_gin'), i.nspname, i.tblname, expr);
  END IF;
  -- A btree FerretDB made is read by none of its queries (every pushed-down filter is `@>`, every
  -- pushed-down order the record id), yet every insert and every update (a whole-document rewrite,
  -- never HOT) writes an entry into it. A unique one enforces its rule and stays. Any other is
  -- swapped for an index of the same name and leading key that holds no row (`WHERE false`), so
  -- FerretDB's dropIndexes (DROP INDEX <name>) still finds it and the drop trigger below still sees
  -- a btree leading with the field. Made under a temporary name first: the companion is never left
  -- without a btree on its field, which the drop trigger would take for dropIndexes.
  IF NOT i.indisunique THEN
    placeholder := 'ferretdb_gin_placeholder_' || idx::text;
    EXECUTE format('CREATE INDEX %I ON %I.%I (%s) WHERE false', placeholder, i.nspname, i.tblname, expr);
    EXECUTE format('DROP INDEX %I.%I', i.nspname, i.idxname);
    EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', i.nspname, placeholder, i.idxname);
  END IF;
END
$fn$;

CREATE OR REPLACE FUNCTION ferretdb$gin.on_create() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT objid FROM pg_event_trigger_ddl_commands()
            WHERE command_tag = 'CREATE INDEX' AND object_type = 'index'
  LOOP
    -- Our own CREATE INDEX (gin) fires this trigger again; ensure_for ignores non-btree indexes.
    PERFORM ferretdb$gin.ensure_for(r.objid);
  END LOOP;
END
$fn$;

-- dropIndexes: drop a companion once no btree index on its table leads with its field.
CREATE OR REPLACE FUNCTION ferretdb$gin.on_drop() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  g record;
BEGIN
  FOR g IN
    SELECT gx.indexrelid, gx.indrelid, n.nspname, gc.relname
      FROM pg_index gx
      JOIN pg_class gc ON gc.oid = gx.indexrelid
      JOIN pg_am gam ON gam.oid = gc.relam
      JOIN pg_namespace n ON n.oid = gc.relnamespace
     WHERE gam.amname = 'gin' AND gc.relname LIKE '%\_gin'
       AND n.nspname IN (SELECT schema_name FROM pg_event_trigger_dropped_objects() WHERE object_type = 'index')
  LOOP
    IF NOT EXISTS (
      SELECT 1 FROM pg_index bx
        JOIN pg_class bc ON bc.oid = bx.indexrelid
        JOIN pg_am bam ON bam.oid = bc.relam
       WHERE bx.indrelid = g.indrelid AND bam.amname = 'btree'
         AND pg_get_indexdef(bx.indexrelid, 1, false) = pg_get_indexdef(g.indexrelid, 1, false)
    ) THEN
      EXECUTE format('DROP INDEX %I.%I', g.nspname, g.relname);
    END IF;
  END LOOP;
END
$fn$;

DROP EVENT TRIGGER IF EXISTS ferretdb_gin_on_create;
CREATE EVENT TRIGGER ferretdb_gin_on_create ON ddl_command_end
  WHEN TAG IN ('CREATE INDEX')
  EXECUTE FUNCTION ferretdb$gin.on_create();

DROP EVENT TRIGGER IF EXISTS ferretdb_gin_on_drop;
CREATE EVENT TRIGGER ferretdb_gin_on_drop ON sql_drop
  WHEN TAG IN ('DROP INDEX')
  EXECUTE FUNCTION ferretdb$gin.on_drop();

-- Backfill: indexes created before this trigger existed (or while it was disabled).
DO $do$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT ix.indexrelid
             FROM pg_index ix
             JOIN pg_class t ON t.oid = ix.indrelid
             JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', 'ferretdb$gin')
  LOOP
    BEGIN
      PERFORM ferretdb$gin.ensure_for(r.indexrelid);
    EXCEPTION WHEN OTHERS THEN
      -- Dropped since the list was read (a collection or index dropped meanwhile by a FerretDB
      -- already serving, as when the supervisor restarts PostgreSQL under it): nothing to convert.
      IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = r.indexrelid) THEN
        RAISE;
      END IF;
    END;
  END LOOP;
  -- Companions made before fastupdate=off was chosen.
  FOR r IN SELECT n.nspname, c.relname
             FROM pg_class c
             JOIN pg_am am ON am.oid = c.relam
             JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE am.amname = 'gin' AND c.relname LIKE '%\_gin'
              AND NOT coalesce(c.reloptions @> ARRAY['fastupdate=off'], false)
  LOOP
    BEGIN
      EXECUTE format('ALTER INDEX %I.%I SET (fastupdate = off)', r.nspname, r.relname);
    EXCEPTION WHEN undefined_table THEN
      NULL;  -- dropped since the list was read, as above
    END;
  END LOOP;
END
$do$;
